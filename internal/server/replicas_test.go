package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/turn"
	"github.com/toolport/toolport/internal/turn/turntest"
)

// replicas starts two chat servers sharing one store and one scripted model,
// as two `toolport serve` replicas behind a load balancer would. On
// PostgreSQL each has a connection pool of its own (as two processes would);
// SQLite is one process's store, so they share the handle.
func replicas(t *testing.T, engine string, lease time.Duration, turns ...servertest.Turn) (a, b *env) {
	t.Helper()
	return replicasOn(t, engine, lease, nil, turns...)
}

// replicasOn is replicas on clock, the lease clock both replicas share
// (nil: the system clock).
func replicasOn(t *testing.T, engine string, lease time.Duration, clock turn.Clock, turns ...servertest.Turn) (a, b *env) {
	t.Helper()
	dsn := storetest.DSN(t, engine)
	model := servertest.NewModelServer(t, turns...)
	cfg := func(c *server.Config) { c.TurnLease = lease }
	a = newEnv(t, envOptions{dsn: dsn, model: model, config: cfg, clock: clock})
	ob := envOptions{dsn: dsn, model: model, config: cfg, clock: clock}
	if engine == storetest.SQLite {
		ob.db = a.db
	}
	b = newEnv(t, ob)
	return a, b
}

// eachEngine runs fn on SQLite and on PostgreSQL (which storetest skips,
// saying so, only when TOOLPORT_TEST_DATABASE_URL is unset).
func eachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

// get sends a GET with headers and returns the response (the caller closes it).
func (e *env) get(t testing.TB, ctx context.Context, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// resume reads the rest of a turn from e after lastID.
func (e *env) resume(t testing.TB, path, lastID string) *stream {
	t.Helper()
	res := e.get(t, context.Background(), path, map[string]string{"Last-Event-ID": lastID})
	defer res.Body.Close()
	return readStream(t, res, nil)
}

// startSlowTurn starts a turn on e that writes "Working" and then waits for
// an hour; it returns once the text arrived, with the stream's turn id and a
// channel that gets the stream when it ends.
func startSlowTurn(t *testing.T, e *env, conv string) (string, <-chan *stream) {
	t.Helper()
	started := make(chan string, 1)
	done := make(chan *stream, 1)
	go func() {
		var turnID string
		s := e.chat(t, context.Background(), conv, "slow one", func(ev map[string]any) bool {
			if ev["type"] == "message_start" {
				turnID = "?"
			}
			if ev["type"] == "text_delta" {
				started <- turnID
			}
			return true
		})
		if s.status != http.StatusOK {
			t.Errorf("slow turn: %d %s", s.status, s.raw)
			started <- ""
		}
		done <- s
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow turn never started")
	}
	// The claim is committed before the turn's first event is streamed.
	tr, err := e.db.RunningTurn(context.Background(), conv)
	if err != nil {
		t.Fatalf("the slow turn streams but does not run: %v", err)
	}
	return tr.ID, done
}

var slowTurn = servertest.Turn{Match: "slow", Events: []servertest.Event{servertest.Text("Working"), servertest.Pause(time.Hour)}}

func TestSecondTurnOnAnotherReplicaConflictsAndStopCrossesReplicas(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		a, b := replicas(t, engine, time.Minute, slowTurn,
			servertest.Turn{Match: "quick", Events: []servertest.Event{servertest.Text("Done.")}})
		conv := a.newConversation(t)
		tid, done := startSlowTurn(t, a, conv)

		status, body := b.do(t, "POST", "/api/conversations/"+conv+"/messages", `{"content":"quick one"}`)
		if status != http.StatusConflict || !strings.Contains(string(body), "CONFLICT") {
			t.Errorf("second turn on the other replica = %d %s, want 409", status, body)
		}
		if status, _ := b.do(t, "DELETE", "/api/conversations/"+conv, ""); status != http.StatusConflict {
			t.Errorf("delete on the other replica during a turn = %d, want 409", status)
		}

		status, body = b.do(t, "POST", "/api/conversations/"+conv+"/stop", "")
		if status != http.StatusAccepted || !strings.Contains(string(body), tid) {
			t.Fatalf("stop from the other replica = %d %s, want 202 naming %s", status, body, tid)
		}
		var s *stream
		select {
		case s = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the turn did not stop")
		}
		if end := s.first("message_end"); end == nil || end["stopReason"] != "canceled" {
			t.Errorf("stopped stream = %s", s.raw)
		}
		a.waitTurns(t)
		if tr, err := a.db.GetTurn(context.Background(), tid); err != nil || tr.State != store.TurnIncomplete {
			t.Errorf("the stopped turn = %+v, %v; want incomplete", tr, err)
		}
		c, _ := b.db.GetConversation(context.Background(), conv)
		if len(c.Messages) != 2 || !c.Messages[1].Incomplete || !strings.Contains(string(c.Messages[1].Content), "Working") {
			t.Errorf("messages after the stop = %+v", c.Messages)
		}
		if status, body := b.do(t, "POST", "/api/conversations/"+conv+"/stop", ""); status != http.StatusOK || !strings.Contains(string(body), `"stopping":false`) {
			t.Errorf("stop with no turn running = %d %s", status, body)
		}
		// The conversation is free again, on either replica.
		if s := b.chat(t, context.Background(), conv, "quick one", nil); s.first("message_end") == nil || s.first("message_end")["stopReason"] != "end_turn" {
			t.Errorf("turn after the stop = %d %s", s.status, s.raw)
		}
	})
}

