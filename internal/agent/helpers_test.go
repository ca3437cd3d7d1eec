package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/tool"
)

// backends lists the store engines the end-to-end tests run on.
var backends = storetest.Engines()

// openStore opens a fresh store of the engine, closed when the test ends.
func openStore(t testing.TB, engine string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), storetest.DSN(t, engine))
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Test tools.

type queryIn struct {
	Query string `json:"query" jsonschema:"what to look up"`
}

type itemsOut struct {
	Items []string `json:"items"`
}

func (o itemsOut) Summary() string { return fmt.Sprintf("%d items", len(o.Items)) }

type emptyIn struct{}

type tipIn struct {
	BillAmount    float64 `json:"billAmount"`
	TipPercentage float64 `json:"tipPercentage"`
}

type tipOut struct {
	Tip float64 `json:"tip"`
}

func (o tipOut) Summary() string { return fmt.Sprintf("tip %.2f", o.Tip) }

type nameOut struct {
	Name string `json:"name"`
}

func (o nameOut) Summary() string { return o.Name }

type locIn struct {
	Location string `json:"location"`
	Unit     string `json:"unit,omitempty"`
}

type weatherOut struct {
	Forecast string `json:"forecast"`
}

func (o weatherOut) Summary() string { return o.Forecast }

// tools is the registry of the tests and what its tools saw.
type tools struct {
	reg *tool.Registry

	// barrier, when set, makes "lookup" wait until that many lookups run at
	// once (a deadlock, and a test timeout, if calls are serialized).
	mu      sync.Mutex
	barrier *sync.WaitGroup
	flakyN  int
	started chan string // receives the name of each slow call as it starts
	// progressCtx is the context of the last "progress" call, kept to report
	// after the call's end.
	progressCtx context.Context
}

func newTools(t testing.TB, opts ...tool.Option) *tools {
	t.Helper()
	ts := &tools{started: make(chan string, 16)}
	opts = append([]tool.Option{tool.WithRetryDelay(0)}, opts...)
	ts.reg = tool.NewRegistry(opts...)
	err := ts.reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "lookup", Description: "Looks things up.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				ts.mu.Lock()
				b := ts.barrier
				ts.mu.Unlock()
				if b != nil {
					b.Done()
					b.Wait()
				}
				return itemsOut{Items: []string{in.Query + " 1", in.Query + " 2"}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "flaky", Description: "Always fails transiently.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				ts.mu.Lock()
				ts.flakyN++
				ts.mu.Unlock()
				return itemsOut{}, tool.Errorf(tool.CodeNetwork, "the upstream is unreachable")
			})),
		tool.Must(tool.New(tool.Spec{Name: "slow", Description: "Runs until canceled.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				ts.started <- "slow"
				<-ctx.Done()
				return itemsOut{}, ctx.Err()
			})),
		tool.Must(tool.New(tool.Spec{Name: "progress", Description: "Reports progress, a lot of it.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				ts.mu.Lock()
				ts.progressCtx = ctx
				ts.mu.Unlock()
				tool.ReportProgress(ctx, tool.Progress{Done: 1, Total: 3, Message: "first: " + in.Query})
				tool.ReportProgress(ctx, tool.Progress{Done: math.NaN(), Message: strings.Repeat("é", 4000)})
				for i := range 500 {
					tool.ReportProgress(ctx, tool.Progress{Done: float64(i)})
				}
				return itemsOut{Items: []string{in.Query}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "calculateTip", Description: "Calculate tip amount.", Pack: "fixture"},
			func(ctx context.Context, in tipIn) (tipOut, error) {
				return tipOut{Tip: in.BillAmount * in.TipPercentage / 100}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "getWaiterName", Description: "Get the name of the waiter.", Pack: "fixture"},
			func(ctx context.Context, in emptyIn) (nameOut, error) { return nameOut{Name: "Ada"}, nil })),
		tool.Must(tool.New(tool.Spec{Name: "getCurrentWeather", Description: "Current weather.", Pack: "fixture"},
			func(ctx context.Context, in locIn) (weatherOut, error) {
				return weatherOut{Forecast: "sunny in " + in.Location}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "getCurrentTime", Description: "Current time.", Pack: "fixture"},
			func(ctx context.Context, in locIn) (weatherOut, error) {
				return weatherOut{Forecast: "noon in " + in.Location}, nil
			})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// provider returns a real SDK provider of kind talking to ms.
func provider(t testing.TB, kind string, ms *servertest.ModelServer) llm.Provider {
	t.Helper()
	var p llm.Provider
	var err error
	if kind == "openai" {
		p, err = llm.NewOpenAI(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.OpenAIBaseURL()})
	} else {
		p, err = llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.AnthropicBaseURL()})
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wire is one decoded event: its JSON form as a map.
type wire map[string]any

func (w wire) typ() string { s, _ := w["type"].(string); return s }

// recorder collects a turn's events in their wire form.
type recorder struct {
	mu     sync.Mutex
	events []wire
	on     func(wire) // called for each event, outside the lock
}

func (r *recorder) emit(ev agent.Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		panic(err)
	}
	if w.typ() != string(ev.EventType()) {
		panic("event type mismatch: " + string(b))
	}
	r.mu.Lock()
	r.events = append(r.events, w)
	on := r.on
	r.mu.Unlock()
	if on != nil {
		on(w)
	}
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.typ())
	}
	return out
}

func (r *recorder) first(typ string) wire {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.typ() == typ {
			return e
		}
	}
	return nil
}

func (r *recorder) all(typ string) []wire {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []wire
	for _, e := range r.events {
		if e.typ() == typ {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) text() string {
	var s string
	for _, e := range r.all("text_delta") {
		s += e["content"].(string)
	}
	return s
}

// storedBlocks returns the blocks of each message of a conversation.
func storedBlocks(t testing.TB, db *sqlstore.DB, convID string) ([]store.Message, [][]llm.Block) {
	t.Helper()
	c, err := db.GetConversation(context.Background(), convID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	var out [][]llm.Block
	for _, m := range c.Messages {
		b, err := llm.DecodeBlocks(m.Content)
		if err != nil {
			t.Fatalf("stored message %s: %v", m.ID, err)
		}
		out = append(out, b)
	}
	return c.Messages, out
}

func blockTypes(bs []llm.Block) []string {
	var out []string
	for _, b := range bs {
		out = append(out, string(b.Type))
	}
	return out
}

func newConversation(t testing.TB, db *sqlstore.DB) string {
	t.Helper()
	c, err := db.CreateConversation(context.Background(), store.Conversation{})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func newAgent(t testing.TB, cfg agent.Config) *agent.Agent {
	t.Helper()
	if cfg.ModelRetryDelay == 0 {
		cfg.ModelRetryDelay = time.Millisecond
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
