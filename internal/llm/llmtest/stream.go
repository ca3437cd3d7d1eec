package llmtest

import (
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// Events reads a whole stream and closes it.
func Events(t *testing.T, s *llm.Stream) ([]llm.Event, error) {
	t.Helper()
	defer s.Close()
	var evs []llm.Event
	for s.Next() {
		evs = append(evs, s.Event())
	}
	return evs, s.Err()
}

// CheckOrder asserts the stream contract: each call's start precedes its
// completion, Done is last and unique.
func CheckOrder(t *testing.T, evs []llm.Event) {
	t.Helper()
	started := map[string]bool{}
	for i, ev := range evs {
		switch ev.Type {
		case llm.EventToolCallStart:
			started[ev.ToolCall.ID] = true
		case llm.EventToolCall:
			if !started[ev.ToolCall.ID] {
				t.Errorf("event %d: tool call %s completed before it started", i, ev.ToolCall.ID)
			}
		case llm.EventDone:
			if i != len(evs)-1 {
				t.Errorf("event %d: Done is not last (%d events)", i, len(evs))
			}
		}
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone {
		t.Errorf("stream did not end with Done")
	}
}
