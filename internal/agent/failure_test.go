package agent_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// atError records what the store held when the error event went out.
type atError struct {
	mu   sync.Mutex
	msgs []store.Message
	err  error
}

// watch makes r snapshot conv's stored messages when the error event is
// emitted: the failure must be durable before the client hears of it.
func (a *atError) watch(r *recorder, db *sqlstore.DB, conv string) {
	r.on = func(w wire) {
		if w.typ() != "error" {
			return
		}
		c, err := db.GetConversation(context.Background(), conv)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.msgs, a.err = c.Messages, err
	}
}

// checkStoredFailure checks that the last stored message, both when the
// error event was emitted and after the turn, is the turn's assistant
// message, incomplete, with the event's code and message and the given text.
func checkStoredFailure(t *testing.T, r *recorder, db *sqlstore.DB, conv string, snap *atError, wantText string) {
	t.Helper()
	ev := r.first("error")
	if ev == nil {
		t.Fatalf("no error event: %v", r.types())
	}
	if me := r.first("message_end"); me == nil || me["stopReason"] != "error" {
		t.Errorf("message_end = %v, want stopReason error", me)
	}
	want := &store.MessageError{Code: ev["code"].(string), Message: ev["message"].(string)}
	snap.mu.Lock()
	early, err := snap.msgs, snap.err
	snap.mu.Unlock()
	if err != nil {
		t.Fatalf("reading the store at the error event: %v", err)
	}
	final, blocks := storedBlocks(t, db, conv)
	for when, msgs := range map[string][]store.Message{"at the error event": early, "after the turn": final} {
		if len(msgs) != 2 || msgs[0].Role != store.RoleUser {
			t.Fatalf("%s: stored %+v, want the user message and the failed answer", when, msgs)
		}
		m := msgs[1]
		if m.Role != store.RoleAssistant || m.ID != r.first("message_start")["messageId"] || !m.Incomplete {
			t.Errorf("%s: answer %+v, want the turn's assistant message, incomplete", when, m)
		}
		if m.Error == nil || *m.Error != *want {
			t.Errorf("%s: stored error %+v, want %+v (the event's)", when, m.Error, want)
		}
	}
	var text string
	for _, b := range blocks[1] {
		text += b.Text
	}
	if text != wantText {
		t.Errorf("stored text %q, want %q", text, wantText)
	}
}

func TestFailedTurnIsStoredWithItsError(t *testing.T) {
	cases := []struct {
		name     string
		turns    []servertest.Turn
		code     string
		message  string // a part of the error message
		wantText string
	}{
		{
			name:    "model 500 before any output",
			turns:   []servertest.Turn{{Match: "fail hard", Status: 500}},
			code:    "MODEL_ERROR",
			message: "HTTP 500",
		},
		{
			name:     "partial output, then the stream breaks",
			turns:    []servertest.Turn{{Match: "fail hard", Events: []servertest.Event{servertest.Text("Half an ans"), servertest.Break()}}},
			code:     "MODEL_ERROR",
			wantText: "Half an ans",
		},
	}
	for _, kind := range []string{"anthropic", "openai"} {
		for _, engine := range backends {
			for _, tc := range cases {
				t.Run(kind+"/"+engine+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					db := openStore(t, engine)
					// The user's two messages merge (no answer between them), so
					// "try again" must be matched first.
					again := servertest.Turn{Match: "try again", Events: []servertest.Event{servertest.Text("Better now.")}}
					ms := servertest.NewModelServer(t, append([]servertest.Turn{again}, tc.turns...)...)
					a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, kind, ms)})
					conv := newConversation(t, db)
					r, snap := &recorder{}, &atError{}
					snap.watch(r, db, conv)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := a.Turn(ctx, store.Fence{}, conv, "fail hard", r.emit); err != nil {
						t.Fatalf("Turn: %v", err)
					}
					checkStoredFailure(t, r, db, conv, snap, tc.wantText)
					if e := r.first("error"); e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.message) {
						t.Errorf("error event = %v, want code %s, message with %q", e, tc.code, tc.message)
					}

					// The stored error is for people, never for the model: the
					// next turn's request does not carry it.
					before := len(ms.Requests())
					if err := a.Turn(ctx, store.Fence{}, conv, "try again", (&recorder{}).emit); err != nil {
						t.Fatalf("second Turn: %v", err)
					}
					reqs := ms.Requests()
					if len(reqs) != before+1 {
						t.Fatalf("the second turn made %d model requests, want 1", len(reqs)-before)
					}
					body := string(reqs[len(reqs)-1].Body)
					msg := r.first("error")["message"].(string)
					if strings.Contains(body, msg) || strings.Contains(body, "MODEL_ERROR") {
						t.Errorf("the stored error was sent back to the model:\n%s", body)
					}
					if !strings.Contains(body, "fail hard") || !strings.Contains(body, "try again") {
						t.Errorf("the history lost the user's messages:\n%s", body)
					}
				})
			}
		}
	}
}

func TestNoModelTurnIsStoredWithItsError(t *testing.T) {
	for _, engine := range backends {
		t.Run(engine, func(t *testing.T) {
			db := openStore(t, engine)
			a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg})
			conv := newConversation(t, db)
			r, snap := &recorder{}, &atError{}
			snap.watch(r, db, conv)
			if err := a.Turn(context.Background(), store.Fence{}, conv, "hello?", r.emit); err != nil {
				t.Fatal(err)
			}
			checkStoredFailure(t, r, db, conv, snap, "")
			if e := r.first("error"); e["code"] != "MODEL_NOT_CONFIGURED" {
				t.Errorf("error = %v", e)
			}
		})
	}
}

