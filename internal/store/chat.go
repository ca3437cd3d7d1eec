package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Role is who wrote a message.
type Role string

// The roles a message can have. Tool results travel inside messages as
// content blocks, as in the Anthropic format, so there is no "tool" role.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// MaxContentBytes bounds one message's content. Tool results can be large
// (a page of fetched text), but a message is not a file store.
const MaxContentBytes = 16 << 20

// MaxTitleBytes bounds a conversation title.
const MaxTitleBytes = 4096

// MaxModelBytes bounds a conversation's model name.
const MaxModelBytes = 256

// Bounds of a [MessageError].
const (
	MaxErrorCodeBytes    = 64
	MaxErrorMessageBytes = 4096
)

// Conversation is a chat conversation. Messages is filled only by
// [Conversations.GetConversation].
type Conversation struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Model is the model chosen for the conversation, as the server names
	// it ("anthropic:claude-sonnet-4-5"); "" means the server's default. It
	// is filled only by [Conversations.GetConversation].
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	// Snippet is filled only by [Conversations.SearchConversations]: a
	// piece of the first message whose text matched, on one line, around
	// the first word that matched ("" when only the title matched).
	Snippet string `json:"snippet,omitempty"`
}

// Message is one message of a conversation.
type Message struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversationId"`
	Role           Role   `json:"role"`
	// Content is the JSON array of content blocks (text, tool_use,
	// tool_result), stored as given: the store checks that it is a JSON
	// array and nothing more. PostgreSQL keeps it as JSONB, so what comes
	// back is equal as JSON but may differ in whitespace and key order.
	Content json.RawMessage `json:"content"`
	// Incomplete marks a message cut short: the client went away or the
	// model failed mid-stream, and this is what was produced until then.
	Incomplete bool `json:"incomplete,omitempty"`
	// Error is the failure that ended the turn, as the client was shown it;
	// nil when the turn did not fail. It is kept apart from Content so that
	// it is never replayed to the model as part of the conversation.
	Error     *MessageError `json:"error,omitempty"`
	Usage     *Usage        `json:"usage,omitempty"`
	CreatedAt time.Time     `json:"createdAt"`
}

// MessageError is a failed turn's error: a machine-readable code (such as
// MODEL_ERROR) and a message safe to show to users. Neither may carry
// secrets; the store keeps them as given.
type MessageError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Usage is the model's token count for the turn that produced a message.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// ContextTokens is how full the model's context window was when the
	// turn ended: the input and output tokens of its last model call. 0
	// when unknown.
	ContextTokens int `json:"contextTokens,omitempty"`
}

// ConversationPage is one page of conversations.
type ConversationPage struct {
	Conversations []Conversation `json:"conversations"`
	Total         int            `json:"total"`
}

// Bounds of a conversation search query ([Conversations.SearchConversations]).
const (
	MaxSearchQueryBytes = 256
	MaxSearchTerms      = 8
)

// ErrTooSlow is the error of a query the store cut off at its time bound
// ([Conversations.SearchConversations]); errors.As finds a [*TimeoutError].
var ErrTooSlow = errors.New("store: the query took too long")

// TimeoutError is a query stopped at its time bound: a search whose words
// match too much to be answered in time. Retrying it as it is will not help.
type TimeoutError struct {
	Op    string        // what was cut off, "search conversations"
	Limit time.Duration // the bound it ran into
	Err   error         // the engine's error, for the log
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("store: %s took longer than %v: %v", e.Op, e.Limit, e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTooSlow) hold.
func (e *TimeoutError) Is(target error) bool { return target == ErrTooSlow }
