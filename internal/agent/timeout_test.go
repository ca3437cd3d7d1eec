package agent_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/tooltest"
)

// silentTransport is a model server hung before its response headers,
// without a socket, counting the requests it got: in a synctest bubble
// their wait is durable, so the bubble's fake clock runs on to whichever
// timeout ends it, and the tests assert that timeout exactly.
type silentTransport struct{ requests atomic.Int32 }

func (s *silentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.requests.Add(1)
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// silentModel is a provider of kind whose model server never answers.
func silentModel(t *testing.T, kind string, o llm.Options) (llm.Provider, *silentTransport) {
	t.Helper()
	st := &silentTransport{}
	o.HTTPClient = &http.Client{Transport: st}
	return sdkProvider(t, kind, "http://model.invalid", o), st
}

func sdkProvider(t *testing.T, kind, url string, o llm.Options) llm.Provider {
	t.Helper()
	var p llm.Provider
	var err error
	if kind == "openai" {
		o.APIKey, o.BaseURL = "sk-test", url+"/v1"
		p, err = llm.NewOpenAI("m", o)
	} else {
		o.APIKey, o.BaseURL = "sk-test", url
		p, err = llm.NewAnthropic("m", o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// timedTurn runs one turn with a guard against a hang, and returns its
// events and how long it took.
func timedTurn(t *testing.T, cfg agent.Config) (*recorder, time.Duration) {
	t.Helper()
	db := openStore(t, store.EngineSQLite)
	cfg.Store, cfg.Registry = db, newTools(t).reg
	a := newAgent(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := &recorder{}
	start := time.Now()
	if err := a.Turn(ctx, store.Fence{}, newConversation(t, db), "hello?", r.emit); err != nil {
		t.Fatal(err)
	}
	return r, time.Since(start)
}

func TestSilentModelEndsTheTurnWithModelTimeout(t *testing.T) {
	const firstByte = 300 * time.Millisecond
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				model, server := silentModel(t, kind, llm.Options{FirstByteTimeout: firstByte, IdleTimeout: time.Hour})
				r, took := timedTurn(t, agent.Config{Provider: model, TurnTimeout: time.Minute})
				wantTypes(t, r, "message_start", "error", "message_end")
				e := r.first("error")
				if e["code"] != agent.CodeModelTimeout || e["retryable"] != true || !strings.Contains(e["message"].(string), "first-byte timeout") {
					t.Errorf("error = %v, want a retryable MODEL_TIMEOUT naming the first-byte timeout", e)
				}
				if me := r.first("message_end"); me["stopReason"] != agent.StopError {
					t.Errorf("message_end = %v", me)
				}
				// One attempt: a timeout is not retried, so the user hears of it
				// after one first-byte timeout, not two.
				if n := server.requests.Load(); n != 1 {
					t.Errorf("the model server got %d requests, want 1 (no retry of a timeout)", n)
				}
				if took != firstByte {
					t.Errorf("the turn took %v, want %v (the clock is the bubble's)", took, firstByte)
				}
			})
		})
	}
}

func TestTurnTimeout(t *testing.T) {
	// The model's own timeouts are off: the turn's deadline ends the wait.
	const turn = 400 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		model, _ := silentModel(t, "openai", llm.Options{FirstByteTimeout: -1, IdleTimeout: -1})
		r, took := timedTurn(t, agent.Config{Provider: model, TurnTimeout: turn})
		wantTypes(t, r, "message_start", "error", "message_end")
		e := r.first("error")
		if e["code"] != agent.CodeModelTimeout || e["retryable"] != true || !strings.Contains(e["message"].(string), "took longer than 400ms") {
			t.Errorf("error = %v, want MODEL_TIMEOUT saying the turn ran out of time", e)
		}
		if me := r.first("message_end"); me["stopReason"] != agent.StopError {
			t.Errorf("message_end = %v, want stopReason error", me)
		}
		if took != turn {
			t.Errorf("the turn took %v, want %v (the clock is the bubble's)", took, turn)
		}
	})
}

func TestRetryDoesNotWaitPastTheDeadline(t *testing.T) {
	// A 429 asking for 4 s is normally waited for once (MaxModelRetryAfter is
	// 5 s); with 500 ms left in the turn the error is reported at once.
	// In a bubble any wait shows on the fake clock.
	var calls atomic.Int32
	srv := tooltest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "4")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	}))
	synctest.Test(t, func(t *testing.T) {
		r, took := timedTurn(t, agent.Config{
			Provider:    sdkProvider(t, "openai", srv.URL, llm.Options{HTTPClient: srv.InMemoryClient()}),
			TurnTimeout: 500 * time.Millisecond,
		})
		wantTypes(t, r, "message_start", "error", "message_end")
		if e := r.first("error"); e["code"] != agent.CodeRateLimit {
			t.Errorf("error = %v, want RATE_LIMIT", e)
		}
		if n := calls.Load(); n != 1 || took != 0 {
			t.Errorf("%d calls in %v, want 1 call and an answer at once", n, took)
		}
	})
}

func TestRetryWithinTheDeadline(t *testing.T) {
	// The same 429 within a generous deadline is retried once after its
	// Retry-After: the deadline rule does not disable retries.
	var calls atomic.Int32
	srv := tooltest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After-Ms", "50")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	}))
	synctest.Test(t, func(t *testing.T) {
		r, took := timedTurn(t, agent.Config{Provider: sdkProvider(t, "openai", srv.URL, llm.Options{HTTPClient: srv.InMemoryClient()})})
		if e := r.first("error"); e["code"] != agent.CodeRateLimit || calls.Load() != 2 {
			t.Errorf("error %v after %d calls, want RATE_LIMIT after 2", e, calls.Load())
		}
		if took < 50*time.Millisecond {
			t.Errorf("the retry came after %v, before the Retry-After-Ms of 50ms", took)
		}
	})
}
