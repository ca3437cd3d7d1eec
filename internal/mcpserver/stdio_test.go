package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

// garbage is one malformed line and the JSON-RPC error it must get.
type garbage struct {
	name, line string
	code       int
	id         string // the answer's id, as JSON
}

// garbageLines are the malformed lines of every kind; maxLine is the
// server's line limit.
func garbageLines(maxLine int) []garbage {
	return []garbage{
		{name: "invalid JSON", line: `{"jsonrpc":"2.0","id":1,"method":`, code: -32700, id: "null"},
		{name: "NaN", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":NaN}}`, code: -32700, id: "null"},
		{name: "two values on a line", line: `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, code: -32700, id: "null"},
		{name: "missing jsonrpc", line: `{"id":4,"method":"ping"}`, code: -32600, id: "4"},
		{name: "missing jsonrpc, string id", line: `{"id":"four","method":"ping"}`, code: -32600, id: `"four"`},
		{name: "wrong jsonrpc", line: `{"jsonrpc":"1.0","id":5,"method":"ping"}`, code: -32600, id: "5"},
		{name: "not an object", line: `42`, code: -32600, id: "null"},
		{name: "method not a string", line: `{"jsonrpc":"2.0","id":6,"method":1}`, code: -32600, id: "6"},
		{name: "id an object", line: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, code: -32600, id: "null"},
		{name: "id fractional", line: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, code: -32600, id: "null"},
		{name: "neither request nor response", line: `{"jsonrpc":"2.0"}`, code: -32600, id: "null"},
		{name: "empty batch", line: `[]`, code: -32600, id: "null"},
		{name: "depth 1001", line: `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}}`,
			code: -32600, id: "null"},
		{name: "oversized line", line: `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", maxLine) + `"}}`,
			code: -32600, id: "null"},
	}
}

// response is a JSON-RPC response as the client reads it.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioSession is a raw client of a server on a pair of pipes.
type stdioSession struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func (s *stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// next returns the next line the server wrote.
func (s *stdioSession) next() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(waitLimit):
		s.t.Fatal("no answer from the server")
	}
	return ""
}

func (s *stdioSession) nextResponse() response {
	s.t.Helper()
	l := s.next()
	var r response
	if err := json.Unmarshal([]byte(l), &r); err != nil || r.JSONRPC != "2.0" {
		s.t.Fatalf("not a JSON-RPC response: %.300s (%v)", l, err)
	}
	return r
}

func readLines(r io.Reader) chan string {
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

func startStdio(t *testing.T, maxLine int) *stdioSession {
	return startStdioWith(t, mcpserver.StdioTransport{MaxLineBytes: maxLine})
}

// startStdioWith serves a session on pipes with the limits of tr.
func startStdioWith(t *testing.T, tr mcpserver.StdioTransport) *stdioSession {
	f := newFixture(t)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	tr.Reader, tr.Writer = serverIn, serverOut
	done := make(chan error, 1)
	go func() {
		done <- f.newServer(t, mcpserver.Options{}).Run(context.Background(), &tr)
	}()
	t.Cleanup(func() {
		clientOut.Close()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Error("the server did not end when its input closed")
		}
		serverOut.Close()
	})
	return &stdioSession{t: t, in: clientOut, lines: readLines(clientIn)}
}

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
}

// expectError checks that r is the answer to g.
func expectError(t *testing.T, g garbage, r response) {
	t.Helper()
	if r.Error == nil || r.Error.Code != g.code || string(r.ID) != g.id {
		t.Errorf("%s: got %s %+v, want error %d with id %s", g.name, r.ID, r.Error, g.code, g.id)
	}
}

func TestStdioAnswersMalformedLinesAndGoesOn(t *testing.T) {
	const maxLine = 64 << 10
	s := startStdio(t, maxLine)
	s.send(initialize("2025-11-25"))
	if r := s.nextResponse(); string(r.ID) != `"init"` || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, g := range garbageLines(maxLine) {
		s.send(g.line)
		expectError(t, g, s.nextResponse())
	}
	s.send("")     // a blank line is skipped, not answered
	s.send("  \r") // nor one of blanks
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	r := s.nextResponse()
	if string(r.ID) != "9" || r.Error != nil || !strings.Contains(string(r.Result), `"echo"`) {
		t.Fatalf("tools/list after the garbage: %s %+v %.200s", r.ID, r.Error, r.Result)
	}
}

func TestStdioGarbageBeforeInitialize(t *testing.T) {
	// A malformed line before initialize must not keep initialize from
	// being answered.
	s := startStdio(t, 0)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize",`)
	expectError(t, garbage{name: "cut initialize", code: -32700, id: "null"}, s.nextResponse())
	s.send(initialize("2025-11-25"))
	if r := s.nextResponse(); string(r.ID) != `"init"` || r.Error != nil {
		t.Fatalf("initialize after garbage: %+v", r)
	}
}

