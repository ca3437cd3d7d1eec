package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// hugeOut is a tool output larger than a stored message may be.
type hugeOut struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

func (o hugeOut) Summary() string { return o.Title }

// unknownKeys returns tool arguments with n unknown keys, about 11 bytes each.
func unknownKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"query":"jazz"`)
	for i := range n {
		fmt.Fprintf(&b, `,"k%05d":1`, i)
	}
	b.WriteByte('}')
	return b.String()
}

// turnSizes runs one turn and reports what each surface got.
type turnSizes struct {
	events  *recorder
	sse     int // bytes of all events, as the SSE stream encodes them
	stored  []byte
	blocks  []llm.Block
	reqs    []servertest.Request
	message store.Message
}

func runTurn(t *testing.T, kind, engine string, ts *tools, cfg agent.Config, turns ...servertest.Turn) turnSizes {
	t.Helper()
	db := openStore(t, engine)
	ms := servertest.NewModelServer(t, turns...)
	cfg.Store, cfg.Registry, cfg.Provider = db, ts.reg, provider(t, kind, ms)
	a := newAgent(t, cfg)
	conv := newConversation(t, db)
	r := &recorder{}
	sse := 0
	emit := func(ev agent.Event) {
		b, _ := json.Marshal(ev)
		sse += len(b)
		r.emit(ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := a.Turn(ctx, store.Fence{}, conv, turns[0].Match, emit); err != nil {
		t.Fatalf("Turn: %v", err)
	}
	msgs, blocks := storedBlocks(t, db, conv)
	if len(msgs) != 2 {
		t.Fatalf("stored %d messages, want the question and the answer (events %v)", len(msgs), r.types())
	}
	return turnSizes{events: r, sse: sse, stored: msgs[1].Content, blocks: blocks[1], reqs: ms.Requests(), message: msgs[1]}
}

func TestLargeToolResultsNeverLoseTheTurn(t *testing.T) {
	const kib = 1 << 10
	// One provider: the bounds under test come after the provider, and the
	// OpenAI SDK takes over a minute under -race to gather 1 MB of streamed
	// arguments.
	for _, kind := range []string{"anthropic"} {
		for _, engine := range backends {
			t.Run(kind+"/"+engine+"/95,000 unknown keys", func(t *testing.T) {
				t.Parallel()
				args := unknownKeys(95_000)
				got := runTurn(t, kind, engine, newTools(t), agent.Config{},
					servertest.Turn{Match: "many keys", Events: []servertest.Event{servertest.Call("c1", "lookup", args)}},
					servertest.Turn{Match: "many keys", Step: 1, Events: []servertest.Event{servertest.Text("That call was wrong.")}},
				)
				wantTypes(t, got.events, "message_start", "tool_call_start", "tool_call_error", "text_delta", "message_end")
				if me := got.events.first("message_end"); me["stopReason"] != "end_turn" || got.message.Incomplete {
					t.Errorf("message_end = %v, incomplete %v: want a whole turn", me, got.message.Incomplete)
				}
				ce := got.events.first("tool_call_error")
				if msg, _ := ce["error"].(string); ce["errorCode"] != "VALIDATION" || !strings.HasSuffix(msg, "and 94980 more") {
					t.Errorf("tool_call_error = %.300v", ce)
				}
				// Kilobytes where there were megabytes: the SSE events, the
				// stored message, and what the model was sent back.
				if got.sse > 200*kib || len(got.stored) > 200*kib || len(got.reqs[1].Body) > 200*kib {
					t.Errorf("SSE %d KiB, stored %d KiB, second model request %d KiB for %d KiB of arguments",
						got.sse/kib, len(got.stored)/kib, len(got.reqs[1].Body)/kib, len(args)/kib)
				}
				res := got.blocks[1]
				var failure struct {
					More int `json:"moreViolations"`
				}
				if json.Unmarshal(res.Content, &failure); res.Type != llm.BlockToolResult || !res.IsError || failure.More != 94980 {
					t.Errorf("tool_result = %.300s", res.Content)
				}
				if use := got.blocks[0]; use.Type != llm.BlockToolUse || !bytes.Contains(use.Input, []byte(tool.TruncatedField)) {
					t.Errorf("the stored tool_use input is %d bytes, want it bounded with a note", len(use.Input))
				}
			})
			t.Run(kind+"/"+engine+"/result over the contract's bound", func(t *testing.T) {
				t.Parallel()
				// Larger than a stored message too: the registry refuses it
				// before encoding it, and the model hears why.
				ts := newTools(t)
				big := strings.Repeat("all work and no play ", (max(store.MaxContentBytes, tool.DefaultMaxOutputBytes)+kib)/21)
				ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "fetch", Description: "Fetches a page."},
					func(context.Context, queryIn) (hugeOut, error) { return hugeOut{Title: "a page", Content: big}, nil })))
				got := runTurn(t, kind, engine, ts, agent.Config{},
					servertest.Turn{Match: "fetch it", Events: []servertest.Event{servertest.Call("c1", "fetch", `{"query":"x"}`)}},
					servertest.Turn{Match: "fetch it", Step: 1, Events: []servertest.Event{servertest.Text("Too long a page.")}},
				)
				wantTypes(t, got.events, "message_start", "tool_call_start", "tool_call_error", "text_delta", "message_end")
				if me := got.events.first("message_end"); me["stopReason"] != "end_turn" || got.message.Incomplete {
					t.Errorf("message_end = %v, incomplete %v: want a whole turn", me, got.message.Incomplete)
				}
				if ce := got.events.first("tool_call_error"); ce["errorCode"] != string(tool.CodeResultTooLarge) {
					t.Errorf("tool_call_error = %.300v", ce)
				}
				if len(got.stored) > 64*kib || len(got.reqs[1].Body) > 64*kib {
					t.Errorf("stored %d KiB, second model request %d KiB", len(got.stored)/kib, len(got.reqs[1].Body)/kib)
				}
			})
			t.Run(kind+"/"+engine+"/result far larger than the agent passes on", func(t *testing.T) {
				t.Parallel()
				ts := newTools(t)
				big := strings.Repeat("all work and no play ", (4<<20)/21)
				ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "fetch", Description: "Fetches a page."},
					func(context.Context, queryIn) (hugeOut, error) { return hugeOut{Title: "a page", Content: big}, nil })))
				got := runTurn(t, kind, engine, ts, agent.Config{},
					servertest.Turn{Match: "fetch it", Events: []servertest.Event{servertest.Call("c1", "fetch", `{"query":"x"}`)}},
					servertest.Turn{Match: "fetch it", Step: 1, Events: []servertest.Event{servertest.Text("A long page.")}},
				)
				wantTypes(t, got.events, "message_start", "tool_call_start", "tool_call_end", "text_delta", "message_end")
				if me := got.events.first("message_end"); me["stopReason"] != "end_turn" || got.message.Incomplete {
					t.Errorf("message_end = %v, incomplete %v: want a whole turn", me, got.message.Incomplete)
				}
				limit := agent.DefaultMaxToolResultBytes
				end := got.events.first("tool_call_end")
				result, _ := json.Marshal(end["result"])
				if len(result) > limit+kib || !strings.Contains(string(result), tool.TruncatedField) || end["summary"] != "a page" {
					t.Errorf("tool_call_end result of %d bytes: %.200s", len(result), result)
				}
				res := got.blocks[1]
				var env map[string]any
				if err := json.Unmarshal(res.Content, &env); err != nil || len(res.Content) > limit ||
					env["success"] != true || env["title"] != "a page" || env[tool.TruncatedField] == nil {
					t.Errorf("stored tool_result (%d bytes, %v): %.300s", len(res.Content), err, res.Content)
				}
				if len(got.stored) > 2*limit || len(got.reqs[1].Body) > 2*limit || got.sse > 2*limit {
					t.Errorf("stored %d KiB, second model request %d KiB, SSE %d KiB for a %d MiB result",
						len(got.stored)/kib, len(got.reqs[1].Body)/kib, got.sse/kib, len(big)>>20)
				}
			})
		}
	}
}

func TestMaxToolResultBytesIsConfigurable(t *testing.T) {
	ts := newTools(t)
	ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "fetch", Description: "Fetches a page."},
		func(context.Context, queryIn) (hugeOut, error) {
			return hugeOut{Title: "a page", Content: strings.Repeat("z", 100_000)}, nil
		})))
	for _, limit := range []int{4 << 10, 32 << 10} {
		got := runTurn(t, "anthropic", backends[0], ts, agent.Config{MaxToolResultBytes: limit},
			servertest.Turn{Match: "fetch it", Events: []servertest.Event{servertest.Call("c1", "fetch", `{"query":"x"}`)}},
			servertest.Turn{Match: "fetch it", Step: 1, Events: []servertest.Event{servertest.Text("Done.")}},
		)
		if n := len(got.blocks[1].Content); n > limit || n < limit/2 {
			t.Errorf("limit %d: tool_result of %d bytes", limit, n)
		}
	}
	if _, err := agent.New(agent.Config{Store: openStore(t, backends[0]), Registry: ts.reg, MaxToolResultBytes: -1}); err == nil {
		t.Error("a negative MaxToolResultBytes was accepted")
	}
}

func TestTurnBudgetSharesOutAmongManyCalls(t *testing.T) {
	ts := newTools(t)
	ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "fetch", Description: "Fetches a page."},
		func(context.Context, queryIn) (hugeOut, error) {
			return hugeOut{Title: "a page", Content: strings.Repeat("z", 1<<20)}, nil
		})))
	var calls []servertest.Event
	for i := range 40 {
		calls = append(calls, servertest.Call(fmt.Sprintf("c%d", i), "fetch", `{"query":"x"}`))
	}
	budget := 256 << 10
	got := runTurn(t, "anthropic", backends[0], ts, agent.Config{MaxTurnToolBytes: budget},
		servertest.Turn{Match: "fetch all", Events: calls},
		servertest.Turn{Match: "fetch all", Step: 1, Events: []servertest.Event{servertest.Text("Done.")}},
	)
	if len(got.stored) > budget+64<<10 {
		t.Errorf("stored %d KiB for a turn budget of %d KiB", len(got.stored)>>10, budget>>10)
	}
}

// The key an upstream echoes in a 200 answer reaches neither the events, nor
// the model, nor the store.
func TestEchoedSecretsReachNoSurface(t *testing.T) {
	const key = "sk-upstream-5f1d0c9a7e"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"items":["result 1","debug: key=%s"]}`, r.URL.Query().Get("key"))
	}))
	t.Cleanup(upstream.Close)
	ts := newTools(t, tool.WithSecrets(key))
	ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "search", Description: "Searches upstream."},
		func(ctx context.Context, in queryIn) (itemsOut, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, upstream.URL+"?key="+key, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return itemsOut{}, err
			}
			defer resp.Body.Close()
			var out itemsOut
			err = json.NewDecoder(resp.Body).Decode(&out)
			return out, err
		})))
	for _, kind := range []string{"anthropic", "openai"} {
		got := runTurn(t, kind, backends[0], ts, agent.Config{},
			servertest.Turn{Match: "search", Events: []servertest.Event{servertest.Call("c1", "search", `{"query":"x"}`)}},
			servertest.Turn{Match: "search", Step: 1, Events: []servertest.Event{servertest.Text("Found two.")}},
		)
		end := got.events.first("tool_call_end")
		if end == nil || end["resultCount"] != 2.0 {
			t.Fatalf("%s: tool_call_end = %v", kind, end)
		}
		var sse bytes.Buffer
		for _, ev := range got.events.events {
			b, _ := json.Marshal(ev)
			sse.Write(b)
		}
		for surface, b := range map[string][]byte{"SSE": sse.Bytes(), "store": got.stored, "model": got.reqs[1].Body} {
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("%s: the key reached the %s", kind, surface)
			}
			if !bytes.Contains(b, []byte("debug: key=[REDACTED]")) {
				t.Errorf("%s: the %s lacks the redacted result", kind, surface)
			}
		}
	}
}