// panicky is a provider with a bug: its stream panics after text, or its
// Stream call panics at once.
type panicky struct{ text string }

func (p panicky) Model() string { return "panicky" }

func (p panicky) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	if p.text == "" {
		panic("boom before output")
	}
	sent := false
	return llm.NewStream(func() (llm.Event, error) {
		if !sent {
			sent = true
			return llm.Event{Type: llm.EventTextDelta, Text: p.text}, nil
		}
		var seen []string
		return llm.Event{Text: seen[len(p.text)]}, io.EOF // a runtime panic, as a real bug would be
	}, nil), nil
}

func TestPanickingTurnIsStoredWithItsError(t *testing.T) {
	for _, engine := range backends {
		for _, text := range []string{"", "Partial answ"} {
			t.Run(engine+"/text="+text, func(t *testing.T) {
				db := openStore(t, engine)
				var logs strings.Builder
				a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: panicky{text},
					Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				conv := newConversation(t, db)
				r, snap := &recorder{}, &atError{}
				snap.watch(r, db, conv)
				if err := a.Turn(context.Background(), store.Fence{}, conv, "hello?", r.emit); err != nil {
					t.Fatal(err)
				}
				checkStoredFailure(t, r, db, conv, snap, text)
				if e := r.first("error"); e["code"] != "INTERNAL" || e["message"] == "" {
					t.Errorf("error = %v", e)
				}
				if !strings.Contains(logs.String(), "the turn panicked") {
					t.Errorf("the panic was not logged: %s", logs.String())
				}
				if strings.Contains(logs.String(), "boom before output") {
					t.Errorf("a panic value that is not the runtime's reached the log: %s", logs.String())
				}
			})
		}
	}
}

// A stored failure is JSON the API can hand to the page as is.
func TestStoredFailureJSON(t *testing.T) {
	db := openStore(t, backends[0])
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg})
	conv := newConversation(t, db)
	if err := a.Turn(context.Background(), store.Fence{}, conv, "hello?", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	msgs, _ := storedBlocks(t, db, conv)
	b, err := json.Marshal(msgs[len(msgs)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"content":[]`) || !strings.Contains(string(b), `"error":{"code":"MODEL_NOT_CONFIGURED","message":"no model configured`) {
		t.Errorf("stored failure JSON = %s", b)
	}
}

// A turn whose model server cannot be reached says which server, in the
// error shown and in the log, without the credentials in its URL.
func TestUnreachableModelIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close() // nothing listens there any more
	p, err := llm.NewOpenAI("gpt-4.1", llm.Options{APIKey: "sk-test", BaseURL: "http://user:pa55word@" + host + "/v1?key=q5ecret"})
	if err != nil {
		t.Fatal(err)
	}
	e, msg, logs := failingTurn(t, p)
	want := "http://" + host + "/v1"
	if e["code"] != "MODEL_ERROR" || !strings.Contains(msg, want) || !strings.Contains(logs, want) {
		t.Errorf("error %v, log %q: want MODEL_ERROR naming %s in both", e, logs, want)
	}
	for _, secret := range []string{"pa55word", "q5ecret", "sk-test"} {
		if strings.Contains(msg+logs, secret) {
			t.Errorf("%q leaked: error %q, log %q", secret, msg, logs)
		}
	}
}

// TestRefusingModelIsNamed: a model server that answers but refuses the
// request (HTTP 404, what a wrong base URL or model name gets) is named in
// the error the person sees and in the log's url attribute, with no
// credentials or query.
func TestRefusingModelIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		// CONSTRUCTED in the shape of OpenAI's error body.
		io.WriteString(w, `{"error":{"message":"The model 'nope' does not exist","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	p, err := llm.NewOpenAI("nope", llm.Options{APIKey: "sk-test-refused", BaseURL: "http://user:pa55word@" + host + "/v1?key=q5ecret"})
	if err != nil {
		t.Fatal(err)
	}
	e, msg, logs := failingTurn(t, p)
	want := "http://" + host + "/v1/chat/completions"
	if e["code"] != "MODEL_ERROR" || !strings.Contains(msg, "HTTP 404") || !strings.Contains(msg, "(model server "+want+")") {
		t.Errorf("error %v: want MODEL_ERROR with the status and naming %s", e, want)
	}
	if !strings.Contains(logs, "url="+want) {
		t.Errorf("log %q: want url=%s", logs, want)
	}
	for _, secret := range []string{"pa55word", "q5ecret", "sk-test-refused"} {
		if strings.Contains(msg+logs, secret) {
			t.Errorf("%q leaked: error %q, log %q", secret, msg, logs)
		}
	}
}

// failingTurn runs a turn against p, a model that fails, and returns its
// error event, the event's message and what the agent logged.
func failingTurn(t *testing.T, p llm.Provider) (e wire, msg, logs string) {
	t.Helper()
	db := openStore(t, backends[0])
	var log strings.Builder
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: p, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	conv := newConversation(t, db)
	r := &recorder{}
	if err := a.Turn(context.Background(), store.Fence{}, conv, "hello?", r.emit); err != nil {
		t.Fatal(err)
	}
	e = r.first("error")
	msg, _ = e["message"].(string)
	return e, msg, log.String()
}
