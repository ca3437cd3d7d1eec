package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/mcpserver"
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
	f := newFixture(t)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- f.newServer(t, mcpserver.Options{}).Run(context.Background(),
			&mcpserver.StdioTransport{Reader: serverIn, Writer: serverOut, MaxLineBytes: maxLine})
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
