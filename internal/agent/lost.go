package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
)

// CodeTurnLost is the error code of the event closing a turn whose replica
// stopped before it ended.
const CodeTurnLost = "TURN_LOST"

// IsEnd reports whether an encoded event is the last of its turn
// (message_end). Events written by [Encode] start with their type, so most
// are told apart without decoding the rest (a tool's result can be
// kilobytes).
func IsEnd(data []byte) bool {
	const typeKey = `{"type":"`
	if t, ok := bytes.CutPrefix(data, []byte(typeKey)); ok {
		if !bytes.HasPrefix(t, []byte(TypeMessageEnd+`"`)) {
			// Another type: decoding would only confirm it, unless the
			// object names a type twice, which Encode never writes.
			return false
		}
	}
	var head struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(data, &head) == nil && head.Type == string(TypeMessageEnd)
}

// CloseLost finishes the answer of a turn whose replica stopped before the
// turn ended, given the events its log holds (encoded, in order). It marks
// the answer in conversation conv incomplete with a [CodeTurnLost] error,
// keeping what the log holds of it, and returns the events that close the
// log (the error and message_end), for streams following the turn to end.
// It returns none when the log already ends with message_end (only the
// turn's row was not updated). f fences the answer's write: a closer that
// itself lost the turn writes nothing.
func (a *Agent) CloseLost(ctx context.Context, f store.Fence, conv string, logged []json.RawMessage) ([]Event, error) {
	var msgID string
	var answer []Event
	for i, data := range logged {
		dec, err := Decode(data)
		if err != nil {
			a.logger.WarnContext(ctx, "reading a lost turn's log", "conversation", conv, "event", i+1, "error", err)
			continue
		}
		switch dec := dec.(type) {
		case MessageStart:
			msgID = dec.MessageID
		case MessageEnd:
			return nil, nil
		default:
			answer = append(answer, dec)
		}
	}
	lost := ErrorEvent{Code: CodeTurnLost, Retryable: true,
		Message: "the server writing this answer stopped before it finished; what it wrote so far is kept"}
	var err error
	if msgID != "" {
		err = a.markLost(ctx, a.writes(f), conv, msgID, PartialAnswer(answer), lost)
	}
	return []Event{lost, MessageEnd{MessageID: msgID, StopReason: StopError}}, err
}

// markLost marks a lost turn's answer incomplete with its error. Its content
// becomes logged (the answer rebuilt from the turn's log) when that holds
// more than the answer saved (the agent saves only after each tool round, so
// text streamed since is only in the log); the saved content stays when it
// holds more (events the dead replica failed to log, or logged after its
// last save).
func (a *Agent) markLost(ctx context.Context, w messageWrites, conv, msgID string, logged []llm.Block, ev ErrorEvent) error {
	merr := &store.MessageError{Code: ev.Code, Message: ev.Message}
	c, err := a.cfg.Store.GetConversation(ctx, conv)
	if err != nil {
		return fmt.Errorf("agent: marking a lost turn's answer: %w", err)
	}
	content := json.RawMessage(`[]`) // content is an array, even when empty
	if len(logged) > 0 {
		enc, err := llm.MarshalBlocks(logged)
		if err != nil {
			a.logger.WarnContext(ctx, "encoding a lost turn's answer", "conversation", conv, "error", err)
			logged = nil
		} else {
			content = enc
		}
	}
	for _, m := range c.Messages {
		if m.ID != msgID {
			continue
		}
		var saved []llm.Block
		if json.Unmarshal(m.Content, &saved) == nil && covers(logged, saved) {
			m.Content = content
		}
		m.Incomplete = true
		if m.Error == nil {
			m.Error = merr
		}
		if err := w.UpdateMessage(ctx, m); err != nil {
			return fmt.Errorf("agent: marking a lost turn's answer: %w", err)
		}
		return nil
	}
	if _, err := w.AppendMessage(ctx, store.Message{ID: msgID, ConversationID: conv, Role: store.RoleAssistant,
		Content: content, Incomplete: true, Error: merr}); err != nil {
		return fmt.Errorf("agent: saving a lost turn's answer: %w", err)
	}
	return nil
}

// covers reports whether the answer rebuilt from a turn's log holds more
// than the saved one: both grow from the same start, so more tool results
// and text, and not less of either, means the log went further.
func covers(logged, saved []llm.Block) bool {
	size := func(bs []llm.Block) (results, text int) {
		for _, b := range bs {
			switch b.Type {
			case llm.BlockToolResult:
				results++
			case llm.BlockText:
				text += len(b.Text)
			}
		}
		return results, text
	}
	lr, lt := size(logged)
	sr, st := size(saved)
	return lr >= sr && lt >= st && (lr > sr || lt > st)
}
