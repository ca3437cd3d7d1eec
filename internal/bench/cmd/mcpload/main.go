// Command mcpload measures what a hostile MCP client costs `toolport serve`
// over /mcp: it starts the server from the binary it is given, opens many
// sessions of a pre-2025-06-18 revision (the ones with JSON-RPC batches),
// then posts batches of tools/list from a few of them at once, and reports
// the sessions kept or refused, the bytes of the batches' answers and the
// server's peak RSS (VmHWM).
//
//	go build -o /tmp/toolport ./cmd/toolport
//	go run ./internal/bench/cmd/mcpload /tmp/toolport
//
// It needs Linux (/proc) and talks to the server on loopback only.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/bench/proc"
)

// revision is the last MCP revision with JSON-RPC batches.
const revision = "2025-03-26"

type config struct {
	sessions, batches, members, parallel int
}

func main() {
	var c config
	flag.IntVar(&c.sessions, "sessions", 3000, "sessions to open")
	flag.IntVar(&c.batches, "batches", 8, "batches to post")
	flag.IntVar(&c.members, "members", 3170, "tools/list calls per batch (3170 are 149 KB)")
	flag.IntVar(&c.parallel, "parallel", 4, "batches posted at once")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: mcpload [-sessions 3000] [-batches 8] [-members 3170] [-parallel 4] TOOLPORT_BINARY")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || c.sessions < 1 || c.batches < 0 || c.members < 1 || c.parallel < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), c); err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

func run(bin string, c config) error {
	srv, err := proc.StartServe(context.Background(), bin, io.Discard)
	if err != nil {
		return err
	}
	defer srv.Close()
	endpoint := srv.URL + "/mcp"
	pid := srv.Pid
	fmt.Printf("%s: idle VmHWM %s\n", filepath.Base(bin), proc.Status(pid, "VmHWM"))

	// Sessions, 8 initializes at a time.
	start := time.Now()
	ids := make([]string, c.sessions)
	var refused atomic.Int64
	work := make(chan int)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for range 8 {
		wg.Go(func() {
			for i := range work {
				id, status, err := initialize(endpoint)
				switch {
				case err != nil:
					errOnce.Do(func() { firstErr = err })
				case status != http.StatusOK:
					refused.Add(1)
				default:
					ids[i] = id
				}
			}
		})
	}
	for i := range c.sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	live := 0
	for _, id := range ids {
		if id != "" && post(endpoint, id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, io.Discard) == http.StatusOK {
			live++
		}
	}
	fmt.Printf("%d sessions opened in %v (%d refused); %d still answer; VmHWM %s, VmRSS %s\n",
		c.sessions, time.Since(start).Round(time.Millisecond), refused.Load(), live,
		proc.Status(pid, "VmHWM"), proc.Status(pid, "VmRSS"))

	// Batches of tools/list from the last sessions opened, c.parallel at once.
	var batch bytes.Buffer
	batch.WriteByte('[')
	for i := range c.members {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
	}
	batch.WriteByte(']')
	var sessions []string
	for i := len(ids) - 1; i >= 0 && len(sessions) < c.parallel; i-- {
		if ids[i] != "" {
			sessions = append(sessions, ids[i])
		}
	}
	if len(sessions) == 0 {
		return errors.New("no session to post batches from")
	}
	start = time.Now()
	var (
		answered, largest atomic.Int64
		statuses          sync.Map
	)
	jobs := make(chan int)
	for w := range c.parallel {
		wg.Go(func() {
			for range jobs {
				n := &countWriter{}
				status := post(endpoint, sessions[w%len(sessions)], batch.String(), n)
				v, _ := statuses.LoadOrStore(status, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
				answered.Add(n.n)
				for old := largest.Load(); n.n > old && !largest.CompareAndSwap(old, n.n); old = largest.Load() {
				}
			}
		})
	}
	for i := range c.batches {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var codes []string
	statuses.Range(func(k, v any) bool {
		codes = append(codes, fmt.Sprintf("%d×%d", v.(*atomic.Int64).Load(), k))
		return true
	})
	fmt.Printf("%d batches of %d tools/list (%d bytes each) in %v, statuses %s; largest answer %d bytes, %d in all; peak RSS (VmHWM) %s\n",
		c.batches, c.members, batch.Len(), time.Since(start).Round(time.Millisecond), strings.Join(codes, " "),
		largest.Load(), answered.Load(), proc.Status(pid, "VmHWM"))
	return nil
}

// initialize opens a session and sends notifications/initialized.
func initialize(endpoint string) (id string, status int, err error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + revision +
		`","capabilities":{},"clientInfo":{"name":"mcpload","version":"0"}}}`
	resp, err := send(endpoint, "", body)
	if err != nil {
		return "", 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", resp.StatusCode, nil
	}
	post(endpoint, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, io.Discard)
	return id, resp.StatusCode, nil
}

// post sends body on session id and copies the answer to w; it returns the
// status, or 0 when the request failed.
func post(endpoint, id, body string, w io.Writer) int {
	resp, err := send(endpoint, id, body)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(w, resp.Body)
	return resp.StatusCode
}

func send(endpoint, id, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", revision)
	}
	return http.DefaultClient.Do(req)
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
