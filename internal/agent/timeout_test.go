package agent_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
)

// silentServer accepts connections and reads the requests but never
// answers, like a model server hung before its response headers. It returns
// its URL and a count of the connections it accepted.
func silentServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String(), &n
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
			t.Parallel()
			url, conns := silentServer(t)
			r, took := timedTurn(t, agent.Config{
				Provider:    sdkProvider(t, kind, url, llm.Options{FirstByteTimeout: firstByte, IdleTimeout: time.Hour}),
				TurnTimeout: time.Minute,
			})
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
			if n := conns.Load(); n != 1 {
				t.Errorf("the model server got %d connections, want 1 (no retry of a timeout)", n)
			}
			if took < firstByte || took > 2*firstByte {
				t.Errorf("the turn took %v, want about %v", took, firstByte)
			}
		})
	}
}

func TestTurnTimeout(t *testing.T) {
	// The model's own timeouts are off: the turn's deadline ends the wait.
	const turn = 400 * time.Millisecond
	url, _ := silentServer(t)
	r, took := timedTurn(t, agent.Config{
		Provider:    sdkProvider(t, "openai", url, llm.Options{FirstByteTimeout: -1, IdleTimeout: -1}),
		TurnTimeout: turn,
	})
	wantTypes(t, r, "message_start", "error", "message_end")
	e := r.first("error")
	if e["code"] != agent.CodeModelTimeout || e["retryable"] != true || !strings.Contains(e["message"].(string), "took longer than 400ms") {
		t.Errorf("error = %v, want MODEL_TIMEOUT saying the turn ran out of time", e)
	}
	if me := r.first("message_end"); me["stopReason"] != agent.StopError {
		t.Errorf("message_end = %v, want stopReason error", me)
	}
	if took < turn || took > turn+time.Second {
		t.Errorf("the turn took %v, want about %v", took, turn)
	}
}

func TestRetryDoesNotWaitPastTheDeadline(t *testing.T) {
	// A 429 asking for 4 s is normally waited for once (MaxModelRetryAfter is
	// 5 s); with 500 ms left in the turn the error is reported at once.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "4")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	}))
	defer srv.Close()
	r, took := timedTurn(t, agent.Config{
		Provider:    sdkProvider(t, "openai", srv.URL, llm.Options{}),
		TurnTimeout: 500 * time.Millisecond,
	})
	wantTypes(t, r, "message_start", "error", "message_end")
	if e := r.first("error"); e["code"] != agent.CodeRateLimit {
		t.Errorf("error = %v, want RATE_LIMIT", e)
	}
	if n := calls.Load(); n != 1 || took > 400*time.Millisecond {
		t.Errorf("%d calls in %v, want 1 call and an answer at once", n, took)
	}
}

func TestRetryWithinTheDeadline(t *testing.T) {
	// The same 429 within a generous deadline is retried once after its
	// Retry-After: the deadline rule does not disable retries.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After-Ms", "50")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	}))
	defer srv.Close()
	r, _ := timedTurn(t, agent.Config{Provider: sdkProvider(t, "openai", srv.URL, llm.Options{})})
	if e := r.first("error"); e["code"] != agent.CodeRateLimit || calls.Load() != 2 {
		t.Errorf("error %v after %d calls, want RATE_LIMIT after 2", e, calls.Load())
	}
}