// idSeq checks an SSE id ("<turn>:<seq>") and returns its seq.
func idSeq(t *testing.T, turnID, id string) int {
	t.Helper()
	tid, n, ok := strings.Cut(id, ":")
	seq, err := strconv.Atoi(n)
	if !ok || err != nil || tid != turnID {
		t.Fatalf("event id %q is not %s:<seq>", id, turnID)
	}
	return seq
}

func TestStreamResumesOnAnotherReplica(t *testing.T) {
	var events []servertest.Event
	var want strings.Builder
	for i := range 30 {
		s := fmt.Sprintf("w%d ", i)
		want.WriteString(s)
		events = append(events, servertest.Text(s), servertest.Pause(5*time.Millisecond))
	}
	eachEngine(t, func(t *testing.T, engine string) {
		a, b := replicas(t, engine, time.Minute,
			servertest.Turn{Match: "count", Events: append(slices.Clone(events), servertest.Call("c1", "lookup", `{"query":"q"}`))},
			servertest.Turn{Match: "count", Step: 1, Events: []servertest.Event{servertest.Text("end.")}})
		conv := a.newConversation(t)

		// Read six events from replica a, then the connection drops.
		n := 0
		first := a.chat(t, context.Background(), conv, "count to thirty", func(map[string]any) bool { n++; return n < 6 })
		if len(first.events) != 6 {
			t.Fatalf("first stream = %d %s", first.status, first.raw)
		}
		if first.turnID == "" {
			t.Fatal("no Toolport-Turn-Id header")
		}
		for i := range first.ids {
			if got := idSeq(t, first.turnID, first.ids[i]); got != i+1 {
				t.Fatalf("event %d has seq %d", i, got)
			}
		}
		// Read one more from replica b, drop again, then the rest from b's
		// other endpoint.
		path := "/api/conversations/" + conv + "/turns/" + first.turnID + "/events"
		res := b.get(t, context.Background(), path, map[string]string{"Last-Event-ID": first.ids[len(first.ids)-1]})
		second := readStream(t, res, func(map[string]any) bool { return false })
		res.Body.Close()
		if len(second.events) != 1 {
			t.Fatalf("second stream = %d %s", second.status, second.raw)
		}
		third := b.resume(t, "/api/conversations/"+conv+"/stream", second.ids[0])

		ids := slices.Concat(first.ids, second.ids, third.ids)
		evs := slices.Concat(first.events, second.events, third.events)
		for i, id := range ids {
			if got := idSeq(t, first.turnID, id); got != i+1 {
				t.Fatalf("event %d of the joined streams has seq %d (ids %v)", i, got, ids)
			}
		}
		var text strings.Builder
		for _, ev := range evs {
			if ev["type"] == "text_delta" {
				text.WriteString(ev["content"].(string))
			}
		}
		if got := text.String(); got != want.String()+"end." {
			t.Errorf("joined text = %q, want %q", got, want.String()+"end.")
		}
		if last := evs[len(evs)-1]; last["type"] != "message_end" || last["stopReason"] != "end_turn" {
			t.Errorf("joined stream does not end with message_end: %v", last)
		}
		if evs[0]["type"] != "message_start" || slices.IndexFunc(evs, func(e map[string]any) bool { return e["type"] == "tool_call_end" }) < 0 {
			t.Errorf("joined stream lacks message_start or the tool call: %v", evs)
		}
		// Every event exactly once: the log holds as many as were joined.
		logged, err := b.db.TurnEvents(context.Background(), first.turnID, 0, 1000)
		if err != nil || len(logged) != len(evs) {
			t.Errorf("log has %d events (%v), the joined streams %d", len(logged), err, len(evs))
		}
		// Resuming after the end sends nothing more.
		res = b.get(t, context.Background(), path, map[string]string{"Last-Event-ID": ids[len(ids)-1]})
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Errorf("resume after the last event = %d, want 204", res.StatusCode)
		}
		for _, bad := range []string{"x", first.turnID + ":-1", "other:1", strings.Repeat("9", 200)} {
			res := b.get(t, context.Background(), path, map[string]string{"Last-Event-ID": bad})
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("Last-Event-ID %q = %d, want 400", bad, res.StatusCode)
			}
		}
		res = b.get(t, context.Background(), "/api/conversations/nope/turns/"+first.turnID+"/events", nil)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("turn under another conversation = %d, want 404", res.StatusCode)
		}
	})
}