func TestStdioBatches(t *testing.T) {
	t.Run("before 2025-06-18", func(t *testing.T) {
		s := startStdio(t, 0)
		s.send(initialize("2025-03-26"))
		s.nextResponse()
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		// Two calls, a notification and three bad members: one array holds
		// the two answers and the three errors.
		s.send(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"},` +
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},1,{"id":3,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
		var got []response
		if err := json.Unmarshal([]byte(s.next()), &got); err != nil {
			t.Fatalf("batch answer is not an array: %v", err)
		}
		var ids []string
		for _, r := range got {
			code := 0
			if r.Error != nil {
				code = r.Error.Code
			}
			ids = append(ids, fmt.Sprintf("%s:%d", r.ID, code))
		}
		want := map[string]bool{"1:0": true, "2:0": true, "null:-32600": true, "3:-32600": true}
		if len(ids) != 5 {
			t.Fatalf("batch answers %v, want 5", ids)
		}
		for _, id := range ids {
			if !want[id] {
				t.Errorf("unexpected answer %s in %v", id, ids)
			}
		}
		s.send(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`) // only a notification: no answer
		s.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
		if r := s.nextResponse(); string(r.ID) != "4" || r.Error != nil {
			t.Errorf("ping after batches: %+v", r)
		}
	})
	t.Run("2025-06-18 and later", func(t *testing.T) {
		s := startStdio(t, 0)
		s.send(initialize("2025-06-18"))
		s.nextResponse()
		s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
		expectError(t, garbage{name: "batch", code: -32600, id: "null"}, s.nextResponse())
		s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if r := s.nextResponse(); string(r.ID) != "2" || r.Error != nil {
			t.Errorf("ping after a refused batch: %+v", r)
		}
	})
}

// parseAnswers decodes every line the server wrote and indexes the answers by
// id.
func parseAnswers(t *testing.T, out string) map[string]response {
	t.Helper()
	got := map[string]response{}
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r response
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("not a JSON-RPC response: %.300s (%v)", l, err)
		}
		got[string(r.ID)] = r
	}
	return got
}

// lockedBuffer is a strings.Builder safe for the writes of the server and
// the reads of the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestStdioAnswersEverythingReadBeforeTheEnd(t *testing.T) {
	// A client writes its requests and closes its end at once: every call
	// read before the end of the input is answered, then the server ends.
	f := newFixture(t)
	lines := []string{
		initialize("2025-11-25"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`,
	}
	const calls = 8
	for i := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"call %d"}}}`, i, i))
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":"steps","method":"tools/call","params":{"name":"slow","arguments":{"steps":50}}}`)
	var out lockedBuffer
	err := mcpserver.RunStdio(context.Background(), f.newServer(t, mcpserver.Options{}), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	if err != nil {
		t.Fatalf("RunStdio = %v, want nil at the end of the input", err)
	}
	got := parseAnswers(t, out.String())
	if r, ok := got[`"init"`]; !ok || r.Error != nil {
		t.Errorf("initialize: %+v (present %v)", r, ok)
	}
	if r, ok := got[`"list"`]; !ok || r.Error != nil || !strings.Contains(string(r.Result), `"echo"`) {
		t.Errorf("tools/list: %+v (present %v)", r.Error, ok)
	}
	for i := range calls {
		r, ok := got[fmt.Sprint(i)]
		if !ok || r.Error != nil || !strings.Contains(string(r.Result), fmt.Sprintf(`"call %d"`, i)) {
			t.Errorf("call %d: present %v, %+v %.200s", i, ok, r.Error, r.Result)
		}
	}
	if r, ok := got[`"steps"`]; !ok || r.Error != nil || !strings.Contains(string(r.Result), `"steps":50`) {
		t.Errorf("slow call: present %v, %+v %.200s", ok, r.Error, r.Result)
	}
	if len(got) != calls+3 {
		t.Errorf("%d answers, want %d:\n%s", len(got), calls+3, out.String())
	}
}

func TestStdioDrainTimeout(t *testing.T) {
	// A call still running when the drain timeout passes is answered with
	// an error and canceled; the answers of the others are not held back.
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		const drain = 7 * time.Second
		in := strings.Join([]string{
			initialize("2025-11-25"),
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"hang","method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"hang":true}}}`,
			`{"jsonrpc":"2.0","id":"echo","method":"tools/call","params":{"name":"echo","arguments":{"text":"quick"}}}`,
		}, "\n") + "\n"
		var out lockedBuffer
		start := time.Now()
		err := mcpserver.ServeStdio(context.Background(), f.newServer(t, mcpserver.Options{}),
			&mcpserver.StdioTransport{Reader: strings.NewReader(in), Writer: &out, DrainTimeout: drain})
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil", err)
		}
		if waited := time.Since(start); waited != drain {
			t.Errorf("the server ended after %v, want the drain timeout %v", waited, drain)
		}
		got := parseAnswers(t, out.String())
		if r := got[`"echo"`]; r.Error != nil || !strings.Contains(string(r.Result), "quick") {
			t.Errorf("echo: %+v %.200s", r.Error, r.Result)
		}
		if r, ok := got[`"hang"`]; !ok || r.Error == nil || r.Error.Code != -32004 || !strings.Contains(r.Error.Message, "7s") {
			t.Errorf("hanging call: present %v, error %+v, want -32004 naming the timeout", ok, r.Error)
		}
		if len(got) != 3 {
			t.Errorf("%d answers, want 3 (one per call):\n%s", len(got), out.String())
		}
		select {
		case err := <-f.stopped:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the hanging tool saw %v, want its context canceled", err)
			}
		default:
			t.Error("the hanging tool was not canceled")
		}
	})
}

