package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store"
)

// peakWriter is a ResponseWriter that discards the body and records the
// largest HeapAlloc seen at any write: what the export holds while it
// answers.
type peakWriter struct {
	h      http.Header
	status int
	n      int64
	peak   uint64
}

func (w *peakWriter) Header() http.Header { return w.h }
func (w *peakWriter) WriteHeader(s int)   { w.status = s }
func (w *peakWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.sample()
	w.n += int64(len(p))
	return len(p), nil
}

func (w *peakWriter) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.peak = max(w.peak, ms.HeapAlloc)
}

// vmHWM is the process's peak resident set in KiB from /proc (0 elsewhere).
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// Exporting a large conversation holds about one message, not the whole
// conversation and its rendering (a 320 MB one took 2-3 GB). The heap is
// sampled at every write of the response; with GOGC at 20 the garbage
// between collections stays small, so what it holds shows.
// TOOLPORT_EXPORT_MESSAGES sets the size (messages of 100 KB; default 400).
func TestExportMemoryBounded(t *testing.T) {
	n := 400
	if v := os.Getenv("TOOLPORT_EXPORT_MESSAGES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	const size = 100 << 10
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	id := e.newConversation(t)
	text := strings.Repeat("All the sad songs, one more time. ", size/34)
	for i := range n {
		block := fmt.Sprintf(`[{"type":"text","text":%q}]`, text)
		if i%2 == 1 {
			block = fmt.Sprintf(`[{"type":"tool_result","tool_use_id":"tu_%d","content":{"text":%q}}]`, i, text)
		}
		if _, err := e.db.AppendMessage(ctx, store.Message{ConversationID: id, Role: store.RoleUser,
			Content: json.RawMessage(block)}); err != nil {
			t.Fatal(err)
		}
	}
	convBytes := uint64(n * size)
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	for _, format := range []string{"json", "markdown"} {
		req, err := http.NewRequest("GET", "/api/conversations/"+id+"/export?format="+format, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "localhost"
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		// Writing 5 resets the peak resident set (Linux), so that the
		// figure logged is the export's, not the set-up's.
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		w := &peakWriter{h: http.Header{}}
		e.srv.Handler().ServeHTTP(w, req)
		w.sample()
		if w.status != 200 || w.n < int64(convBytes)/50 {
			t.Fatalf("%s: status %d, %d bytes", format, w.status, w.n)
		}
		grew := int64(w.peak) - int64(base)
		t.Logf("%s: %d messages (%d MB), %d MB written: heap peak %.1f MB over a base of %.1f MB; peak RSS %d MB",
			format, n, convBytes>>20, w.n>>20, float64(grew)/(1<<20), float64(base)/(1<<20), vmHWM()>>10)
		if grew > int64(convBytes/4) {
			t.Errorf("%s: the export's heap grew by %d MB for a conversation of %d MB: it holds the conversation",
				format, grew>>20, convBytes>>20)
		}
	}
}

// failingStream is a store whose conversation reads fail after the first
// message, as when the database goes away mid-export.
type failingStream struct{ server.Store }

func (f failingStream) StreamConversation(ctx context.Context, id string, head func(store.Conversation, *store.Usage) error, each func(store.Message) error) error {
	n := 0
	return f.Store.StreamConversation(ctx, id, head, func(m store.Message) error {
		if n++; n > 1 {
			return errors.New("connection reset")
		}
		return each(m)
	})
}

// An export that fails once it has started is cut off, so that the client
// sees a failed download rather than a short file that looks whole.
func TestExportFailingMidwayIsAborted(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *server.Config) { c.Store = failingStream{c.Store} }})
	id := exportFixture(t, e)
	for _, format := range []string{"json", "markdown"} {
		// Until the first 64 KB are flushed not even the status has gone
		// out, so the request itself fails; either way it must fail.
		res, err := http.Get(e.url + "/api/conversations/" + id + "/export?format=" + format)
		if err != nil {
			continue
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil {
			t.Errorf("%s: status %d and a whole-looking body of %d bytes, want a broken download", format, res.StatusCode, len(body))
		}
	}
	// Before the answer starts, a failure is an ordinary error answer.
	if status, body := e.do(t, "GET", "/api/conversations/nope/export?format=json", ""); status != 404 {
		t.Errorf("unknown conversation: %d %s", status, body)
	}
}

// doneStream is a store that reports when a conversation read ends.
type doneStream struct {
	server.Store
	done chan error
}

func (d doneStream) StreamConversation(ctx context.Context, id string, head func(store.Conversation, *store.Usage) error, each func(store.Message) error) error {
	err := d.Store.StreamConversation(ctx, id, head, each)
	d.done <- err
	return err
}

// A client that stops reading an export does not hold the store's read
// open: the write that blocks runs into the write timeout, and the read
// ends with its error.
func TestExportToStalledClientEnds(t *testing.T) {
	d := doneStream{done: make(chan error, 1)}
	e := newEnv(t, envOptions{config: func(c *server.Config) {
		d.Store, c.Store, c.WriteTimeout = c.Store, &d, 200*time.Millisecond
	}})
	id := e.newConversation(t)
	text := strings.Repeat("x", 1<<20)
	for range 32 { // far more than the sockets' buffers hold
		if _, err := e.db.AppendMessage(context.Background(), store.Message{ConversationID: id, Role: store.RoleUser,
			Content: json.RawMessage(`[{"type":"text","text":"` + text + `"}]`)}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Ask, then never read.
	if _, err := io.WriteString(conn, "GET /api/conversations/"+id+"/export?format=json HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		if err == nil {
			t.Error("the export to a client that reads nothing finished without an error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the export to a stalled client still holds its read after 20 s (write timeout 200 ms)")
	}
}
