package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"

	"github.com/google/uuid"
)

// CreateConversation saves a new conversation. An empty ID gets a random
// UUID; CreatedAt and UpdatedAt are set to now when zero. An ID already in
// use is [store.ErrConflict]. It returns the conversation as stored.
func (db *DB) CreateConversation(ctx context.Context, c store.Conversation) (store.Conversation, error) {
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	if len(c.Title) > store.MaxTitleBytes {
		return store.Conversation{}, fmt.Errorf("%w: title longer than %d bytes", store.ErrInvalid, store.MaxTitleBytes)
	}
	if err := validText("conversation", c.ID, c.Title); err != nil {
		return store.Conversation{}, err
	}
	c.CreatedAt = normTime(c.CreatedAt)
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	c.UpdatedAt = normTime(c.UpdatedAt)
	c.Messages = nil
	res, err := db.w.ExecContext(ctx, `INSERT INTO conversations (id, title, created_at, updated_at)
        VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.Title, db.d.time(c.CreatedAt), db.d.time(c.UpdatedAt))
	if err != nil {
		return store.Conversation{}, fmt.Errorf("store: create conversation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return store.Conversation{}, fmt.Errorf("store: create conversation: %w", err)
	} else if n == 0 {
		return store.Conversation{}, fmt.Errorf("store: conversation %q: %w", c.ID, store.ErrConflict)
	}
	return c, nil
}

// ListConversations lists conversations without their messages, the most
// recently updated first (a conversation moves up when a message is
// appended). opt.Query, when set, matches titles.
func (db *DB) ListConversations(ctx context.Context, opt store.ListOptions) (store.ConversationPage, error) {
	limit, offset := opt.Bounds()
	where, args := "", []any{}
	if opt.Query != "" {
		where = ` WHERE lower(title) LIKE $1 ESCAPE '\'`
		args = append(args, likePattern(opt.Query))
	}
	page := store.ConversationPage{Conversations: []store.Conversation{}}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM conversations`+where, args...).Scan(&page.Total); err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: list conversations: %w", err)
	}
	q := fmt.Sprintf(`SELECT id, title, created_at, updated_at FROM conversations%s
        ORDER BY updated_at DESC, id DESC LIMIT $%d OFFSET $%d`, where, len(args)+1, len(args)+2)
	rows, err := db.r.QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: list conversations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return store.ConversationPage{}, fmt.Errorf("store: list conversations: %w", err)
		}
		page.Conversations = append(page.Conversations, c)
	}
	if err := rows.Err(); err != nil {
		return store.ConversationPage{}, fmt.Errorf("store: list conversations: %w", err)
	}
	return page, nil
}

func scanConversation(sc interface{ Scan(...any) error }) (store.Conversation, error) {
	var c store.Conversation
	var created, updated dbTime
	err := sc.Scan(&c.ID, &c.Title, &created, &updated)
	c.CreatedAt, c.UpdatedAt = created.t, updated.t
	return c, err
}

// GetConversation returns a conversation with all its messages in the order
// they were appended, or [store.ErrNotFound].
//
// One statement, so the messages match the conversation row without a
// transaction: on PostgreSQL a read transaction was four round trips at the
// start of every turn. There concurrent reads share a statement too (see
// conversationReads).
func (db *DB) GetConversation(ctx context.Context, id string) (store.Conversation, error) {
	if db.reads != nil {
		return db.reads.get(ctx, id)
	}
	rows, err := db.queryRead(ctx, qGetConversation, id)
	if err != nil {
		return store.Conversation{}, fmt.Errorf("store: get conversation: %w", err)
	}
	convs, err := scanConversations(rows)
	if err != nil {
		return store.Conversation{}, err
	}
	c, ok := convs[id]
	if !ok {
		return store.Conversation{}, fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	}
	return *c, nil
}

// conversationColumns and conversationJoin make a query of conversations'
// rows each with each of its messages, in order, or once with NULL message
// columns when it has none.
const (
	conversationColumns = `SELECT c.id, c.title, c.created_at, c.updated_at, c.model,
    m.id, m.role, m.content, m.incomplete, m.input_tokens, m.output_tokens, m.created_at, m.error_code, m.error_message, m.context_tokens`
	conversationJoin = ` FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id`
)

// qGetConversation reads one conversation.
const qGetConversation = conversationColumns + conversationJoin + ` WHERE c.id = $1 ORDER BY m.seq`

// scanConversations reads the rows of a conversationColumns query, each
// conversation's in message order, and closes them.
func scanConversations(rows *sql.Rows) (map[string]*store.Conversation, error) {
	defer rows.Close()
	convs := map[string]*store.Conversation{}
	for rows.Next() {
		var c store.Conversation
		var created, updated dbTime
		var msgID sql.NullString
		var r joinedMessage
		if err := rows.Scan(&c.ID, &c.Title, &created, &updated, &c.Model,
			&msgID, &r.role, &r.content, &r.incomplete, &r.in, &r.out, &r.at, &r.errCode, &r.errMsg, &r.cx); err != nil {
			return nil, fmt.Errorf("store: get conversation: %w", err)
		}
		have := convs[c.ID]
		if have == nil {
			c.CreatedAt, c.UpdatedAt = created.t, updated.t
			c.Messages = []store.Message{}
			have = &c
			convs[c.ID] = have
		}
		if msgID.Valid { // a conversation without messages has one row of NULLs
			have.Messages = append(have.Messages, r.message(msgID.String, have.ID))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: get conversation: %w", err)
	}
	return convs, nil
}

// joinedMessage is a message's columns from qGetConversation's outer join,
// each of which may be NULL.
type joinedMessage struct {
	role            sql.NullString
	content         []byte
	incomplete      sql.NullBool
	in, out, cx     sql.NullInt64
	at              dbTime
	errCode, errMsg sql.NullString
}

func (r *joinedMessage) message(id, conv string) store.Message {
	m := store.Message{ID: id, ConversationID: conv, Role: store.Role(r.role.String), Content: json.RawMessage(r.content),
		Incomplete: r.incomplete.Bool, CreatedAt: r.at.t}
	if r.errCode.Valid {
		m.Error = &store.MessageError{Code: r.errCode.String, Message: r.errMsg.String}
	}
	if r.in.Valid || r.out.Valid {
		m.Usage = &store.Usage{InputTokens: int(r.in.Int64), OutputTokens: int(r.out.Int64), ContextTokens: int(r.cx.Int64)}
	}
	return m
}

// validMessage checks what the store can check of a message.
func validMessage(m store.Message) error {
	if err := validText("message", m.ID, m.ConversationID); err != nil {
		return err
	}
	if m.Role != store.RoleUser && m.Role != store.RoleAssistant {
		return fmt.Errorf("%w: message role %q (want user or assistant)", store.ErrInvalid, m.Role)
	}
	if len(m.Content) > store.MaxContentBytes {
		return fmt.Errorf("%w: message content larger than %d bytes", store.ErrInvalid, store.MaxContentBytes)
	}
	trimmed := bytes.TrimLeft(m.Content, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' || !json.Valid(m.Content) {
		return fmt.Errorf("%w: message content must be a JSON array of content blocks", store.ErrInvalid)
	}
	if err := jsonbSafe(m.Content); err != nil {
		return fmt.Errorf("%w: message content: %v", store.ErrInvalid, err)
	}
	if e := m.Error; e != nil {
		if e.Code == "" || len(e.Code) > store.MaxErrorCodeBytes {
			return fmt.Errorf("%w: message error code must be 1 to %d bytes", store.ErrInvalid, store.MaxErrorCodeBytes)
		}
		if len(e.Message) > store.MaxErrorMessageBytes {
			return fmt.Errorf("%w: message error longer than %d bytes", store.ErrInvalid, store.MaxErrorMessageBytes)
		}
		if err := validText("message error", e.Code, e.Message); err != nil {
			return err
		}
	}
	return nil
}

// errorArgs returns a message error's columns, NULL when there is none.
func errorArgs(e *store.MessageError) (code, msg any) {
	if e == nil {
		return nil, nil
	}
	return e.Code, e.Message
}

// jsonbSafe reports valid JSON that PostgreSQL's JSONB would still refuse:
// invalid UTF-8, the escaped NUL character and unpaired surrogate escapes.
// Both engines refuse it, so that they behave alike.
func jsonbSafe(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("invalid UTF-8")
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // b[i] is the escaped character; valid JSON has one
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r, ok := hex4(b[i+1:])
		if !ok {
			return errors.New("bad \\u escape")
		}
		i += 4
		switch {
		case r == 0:
			return errors.New("\\u0000 is not allowed")
		case utf16.IsSurrogate(r) && r < 0xDC00:
			// A high surrogate must be followed by an escaped low one.
			if i+2 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return errors.New("unpaired surrogate escape")
			}
			lo, ok := hex4(b[i+3:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return errors.New("unpaired surrogate escape")
			}
			i += 6
		case utf16.IsSurrogate(r):
			return errors.New("unpaired surrogate escape")
		}
	}
	return nil
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func usageArgs(u *store.Usage) (in, out, context any) {
	if u == nil {
		return nil, nil, nil
	}
	if u.ContextTokens <= 0 {
		return u.InputTokens, u.OutputTokens, nil
	}
	return u.InputTokens, u.OutputTokens, u.ContextTokens
}

// AppendMessage adds a message at the end of its conversation and marks the
// conversation updated. An empty ID gets a random UUID and a zero CreatedAt
// becomes now. It returns the message as stored; a missing conversation is
// [store.ErrNotFound], an ID in use [store.ErrConflict]. Once it returns nil the message
// is durable.
func (db *DB) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	return db.appendMessage(ctx, nil, m)
}

// appendMessage is AppendMessage under fence, when not nil.
func (db *DB) appendMessage(ctx context.Context, fence *store.Fence, m store.Message) (store.Message, error) {
	if err := validMessage(m); err != nil {
		return store.Message{}, err
	}
	if m.ID == "" {
		m.ID = uuid.NewString()
	}
	m.CreatedAt = normTime(m.CreatedAt)
	var err error
	if db.messages != nil {
		err = db.messages.submit(ctx, m, fencePtr(fence, ""))
	} else {
		err = db.appends.do(ctx, m, fencePtr(fence, ""))
	}
	if err != nil {
		return store.Message{}, err
	}
	return m, nil
}

// Statements of appending and updating messages (prepared on SQLite).
const (
	qTouchConversation = `UPDATE conversations SET updated_at = $2 WHERE id = $1`
	qInsertMessage     = `INSERT INTO messages
        (id, conversation_id, role, content, incomplete, input_tokens, output_tokens, created_at, error_code, error_message, context_tokens)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`
	qFindMessage   = `SELECT seq, conversation_id FROM messages WHERE id = $1`
	qUpdateMessage = `UPDATE messages SET role = $2, content = $3, incomplete = $4,
        input_tokens = $5, output_tokens = $6, error_code = $7, error_message = $8, context_tokens = $9
        WHERE seq = $1`
	// A message's full-text entry on SQLite (message seq $1, content $2):
	// the text of its "text" blocks, cut at 65,536 characters, as
	// migration 0004 defines it. Written here, not by a trigger: see
	// migration 0012. The message's statements avoid RETURNING for the
	// same reason: SQLite opens a statement savepoint for it.
	qIndexMessage = `INSERT INTO message_fts (rowid, body) VALUES ($1, (
        SELECT substr(coalesce(group_concat(json_extract(b.value, '$.text'), char(10)), ''), 1, 65536)
        FROM json_each($2) AS b
        WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'text'))`
	qUnindexMessage = `DELETE FROM message_fts WHERE rowid = $1`
)

// appendInTx inserts a message and touches its conversation within tx
// (SQLite).
func (db *DB) appendInTx(ctx context.Context, tx *sql.Tx, m store.Message) error {
	in, out, cx := usageArgs(m.Usage)
	ec, em := errorArgs(m.Error)
	// Updating the conversation first checks that it exists.
	res, err := db.execTx(ctx, tx, qTouchConversation, m.ConversationID, db.d.time(now()))
	if err != nil {
		return fmt.Errorf("store: append message: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: append message: %w", err)
	} else if n == 0 {
		return fmt.Errorf("store: conversation %q: %w", m.ConversationID, store.ErrNotFound)
	}
	content := string(m.Content)
	res, err = db.execTx(ctx, tx, qInsertMessage,
		m.ID, m.ConversationID, string(m.Role), content, m.Incomplete, in, out, db.d.time(m.CreatedAt), ec, em, cx)
	if err != nil {
		return fmt.Errorf("store: append message: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: append message: %w", err)
	} else if n == 0 {
		return fmt.Errorf("store: message %q: %w", m.ID, store.ErrConflict)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("store: append message: %w", err)
	}
	if _, err := db.execTx(ctx, tx, qIndexMessage, seq, content); err != nil {
		return fmt.Errorf("store: append message: indexing it for search: %w", err)
	}
	return nil
}

// UpdateMessage replaces a message's content, Incomplete flag, error and usage,
// keeping its place and CreatedAt: for saving an assistant message as it
// grows. A missing message is [store.ErrNotFound]; m.ConversationID is ignored.
func (db *DB) UpdateMessage(ctx context.Context, m store.Message) error {
	return db.updateMessage(ctx, nil, m)
}

// updateMessage is UpdateMessage under f, when not nil.
func (db *DB) updateMessage(ctx context.Context, f *store.Fence, m store.Message) error {
	if err := validMessage(m); err != nil {
		return err
	}
	fence, fenced := fenceOf(f, "")
	if db.d.name != store.EnginePostgres {
		// Committed with other turns' writes (see appender): a turn saves
		// its answer after every model call, and on SQLite each commit
		// waited for the one writer on its own.
		return db.appends.submit(ctx, "update message", false, fencePtr(f, ""), func(ctx context.Context, tx *sql.Tx) error {
			return db.updateInTx(ctx, tx, m)
		})
	}
	// On PostgreSQL one statement: the fence (when there is one), the
	// update and the conversation's touch, in one round trip and commit.
	q, args := qUpdateMessagePostgres, []any{m.ID, string(m.Role), string(m.Content), m.Incomplete}
	in, out, cx := usageArgs(m.Usage)
	ec, em := errorArgs(m.Error)
	args = append(args, in, out, ec, em, cx, db.d.time(now()))
	if fenced {
		q, args = qUpdateMessageFencedPostgres, append(args, fence.TurnID, fence.Generation)
	}
	var held, updated bool
	if err := db.w.QueryRowContext(ctx, q, args...).Scan(&held, &updated); err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	if !held {
		return &store.FencedError{TurnID: fence.TurnID, Generation: fence.Generation}
	}
	if !updated {
		return fmt.Errorf("store: message %q: %w", m.ID, store.ErrNotFound)
	}
	return nil
}

// UpdateMessage's one statement on PostgreSQL: f holds a row while the
// write may go (the fenced form locks the turn's row FOR SHARE until the
// statement commits, so a take-over cannot commit between the check and the
// write); the answer tells a fenced write (held false) from a missing
// message (updated false). The turn's row is locked before any other: the
// message's update waits on f, the conversation's on the message's.
const (
	qUpdateMessageTail = `,
    upd AS (UPDATE messages SET role = $2, content = $3, incomplete = $4,
        input_tokens = $5, output_tokens = $6, error_code = $7, error_message = $8, context_tokens = $9
        WHERE id = $1 AND EXISTS (SELECT 1 FROM f) RETURNING conversation_id),
    touch AS (UPDATE conversations SET updated_at = $10 WHERE id IN (SELECT conversation_id FROM upd))
    SELECT EXISTS (SELECT 1 FROM f), EXISTS (SELECT 1 FROM upd)`
	qUpdateMessagePostgres       = `WITH f AS (SELECT 1)` + qUpdateMessageTail
	qUpdateMessageFencedPostgres = `WITH f AS (SELECT 1 FROM turns
        WHERE id = $11 AND generation = $12 AND state = 'running' FOR SHARE)` + qUpdateMessageTail
)

func (db *DB) updateInTx(ctx context.Context, tx *sql.Tx, m store.Message) error {
	in, out, cx := usageArgs(m.Usage)
	ec, em := errorArgs(m.Error)
	content := string(m.Content)
	var conv string
	var seq int64
	err := db.queryRowTx(ctx, tx, qFindMessage, m.ID).Scan(&seq, &conv)
	if err == sql.ErrNoRows {
		return fmt.Errorf("store: message %q: %w", m.ID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	if _, err := db.execTx(ctx, tx, qUpdateMessage,
		seq, string(m.Role), content, m.Incomplete, in, out, ec, em, cx); err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	if _, err := db.execTx(ctx, tx, qUnindexMessage, seq); err != nil {
		return fmt.Errorf("store: update message: indexing it for search: %w", err)
	}
	if _, err := db.execTx(ctx, tx, qIndexMessage, seq, content); err != nil {
		return fmt.Errorf("store: update message: indexing it for search: %w", err)
	}
	if _, err := db.execTx(ctx, tx, qTouchConversation, conv, db.d.time(now())); err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	return nil
}

// UpdateTitle renames a conversation, or returns [store.ErrNotFound]. It does not
// move the conversation up the list. Under a fence (see [DB.Fenced]) it
// renames only while the fence holds, or returns a [store.FencedError].
func (db *DB) UpdateTitle(ctx context.Context, id, title string) error {
	_, err := db.setTitle(ctx, nil, id, nil, title)
	return err
}

// updateTitle is UpdateTitle under fence, when not nil.
func (db *DB) updateTitle(ctx context.Context, fence *store.Fence, id, title string) error {
	_, err := db.setTitle(ctx, fence, id, nil, title)
	return err
}

// ReplaceTitle sets a conversation's title to to only if it is still from,
// and reports whether it did: the title a model writes for a conversation
// replaces the one its first message gave it, never one a person chose in
// the meantime. An unknown conversation is [store.ErrNotFound].
func (db *DB) ReplaceTitle(ctx context.Context, id, from, to string) (bool, error) {
	return db.setTitle(ctx, nil, id, &from, to)
}

// replaceTitle is ReplaceTitle under fence, when not nil.
func (db *DB) replaceTitle(ctx context.Context, fence *store.Fence, id, from, to string) (bool, error) {
	return db.setTitle(ctx, fence, id, &from, to)
}

// setTitle writes title, under fence when not nil, and when from is not nil
// only over the title *from. It reports whether the title was written.
func (db *DB) setTitle(ctx context.Context, fence *store.Fence, id string, from *string, title string) (bool, error) {
	if len(title) > store.MaxTitleBytes {
		return false, fmt.Errorf("%w: title longer than %d bytes", store.ErrInvalid, store.MaxTitleBytes)
	}
	if err := validText("title", title); err != nil {
		return false, err
	}
	q, args := `UPDATE conversations SET title = $2 WHERE id = $1`, []any{id, title}
	if from != nil {
		q, args = q+` AND title = $3`, append(args, *from)
	}
	f, ok := fenceOf(fence, "")
	if !ok {
		return db.titleWritten(ctx, db.w, q, args, id)
	}
	// A turn names its conversation: not once a replica that stalled past
	// its lease has lost the turn.
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: update title: %w", err)
	}
	defer rollback(tx)
	if err := db.checkFence(ctx, tx, f); err != nil {
		return false, err
	}
	done, err := db.titleWritten(ctx, tx, q, args, id)
	if err != nil || !done {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: update title: %w", err)
	}
	return true, nil
}

// titleExecer is what a title is written through: the writer pool or a
// transaction.
type titleExecer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// titleWritten runs the title update q and reports whether it changed a
// row; when it did not, it tells a conversation that is gone
// ([store.ErrNotFound]) from one whose title was no longer the one to
// replace (false, nil).
func (db *DB) titleWritten(ctx context.Context, x titleExecer, q string, args []any, id string) (bool, error) {
	res, err := x.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("store: update title: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: update title: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	var one int
	switch err := x.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE id = $1`, id).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	case err != nil:
		return false, fmt.Errorf("store: update title: %w", err)
	}
	return false, nil
}

