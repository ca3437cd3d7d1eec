// Command amplify measures what one oversized tool call costs the server: it
// starts `toolport serve` from the binary it is given, posts N parallel calls
// whose arguments carry 95,000 unknown keys each (about 1 MB), and reports the
// response size, the logs written and the server's peak RSS (VmHWM).
//
//	go build -o /tmp/toolport ./cmd/toolport
//	go run ./internal/bench/cmd/amplify /tmp/toolport
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
	"sync"
	"time"

	"github.com/toolport/toolport/internal/bench/proc"
)

func main() {
	parallel := flag.Int("n", 20, "parallel calls")
	keys := flag.Int("keys", 95_000, "unknown keys per call")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: amplify [-n 20] [-keys 95000] TOOLPORT_BINARY")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *parallel < 1 || *keys < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *parallel, *keys); err != nil {
		fmt.Fprintln(os.Stderr, "amplify:", err)
		os.Exit(1)
	}
}

func run(bin string, parallel, keys int) error {
	logs := &lineCounter{}
	srv, err := proc.StartServe(context.Background(), bin, logs)
	if err != nil {
		return err
	}
	defer srv.Close()
	base := srv.URL

	var args bytes.Buffer
	args.WriteString(`{"query":"trains"`)
	for i := range keys {
		fmt.Fprintf(&args, `,"k%05d":1`, i)
	}
	args.WriteByte('}')
	body := args.Bytes()
	pid := srv.Pid
	fmt.Printf("%s: request %d bytes; idle VmHWM %s\n", filepath.Base(bin), len(body), proc.Status(pid, "VmHWM"))

	start := time.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		sizes []int64
		errs  []error
	)
	for range parallel {
		wg.Go(func() {
			resp, err := http.Post(base+"/api/tools/web_search_brave", "application/json", bytes.NewReader(body))
			var n int64
			if err == nil {
				n, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			sizes = append(sizes, n)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	longest, total := logs.stats()
	fmt.Printf("%d parallel calls in %v; largest response %d bytes; longest log line %d bytes, %d bytes of logs; peak RSS (VmHWM) %s\n",
		parallel, time.Since(start).Round(time.Millisecond), maxOf(sizes), longest, total, proc.Status(pid, "VmHWM"))
	return nil
}

func maxOf(v []int64) int64 {
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// lineCounter counts what the server logs: the longest line and the total.
type lineCounter struct {
	mu                  sync.Mutex
	cur, longest, total int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	for _, b := range p {
		if b == '\n' {
			c.longest = max(c.longest, c.cur)
			c.cur = 0
		} else {
			c.cur++
		}
	}
	return len(p), nil
}

func (c *lineCounter) stats() (longest, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.longest, c.cur), c.total
}
