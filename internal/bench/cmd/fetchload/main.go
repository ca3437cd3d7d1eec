// Command fetchload measures the memory web_fetch needs under a burst: it
// serves one large HTML page on 127.0.0.1, fires -n concurrent web_fetch
// calls at it through one tool instance (configured from the environment
// like the real commands; set TOOLPORT_FETCH_ALLOW_PRIVATE=1 so loopback
// may be fetched), and prints the outcome of the calls and the process's
// peak resident set size (VmHWM).
//
//	TOOLPORT_FETCH_ALLOW_PRIVATE=1 go run ./internal/bench/cmd/fetchload -n 100 -size 9
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/bench/proc"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/tool"
)

func main() {
	n := flag.Int("n", 100, "concurrent calls")
	sizeMiB := flag.Int("size", 9, "page size in MiB")
	flag.Parse()
	if err := run(*n, *sizeMiB); err != nil {
		fmt.Fprintln(os.Stderr, "fetchload:", err)
		os.Exit(1)
	}
}

func run(n, sizeMiB int) error {
	page := bigPage(sizeMiB << 20)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	defer srv.Close()

	c, err := config.New(os.Getenv, os.TempDir())
	if err != nil {
		return err
	}
	cfg, err := webfetch.ConfigFromEnv(c)
	if err != nil {
		return err
	}
	reg := tool.NewRegistry()
	if err := reg.Register(webfetch.Tool(cfg)); err != nil {
		return err
	}
	base := proc.StatusBytes(os.Getpid(), "VmHWM")
	args, _ := json.Marshal(map[string]any{"url": "http://" + l.Addr().String() + "/article", "limit": 5})

	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	start := time.Now()
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := reg.Call(ctx, webfetch.Name, args)
			key := "ok"
			if !res.OK() {
				key = string(res.Err.Code)
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, outcomes[k]))
	}
	fmt.Printf("calls=%d page=%dMiB elapsed=%s outcomes: %s\n", n, sizeMiB, elapsed.Round(time.Millisecond), strings.Join(parts, " "))
	fmt.Printf("peak RSS (VmHWM): %d MiB (%d MiB before the burst, page held by the server included)\n", proc.StatusBytes(os.Getpid(), "VmHWM")>>20, base>>20)
	return nil
}

// bigPage builds a page of about size bytes shaped like the large pages of
// today's web: a readable article of a few thousand words, and most of the
// bytes in inline application state (a JSON <script>, as server-rendered
// frameworks embed), which the extractor must parse past but not keep.
func bigPage(size int) []byte {
	var b strings.Builder
	b.Grow(size + 64<<10)
	b.WriteString("<!doctype html><html><head><title>A long article</title></head><body><nav><a href=/>Home</a></nav><article><h1>A long article</h1>\n")
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near old harbours and new bridges")
	for i := range 200 {
		if i%20 == 0 {
			fmt.Fprintf(&b, "<h2>Section %d</h2>\n", i/20+1)
		}
		b.WriteString("<p>")
		for j := range 60 {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "<a href=\"/ref/%d\">reference %d</a>.</p>\n", i, i)
	}
	b.WriteString("</article><footer>Copyright</footer>\n<script id=\"__STATE__\" type=\"application/json\">[")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"id":%d,"slug":"item-%d","title":"%s %s","score":%d},`, i, i, words[i%len(words)], words[(i*5)%len(words)], i*37%1000)
	}
	b.WriteString("{}]</script></body></html>")
	return []byte(b.String())
}