// RenameConversation renames a conversation and returns it without its
// messages, or [store.ErrNotFound]. Like UpdateTitle it does not move the
// conversation up the list; the title is stored as given (callers trim).
func (db *DB) RenameConversation(ctx context.Context, id, title string) (store.Conversation, error) {
	if len(title) > store.MaxTitleBytes {
		return store.Conversation{}, fmt.Errorf("%w: title longer than %d bytes", store.ErrInvalid, store.MaxTitleBytes)
	}
	if err := validText("title", title); err != nil {
		return store.Conversation{}, err
	}
	c, err := scanConversation(db.w.QueryRowContext(ctx, `UPDATE conversations SET title = $2 WHERE id = $1
        RETURNING id, title, created_at, updated_at`, id, title))
	if err == sql.ErrNoRows {
		return store.Conversation{}, fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Conversation{}, fmt.Errorf("store: rename conversation: %w", err)
	}
	return c, nil
}

// DeleteConversation deletes a conversation and its messages, or returns
// [store.ErrNotFound].
func (db *DB) DeleteConversation(ctx context.Context, id string) error {
	res, err := db.w.ExecContext(ctx, db.qDeleteConversation(""), id)
	return affectedOne(res, err, "delete conversation", id)
}

func affectedOne(res sql.Result, err error, op, id string) error {
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("store: conversation %q: %w", id, store.ErrNotFound)
	}
	return nil
}
