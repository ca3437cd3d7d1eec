package webfetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// articlePages returns n recorded article pages of article-bench-dev
// (extract/testdata), decompressed, in name order.
func articlePages(t testing.TB, n int) map[string][]byte {
	t.Helper()
	dir := filepath.Join(tooltest.Root(t), "extract/testdata/article-bench-dev/html")
	names, err := filepath.Glob(filepath.Join(dir, "*.html.gz"))
	if err != nil || len(names) < n {
		t.Fatalf("article-bench-dev: %d pages, %v", len(names), err)
	}
	pages := map[string][]byte{}
	for _, name := range names[:n] {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(name)] = b
	}
	return pages
}

// TestModelTextIsTheMarkdownUnderAShortHeader: what a model reads of a
// fetched page is the summary (title, part), where to go on, then
// the Markdown itself, unescaped: at most 200 characters more than the
// content (a notice apart), on 20 recorded article pages.
func TestModelTextIsTheMarkdownUnderAShortHeader(t *testing.T) {
	pages := articlePages(t, 20)
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	reg := registry(t, webfetch.Config{})
	longest := 0
	for name := range pages {
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/" + name})
		if !res.OK() {
			t.Errorf("%s: %s", name, res.JSON)
			continue
		}
		text := res.ModelText()
		if !strings.HasSuffix(text, "\n\n"+out.Content) || !strings.HasPrefix(text, res.Summary+"\n") {
			t.Errorf("%s: the text is not the summary, the URL and the content:\n%.300s", name, text)
		}
		// A notice (the extraction kept little of the page) is the one
		// line allowed past the bound: the model must read it.
		over := utf8.RuneCountInString(text) - utf8.RuneCountInString(out.Content)
		if out.Notice != "" {
			over -= utf8.RuneCountInString("Notice: " + out.Notice + "\n")
		}
		longest = max(longest, over)
		if over > 200 {
			t.Errorf("%s: the text is %d characters longer than the content:\n%.400s", name, over, text)
		}
		if out.HasMore != strings.Contains(text, "More: start_index "+strconv.Itoa(deref(out.NextStartIndex))) {
			t.Errorf("%s: hasMore %v, but the text says otherwise:\n%.300s", name, out.HasMore, text)
		}
		if bytes.Contains([]byte(text), []byte(`\n`)) && !strings.Contains(out.Content, `\n`) {
			t.Errorf("%s: the text holds escaped newlines", name)
		}
	}
	t.Logf("header: at most %d characters over the content", longest)
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// BenchmarkModelText reports, summed over 20 recorded article pages fetched
// without paging, the characters a model reads (text-chars), the extracted
// content alone (content-chars), and the JSON envelope main's surfaces sent
// as text before the text form (envelope-chars, with the summary line MCP
// sent before it).
//
//	go test -run '^$' -bench ModelText -benchtime 1x ./internal/pack/webfetch
func BenchmarkModelText(b *testing.B) {
	pages := articlePages(b, 20)
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	})}}
	srv.Start()
	b.Cleanup(srv.Close)
	reg := tool.NewRegistry()
	if err := reg.Register(webfetch.Tool(webfetch.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})); err != nil {
		b.Fatal(err)
	}
	var text, content, env int
	for b.Loop() {
		text, content, env = 0, 0, 0
		for name := range pages {
			res := reg.Call(context.Background(), "web_fetch", json.RawMessage(`{"url":"`+srv.URL+"/"+name+`"}`))
			out, ok := res.Value.(webfetch.Output)
			if !ok {
				b.Fatalf("%s: %s", name, res.JSON)
			}
			text += utf8.RuneCountInString(res.ModelText())
			content += utf8.RuneCountInString(out.Content)
			env += utf8.RuneCountInString(res.Summary) + utf8.RuneCount(res.JSON)
		}
	}
	b.ReportMetric(float64(text), "text-chars")
	b.ReportMetric(float64(content), "content-chars")
	b.ReportMetric(float64(env), "envelope-chars")
}
