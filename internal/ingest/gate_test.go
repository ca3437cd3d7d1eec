package ingest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

// TestTransientIsTheContractsRule: one rule for every upstream.
func TestTransientIsTheContractsRule(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		retry bool
		after time.Duration
	}{
		{"lrclib 429 with Retry-After", &lrclib.Error{StatusCode: 429, RetryAfter: 3 * time.Second}, true, 3 * time.Second},
		{"lrclib 502", &lrclib.Error{StatusCode: 502}, true, 0},
		{"lrclib 500", &lrclib.Error{StatusCode: 500}, false, 0},
		{"lrclib 404", fmt.Errorf("wrapped: %w", &lrclib.Error{StatusCode: 404}), false, 0},
		{"reccobeats 503", &reccobeats.Error{StatusCode: 503}, true, 0},
		{"reccobeats 504", &reccobeats.Error{StatusCode: 504}, true, 0},
		{"reccobeats 400", &reccobeats.Error{StatusCode: 400}, false, 0},
		{"musixmatch 429 in the envelope", &MusixmatchError{StatusCode: 429}, true, 0},
		{"musixmatch 401", &MusixmatchError{StatusCode: 401}, false, 0},
		{"model 529 overloaded", &llm.Error{Code: llm.CodeOverloaded, Status: 529}, false, 0},
		{"model 503", &llm.Error{Code: llm.CodeOverloaded, Status: 503, RetryAfter: time.Second}, true, time.Second},
		{"model network", &llm.Error{Code: llm.CodeNetwork}, true, 0},
		{"model bad response", &llm.Error{Code: llm.CodeBadResponse}, false, 0},
		{"connection refused", fmt.Errorf("lrclib: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true, 0},
		{"attempt timeout", fmt.Errorf("x: %w", errAttemptTimeout), true, 0},
		{"malformed body", &lrclib.ParseError{Err: errors.New("unexpected end")}, false, 0},
	}
	for _, tt := range tests {
		retry, after := transient(tt.err)
		if retry != tt.retry || after != tt.after {
			t.Errorf("%s: transient = %v, %s; want %v, %s", tt.name, retry, after, tt.retry, tt.after)
		}
	}
}

func TestGateRetriesThenGivesUp(t *testing.T) {
	g := newGate("test", Limit{Concurrency: 1}, Retry{Attempts: 3, BaseDelay: time.Millisecond, DisableJitter: true}, nil)
	calls := 0
	n, err := g.do(context.Background(), func(context.Context) error {
		calls++
		return &reccobeats.Error{StatusCode: 503}
	})
	if n != 3 || calls != 3 || err == nil {
		t.Errorf("always 503: %d attempts, %d calls, %v", n, calls, err)
	}
	calls = 0
	n, err = g.do(context.Background(), func(context.Context) error {
		calls++
		return &reccobeats.Error{StatusCode: 400}
	})
	if n != 1 || calls != 1 || err == nil {
		t.Errorf("400: %d attempts, %v", n, err)
	}
	if d := g.backoff(3); d != 4*time.Millisecond {
		t.Errorf("third backoff %s, want 4ms", d)
	}
}