func TestDeadReplicaReleasesItsConversation(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		const lease = time.Minute
		clock := turntest.NewClock(time.Now())
		// "quick" comes first: the dead turn's user message has no answer
		// the model is shown, so the next request carries both texts.
		a, b := replicasOn(t, engine, lease, clock,
			servertest.Turn{Match: "quick", Events: []servertest.Event{servertest.Text("Done.")}}, slowTurn)
		conv := a.newConversation(t)
		tid, _ := startSlowTurn(t, a, conv)
		// The process dies: its connections close with it (on SQLite the
		// handle is b's too, so only the server stops).
		if engine == storetest.Postgres {
			a.db.Close()
		}
		a.srv.Kill()

		// Replica b can start a turn once the lease has lapsed; until then
		// it gets 409.
		clock.Advance(lease - time.Second) // b's sweeper runs; the lease holds
		if status, body := b.do(t, "POST", "/api/conversations/"+conv+"/messages", `{"content":"quick one"}`); status != http.StatusConflict {
			t.Fatalf("turn on the surviving replica before the lease lapsed = %d %s, want 409", status, body)
		}
		clock.Advance(2 * time.Second)
		s := b.chat(t, context.Background(), conv, "quick one", nil)
		if s.status != http.StatusOK {
			t.Fatalf("turn on the surviving replica after the lease lapsed = %d %s", s.status, s.raw)
		}
		if end := s.first("message_end"); end == nil || end["stopReason"] != "end_turn" {
			t.Errorf("new turn = %s", s.raw)
		}
		old, err := b.db.GetTurn(context.Background(), tid)
		if err != nil || old.State != store.TurnIncomplete {
			t.Errorf("dead turn = %+v, %v; want incomplete", old, err)
		}
		// Its stream, resumed, ends with the error that says why.
		rest := b.resume(t, "/api/conversations/"+conv+"/turns/"+tid+"/events", tid+":1")
		if got := rest.types(); len(got) < 2 || got[len(got)-2] != "error" || got[len(got)-1] != "message_end" || rest.first("error")["code"] != "TURN_LOST" {
			t.Errorf("dead turn's stream = %s", rest.raw)
		}
		c, err := b.db.GetConversation(context.Background(), conv)
		if err != nil || len(c.Messages) != 4 {
			t.Fatalf("messages = %+v, %v", c.Messages, err)
		}
		// The dead turn's answer, the one its log announced, is stored right
		// after its question, before the new turn's: the conversation stays
		// claimed until the lost turn's answer is saved.
		var msgID string
		evs, err := b.db.TurnEvents(context.Background(), tid, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			var head struct{ Type, MessageID string }
			if json.Unmarshal(ev.Data, &head) == nil && head.Type == "message_start" {
				msgID = head.MessageID
			}
		}
		lost := c.Messages[1]
		if lost.ID != msgID || lost.Role != store.RoleAssistant || !lost.Incomplete || lost.Error == nil || lost.Error.Code != "TURN_LOST" {
			t.Errorf("message after the dead turn's question = %+v, want its answer %q, incomplete with TURN_LOST", lost, msgID)
		}
		if c.Messages[2].Role != store.RoleUser || c.Messages[3].Role != store.RoleAssistant {
			t.Errorf("the new turn's messages = %+v, %+v", c.Messages[2], c.Messages[3])
		}
	})
}

