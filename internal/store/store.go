// Package store holds what Toolport persists and the interfaces of the stores
// that persist it: chat conversations, the user's music library and the
// track index (metadata and embeddings for semantic search).
//
// It imports no database driver, so that the packages that use a store (the
// agent, the chat server, the music pack) depend on these types and small
// interfaces only. The implementation, on SQLite or PostgreSQL, is package
// [github.com/toolport/toolport/internal/store/sqlstore]; it returns the
// errors below, wrapped, so test with [errors.Is].
package store

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// Sentinel errors. Methods wrap them, so test with [errors.Is].
var (
	// ErrNotFound reports that the conversation, message or record asked for
	// does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict reports that a record with the same id already exists.
	ErrConflict = errors.New("store: already exists")
	// ErrInvalid reports an argument the store refuses to save, such as an
	// unknown message role or content that is not a JSON array.
	ErrInvalid = errors.New("store: invalid argument")
)

// Engine names, as [Store.Engine] reports them.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// DefaultPath returns where the SQLite database lives when no DSN is given:
// $XDG_DATA_HOME/toolport/toolport.db, or ~/.local/share/toolport/toolport.db
// when XDG_DATA_HOME is unset or not absolute (as the XDG spec requires).
// getenv and home are parameters so that the CLI can show the path and tests
// can pin it.
func DefaultPath(getenv func(string) string, home string) string {
	if dir := getenv("XDG_DATA_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolport", "toolport.db")
	}
	return filepath.Join(home, ".local", "share", "toolport", "toolport.db")
}

// Conversations stores chat conversations and their messages: what the
// agent and the chat server use.
type Conversations interface {
	// CreateConversation saves a new conversation (an empty ID gets a
	// random one) and returns it as stored; an ID in use is [ErrConflict].
	CreateConversation(ctx context.Context, c Conversation) (Conversation, error)
	// ListConversations lists conversations without their messages, the
	// most recently updated first.
	ListConversations(ctx context.Context, opt ListOptions) (ConversationPage, error)
	// GetConversation returns a conversation with its messages in order,
	// or [ErrNotFound].
	GetConversation(ctx context.Context, id string) (Conversation, error)
	// AppendMessage adds a message at the end of its conversation; once it
	// returns nil the message is durable.
	// With a [Fence] in ctx it is made only while that turn runs under
	// the fence's generation, else it is a [*FencedError]; so are
	// UpdateMessage, UpdateTitle and TruncateConversation.
	AppendMessage(ctx context.Context, m Message) (Message, error)
	// UpdateMessage replaces a message's content, Incomplete flag and usage.
	UpdateMessage(ctx context.Context, m Message) error
	// UpdateTitle renames a conversation (a turn naming it), or returns
	// [ErrNotFound].
	UpdateTitle(ctx context.Context, id, title string) error
	// RenameConversation renames a conversation and returns it, without
	// its messages, or [ErrNotFound].
	RenameConversation(ctx context.Context, id, title string) (Conversation, error)
	// SearchConversations lists the conversations whose title or message
	// text has every word of query as a word prefix (case-insensitive, no
	// stemming), the most recently updated first, paged like
	// ListConversations (opt.Query is ignored). Message text is the text
	// blocks of the content: tool calls and tool results are not searched.
	// A query with no letter or digit, or over the bounds, is [ErrInvalid].
	SearchConversations(ctx context.Context, query string, opt ListOptions) (ConversationPage, error)
	// DeleteConversation deletes a conversation and its messages.
	DeleteConversation(ctx context.Context, id string) error
	// SetConversationModel sets the model a conversation answers with
	// ("" for the default), or returns [ErrNotFound].
	SetConversationModel(ctx context.Context, id, model string) error
	// TruncateConversation deletes a message and every later one of its
	// conversation (a regenerated or edited turn replaces them) and returns
	// how many went; an unknown conversation or message is [ErrNotFound].
	TruncateConversation(ctx context.Context, convID, fromID string) (int, error)
}

// Library stores the user's music library: tracks and albums.
type Library interface {
	AddTracks(ctx context.Context, tracks []Track) (added int, err error)
	RemoveTracks(ctx context.Context, ids []string) (removed int, err error)
	RemoveAlbums(ctx context.Context, tidalIDs []string) (removed int, err error)
	ListTracks(ctx context.Context, opt ListOptions) (TrackPage, error)
	// LibraryStatus looks up many tracks at once, for inLibrary flags.
	LibraryStatus(ctx context.Context, isrcs, tidalIDs []string) (InLibrary, error)
	AlbumsInLibrary(ctx context.Context, tidalIDs []string) (map[string]bool, error)
	GetTrack(ctx context.Context, tidalID string) (Track, error)
	AddAlbums(ctx context.Context, albums []Album) (added int, err error)
	ListAlbums(ctx context.Context, opt ListOptions) (AlbumPage, error)
}

// Index stores the track index: one record per ISRC with its embedding.
type Index interface {
	// UpsertIndex writes records by ISRC in one transaction.
	UpsertIndex(ctx context.Context, recs []IndexRecord) error
	// SetEmbeddings replaces the embeddings of records already stored.
	SetEmbeddings(ctx context.Context, embs []Embedding) (int, error)
	// GetIndex returns the records of isrcs, in the order asked, with their
	// embeddings; ISRCs not in the index are left out.
	GetIndex(ctx context.Context, isrcs []string) ([]IndexRecord, error)
	// GetIndexContent is GetIndex without the embeddings (Embedding nil).
	GetIndexContent(ctx context.Context, isrcs []string) ([]IndexRecord, error)
	// IndexFeatures returns the audio features of those of isrcs that have
	// them, by ISRC.
	IndexFeatures(ctx context.Context, isrcs []string) (map[string]*AudioFeatures, error)
	// IndexStates reports content hashes and embedders without content.
	IndexStates(ctx context.Context, isrcs []string) (map[string]IndexState, error)
	// EachIndexRecord streams every record in ISRC order.
	EachIndexRecord(ctx context.Context, fn func(IndexRecord) error) error
	// IndexVersion is a cheap fingerprint that changes on every write.
	IndexVersion(ctx context.Context) (IndexVersion, error)
	// EachIndexRecordSince streams the records written after since.
	EachIndexRecordSince(ctx context.Context, since time.Time, fn func(IndexRecord) error) error
	IndexStatus(ctx context.Context) (IndexStatus, error)
	DeleteIndex(ctx context.Context, isrcs []string) (int, error)
}

// Store is all of it, with what a process needs to report on and release the
// connection: what `toolport serve` opens once and hands to every part.
type Store interface {
	Conversations
	Library
	Index
	// Engine names the engine: [EngineSQLite] or [EnginePostgres].
	Engine() string
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	Close() error
}
