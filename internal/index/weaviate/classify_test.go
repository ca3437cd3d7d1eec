package weaviate

import (
	"errors"
	"testing"
)

// A node's answer that says another node may do better is ErrUnavailable, so
// that do and searchNodes ask the next node; anything else is the caller's.
func TestBatchErrorClassifies(t *testing.T) {
	for msg, transient := range map[string]bool{
		`status code: 422, error: {"error":[{"message":"no graphql provider present, this is most likely because no schema is present. Import a schema first!"}]}`: true,
		"cannot achieve consistency level QUORUM: read error":      true,
		"msg:repair error: connection refused":                     true,
		`invalid 'where' filter: no such prop with name 'nothing'`: false,
		"class ToolportTrack does not exist":                       false,
	} {
		if got := errors.Is(batchError("search", msg), ErrUnavailable); got != transient {
			t.Errorf("batchError(%q) unavailable = %v, want %v", msg, got, transient)
		}
	}
}