func TestReadyzFailsWhileARequiredEngineIsDown(t *testing.T) {
	eachEngine(t, testReadyz)
}

func testReadyz(t *testing.T, engine string) {
	var cacheDown atomic.Bool
	e := newEnv(t, envOptions{dsn: storetest.DSN(t, engine), config: func(c *server.Config) {
		c.Checks = []server.Check{{Name: "cache", Check: func(context.Context) error {
			if cacheDown.Load() {
				return errors.New("cache: connection refused")
			}
			return nil
		}}}
	}})
	health := func() (int, map[string]any, int) {
		code, body := e.do(t, "GET", "/healthz", "")
		var h map[string]any
		json.Unmarshal(body, &h)
		rcode, _ := e.do(t, "GET", "/readyz", "")
		return code, h, rcode
	}
	var code, ready int
	var h map[string]any
	// On PostgreSQL the LISTEN connection comes up in the background.
	waitForProcess(t, "every engine up", func() bool {
		code, h, ready = health()
		return h["status"] == "ok"
	})
	if code != 200 || ready != 200 || !strings.Contains(fmt.Sprint(h["checks"]), "turn-notes") {
		t.Errorf("all up: healthz %d %v, readyz %d", code, h, ready)
	}
	cacheDown.Store(true)
	code, h, ready = health()
	if code != 200 || ready != 200 || h["status"] != "degraded" || !strings.Contains(fmt.Sprint(h["checks"]), "connection refused") {
		t.Errorf("optional engine down: healthz %d %v, readyz %d; want 200 degraded, 200", code, h, ready)
	}
	e.db.Close()
	code, h, ready = health()
	if code != 200 || ready != http.StatusServiceUnavailable || h["status"] != "unavailable" {
		t.Errorf("store down: healthz %d %v, readyz %d; want 200 unavailable, 503", code, h, ready)
	}
	checks, _ := h["checks"].([]any)
	if len(checks) != 3 || fmt.Sprint(checks[0]) != fmt.Sprint(map[string]any{"name": "store", "required": true, "status": "down", "error": "the database does not answer"}) {
		t.Errorf("checks = %v", checks)
	}
}