func TestStdioBatchBounds(t *testing.T) {
	batchOf := func(n int, method string) string {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i, method))
		}
		return "[" + strings.Join(members, ",") + "]"
	}
	legacy := func(s *stdioSession) {
		s.send(initialize("2025-03-26"))
		s.nextResponse()
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}

	t.Run("too many messages", func(t *testing.T) {
		s := startStdio(t, 0)
		legacy(s)
		s.send(batchOf(mcpserver.DefaultMaxBatchMessages+1, "ping"))
		r := s.nextResponse() // one error, not an array of answers
		if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "64") {
			t.Fatalf("answer to an oversized batch: %s %+v", r.ID, r.Error)
		}
		s.send(batchOf(mcpserver.DefaultMaxBatchMessages, "ping")) // at the bound: answered
		var got []response
		if err := json.Unmarshal([]byte(s.next()), &got); err != nil || len(got) != mcpserver.DefaultMaxBatchMessages {
			t.Fatalf("batch at the bound: %d answers (%v), want %d", len(got), err, mcpserver.DefaultMaxBatchMessages)
		}
	})

	t.Run("answer bytes", func(t *testing.T) {
		probe := startStdio(t, 0)
		legacy(probe)
		probe.send(`{"jsonrpc":"2.0","id":"probe","method":"tools/list"}`)
		size := len(probe.next())
		// Room for two answers of tools/list, not three.
		s := startStdioWith(t, mcpserver.StdioTransport{MaxBatchAnswerBytes: 2*size + size/2})
		legacy(s)
		s.send(batchOf(5, "tools/list"))
		var got []response
		if err := json.Unmarshal([]byte(s.next()), &got); err != nil || len(got) != 5 {
			t.Fatalf("%d answers (%v), want 5", len(got), err)
		}
		wantBudgetAnswers(t, got, 2, 3)
	})
}

func TestServeStdioLeavesAToolThatIgnoresCancellation(t *testing.T) {
	// A tool deaf to cancellation must not keep the process alive: once its
	// call is answered with an error, ServeStdio waits a bounded time for it,
	// then returns.
	synctest.Test(t, func(t *testing.T) {
		stuck := make(chan struct{})
		reg := tool.NewRegistry(tool.WithRetryDelay(0))
		if err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "deaf", Description: "Ignores its context.", Pack: "alpha"},
			func(ctx context.Context, in flakyIn) (flakyOut, error) {
				<-stuck
				return flakyOut{OK: true}, nil
			}))); err != nil {
			t.Fatal(err)
		}
		srv, err := mcpserver.New(reg, mcpserver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		const drain = time.Second
		in := initialize("2025-11-25") + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deaf","arguments":{}}}` + "\n"
		var out lockedBuffer
		start := time.Now()
		err = mcpserver.ServeStdio(context.Background(), srv, &mcpserver.StdioTransport{Reader: strings.NewReader(in), Writer: &out, DrainTimeout: drain})
		waited := time.Since(start)
		close(stuck) // let the tool's goroutine end inside the bubble
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil", err)
		}
		if waited <= drain || waited > drain+10*time.Second {
			t.Errorf("ServeStdio returned after %v, want a bounded wait past the drain timeout %v", waited, drain)
		}
		if r := parseAnswers(t, out.String())["1"]; r.Error == nil || r.Error.Code != -32004 {
			t.Errorf("the deaf call's answer: %+v, want -32004", r.Error)
		}
		synctest.Wait()
	})
}

// wantBudgetAnswers checks a batch's answers under an answer-byte budget:
// full whole tools/list answers, then dropped ones answered -32000 with
// their ids (both transports share the rule).
func wantBudgetAnswers(t *testing.T, got []response, full, dropped int) {
	t.Helper()
	var gotFull, gotDropped int
	for _, r := range got {
		switch {
		case r.Error == nil && strings.Contains(string(r.Result), `"echo"`):
			gotFull++
		case r.Error != nil && r.Error.Code == -32000 && string(r.ID) != "null":
			gotDropped++
		default:
			t.Errorf("unexpected answer %s %+v", r.ID, r.Error)
		}
	}
	if gotFull != full || gotDropped != dropped {
		t.Errorf("%d answers and %d dropped, want %d and %d", gotFull, gotDropped, full, dropped)
	}
}
