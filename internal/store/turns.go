package store

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// ErrBusy reports that a conversation already has a running turn (whose
// lease has not expired), so another cannot start and it cannot be deleted.
var ErrBusy = errors.New("store: a turn is running in this conversation")

// TurnState is where a [Turn] is.
type TurnState string

// The states of a turn.
const (
	TurnRunning TurnState = "running"
	// TurnDone is a turn that ended by itself (answered or failed).
	TurnDone TurnState = "done"
	// TurnIncomplete is a turn that was cut short: stopped, canceled, or its
	// replica stopped renewing its lease.
	TurnIncomplete TurnState = "incomplete"
)

// Turn is one chat turn as the store tracks it across replicas: who runs it
// and until when its claim on the conversation holds.
type Turn struct {
	ID             string
	ConversationID string
	// Owner names the replica running the turn.
	Owner string
	State TurnState
	// LeaseUntil is when the claim lapses unless the owner renews it.
	LeaseUntil    time.Time
	StopRequested bool
	StartedAt     time.Time
	EndedAt       time.Time // zero while running
	// Generation is the claim's fencing token: 1 when the turn is started,
	// one more at every take-over. Writes made under a [Fence] of an older
	// generation are refused.
	Generation int64
}

// ErrFenced reports a write refused because the turn it was made for is no
// longer held under the writer's generation (another replica took it
// over), or no longer runs. [*FencedError] matches it.
var ErrFenced = errors.New("store: the turn was taken over; the write is refused")

// FencedError is the error of a write refused by its turn's fence.
type FencedError struct {
	TurnID     string
	Generation int64 // the writer's, which no longer holds the turn
}

func (e *FencedError) Error() string {
	return "store: turn " + e.TurnID + " is no longer held by generation " + strconv.FormatInt(e.Generation, 10) + "; the write is refused"
}

// Is makes errors.Is(err, ErrFenced) hold.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// Fence is the claim a turn's writer holds: the writes made through
// [Turns.Fenced] with it (turn events, messages, the turn's end, the
// conversation's title and an edit's truncation) take effect only while
// turn TurnID runs under Generation, checked in the write's own
// transaction; else they return [*FencedError]. The zero Fence guards
// nothing.
type Fence struct {
	TurnID     string
	Generation int64
}

// TurnWrites are the writes a chat turn makes to its conversation and its
// own log, all under one [Fence] (see [Turns.Fenced]). Each method is the
// store's method of the same name, fenced.
type TurnWrites interface {
	AppendMessage(ctx context.Context, m Message) (Message, error)
	UpdateMessage(ctx context.Context, m Message) error
	UpdateTitle(ctx context.Context, id, title string) error
	ReplaceTitle(ctx context.Context, id, from, to string) (bool, error)
	TruncateConversation(ctx context.Context, convID, fromID string) (int, error)
	AppendTurnEvents(ctx context.Context, turnID string, events []TurnEvent) error
	EndTurn(ctx context.Context, id, owner string, state TurnState) (bool, error)
}

// TurnEvent is one event of a turn's log: its JSON as streamed, numbered
// from 1 in the order the turn emitted it.
type TurnEvent struct {
	Seq  int64
	Data json.RawMessage
}

// MaxTurnEventBytes bounds one logged event (a tool result is already cut
// to 64 KiB by the agent; text deltas are small).
const MaxTurnEventBytes = 1 << 20

// TurnNoteKind is what a [TurnNote] tells.
type TurnNoteKind byte

// The kinds of turn notes.
const (
	// NoteEvent: the turn's log has a new event, Seq.
	NoteEvent TurnNoteKind = 'e'
	// NoteStop: someone asked the turn to stop.
	NoteStop TurnNoteKind = 's'
	// NoteEnd: the turn ended (or its lease was found expired).
	NoteEnd TurnNoteKind = 'x'
	// NoteResync: notes may have been missed (the listener reconnected);
	// every watcher should re-read what it follows. TurnID is empty.
	NoteResync TurnNoteKind = 'r'
)

// TurnNote is a change to a turn, delivered to every process watching the
// store ([Turns.WatchTurns]). Notes are wake-ups: the log and the turn row
// are the truth.
type TurnNote struct {
	Kind   TurnNoteKind
	TurnID string
	Seq    int64
}

// Turns coordinates chat turns between the processes sharing a store: the
// one-turn-per-conversation claim as a lease, stop requests, and each turn's
// event log with change notes.
type Turns interface {
	// StartTurn claims t.ConversationID for the new turn t (ID, Owner and
	// LeaseUntil set by the caller): [ErrBusy] if another turn runs there,
	// [ErrNotFound] if the conversation does not exist.
	StartTurn(ctx context.Context, t Turn) (Turn, error)
	// RenewTurns extends the leases of owner's running turns ids to until.
	// It returns, for each turn still running under owner, whether a stop
	// was requested; a turn missing from the answer is no longer owner's.
	RenewTurns(ctx context.Context, owner string, ids []string, until time.Time) (map[string]bool, error)
	// EndTurn ends owner's running turn id in state; false when it was not
	// running under owner any more (its lease expired and was taken).
	// Through [Turns.Fenced], a turn no longer held under the fence's
	// generation is false with a [*FencedError].
	EndTurn(ctx context.Context, id, owner string, state TurnState) (bool, error)
	// TakeOverTurns gives owner, with a lease until until and the next
	// generation, the running turns
	// whose lease ended before now (of conversationID only, when not ""),
	// and returns them: each lapsed turn goes to exactly one caller, which
	// closes what the turn left (its log, its answer) and then ends it with
	// EndTurn. The conversation stays claimed until then, so nothing of a
	// new turn lands before the lost turn's answer. The turns keep, which
	// the caller runs itself, are never taken: their lease lapsed only
	// because a renewal came late, and the turn is not lost.
	TakeOverTurns(ctx context.Context, now time.Time, conversationID, owner string, until time.Time, keep []string) ([]Turn, error)
	// GetTurn returns a turn, or [ErrNotFound].
	GetTurn(ctx context.Context, id string) (Turn, error)
	// RunningTurn returns the running turn of a conversation, or [ErrNotFound].
	RunningTurn(ctx context.Context, conversationID string) (Turn, error)
	// RequestStop asks a running turn's owner to stop it; false when it
	// was not running.
	RequestStop(ctx context.Context, id string) (bool, error)
	// AppendTurnEvents adds events to a turn's log in one transaction (their
	// Seq following the last one's); a seq already there is [ErrConflict],
	// and through [Turns.Fenced], a turn no longer held under the fence's
	// generation is a [*FencedError].
	AppendTurnEvents(ctx context.Context, turnID string, events []TurnEvent) error
	// TurnEvents returns up to limit events of a turn after seq after, in order.
	TurnEvents(ctx context.Context, turnID string, after int64, limit int) ([]TurnEvent, error)
	// DeleteEndedTurns deletes the turns (and their events) that ended
	// before before.
	DeleteEndedTurns(ctx context.Context, before time.Time) (int, error)
	// DeleteIdleConversation deletes a conversation unless a turn with a
	// live lease runs in it ([ErrBusy]).
	DeleteIdleConversation(ctx context.Context, id string, now time.Time) error
	// Fenced returns the store's writes made under f: a replica writes
	// for a turn only through the fence of its claim, so once another
	// replica took the turn over, nothing the stalled one writes lands.
	Fenced(f Fence) TurnWrites
	// WatchTurns calls fn with every note of every process sharing the
	// store until ctx ends; fn must not block for long.
	WatchTurns(ctx context.Context, fn func(TurnNote)) error
}