// An ended turn's log is deleted after TurnEventsRetention, by the sweeper.
func TestEndedTurnsLogIsDeletedAfterRetention(t *testing.T) {
	const lease, retention = time.Hour, time.Minute
	clock := turntest.NewClock(time.Now())
	e := newEnv(t, envOptions{
		turns:  []servertest.Turn{{Match: "hi", Events: []servertest.Event{servertest.Text("Hello.")}}},
		config: func(c *server.Config) { c.TurnLease = lease; c.TurnEventsRetention = retention },
		clock:  clock,
	})
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "hi", nil)
	if s.first("message_end") == nil {
		t.Fatalf("turn = %s", s.raw)
	}
	e.waitTurns(t)
	path := "/api/conversations/" + conv + "/turns/" + s.turnID + "/events"
	if status, body := e.do(t, "GET", path, ""); status != http.StatusOK {
		t.Fatalf("the ended turn's log before its retention = %d %s", status, body)
	}
	// The sweeper's first pass comes at lease/2. The turn's end is stamped
	// by the store's clock; this clock stood at the test's start, so half
	// an hour on is well past it plus the retention.
	clock.Advance(lease/2 - time.Second)
	if status, _ := e.do(t, "GET", path, ""); status != http.StatusOK {
		t.Fatalf("the log went before the sweeper's pass: %d", status)
	}
	clock.Advance(time.Second)
	if status, body := e.do(t, "GET", path, ""); status != http.StatusNotFound {
		t.Errorf("the log after the sweeper's pass = %d %s, want 404", status, body)
	}
	if evs, err := e.db.TurnEvents(context.Background(), s.turnID, 0, 10); err != nil || len(evs) != 0 {
		t.Errorf("events left: %d, %v", len(evs), err)
	}
	c, err := e.db.GetConversation(context.Background(), conv)
	if err != nil || len(c.Messages) != 2 {
		t.Errorf("the conversation must outlive its turn's log: %+v, %v", c.Messages, err)
	}
}

// renewFails is a store whose lease renewals fail while failing is set, as
// when a replica loses its database connection mid-turn; renewed gets the
// end of each lease that was renewed.
type renewFails struct {
	server.Store
	failing atomic.Bool
	renewed chan time.Time
}

func (r *renewFails) RenewTurns(ctx context.Context, owner string, ids []string, until time.Time) (map[string]bool, error) {
	if r.failing.Load() {
		return nil, errors.New("connection reset")
	}
	kept, err := r.Store.RenewTurns(ctx, owner, ids, until)
	if err == nil && len(kept) > 0 {
		select {
		case r.renewed <- until:
		default:
		}
	}
	return kept, err
}

// A replica that cannot renew a turn's lease gives the turn up at the last
// renewal before the lease lapses, instead of writing on into a
// conversation another replica may already have taken over.
func TestTurnWhoseLeaseCannotBeRenewedStops(t *testing.T) {
	const lease = 15 * time.Second // renewed every 5 s of the clock
	clock := turntest.NewClock(time.Now())
	var rs *renewFails
	e := newEnv(t, envOptions{turns: []servertest.Turn{slowTurn}, clock: clock,
		config: func(c *server.Config) {
			c.TurnLease = lease
			rs = &renewFails{Store: c.Store, renewed: make(chan time.Time, 1)}
			c.Store = rs
		}})
	conv := e.newConversation(t)
	_, done := startSlowTurn(t, e, conv)
	// A turn given up ends asynchronously, so this can only catch an end
	// that came before it is called; it never fails a turn that runs.
	running := func() {
		t.Helper()
		select {
		case s := <-done:
			t.Fatalf("the turn ended at %v: %s", clock.Now(), s.raw)
		default:
		}
	}
	// Renewals work: the turn outlives several leases, each renewal
	// running inside Advance.
	for range 9 {
		clock.Advance(lease / 3)
		select {
		case until := <-rs.renewed:
			if want := clock.Now().Add(lease); !until.Equal(want) {
				t.Fatalf("lease renewed until %v, want %v", until, want)
			}
		default:
			t.Fatalf("no renewal at %v", clock.Now())
		}
		running()
	}
	rs.failing.Store(true)
	// The lease now ends at clock.Now()+lease. The first failed renewal
	// still has a try left before then; the second has none and gives the
	// turn up, a renewal period before the lease would lapse.
	clock.Advance(lease / 3)
	running()
	clock.Advance(lease / 3)
	var s *stream
	select {
	case s = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the turn went on although its lease could not be renewed")
	}
	end := s.first("message_end")
	if end == nil || end["stopReason"] == "end_turn" {
		t.Fatalf("the given-up turn's stream: %s", s.raw)
	}
	e.waitTurns(t)
	if _, err := e.db.RunningTurn(context.Background(), conv); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the conversation after the turn was given up: RunningTurn = %v, want store.ErrNotFound", err)
	}
}
