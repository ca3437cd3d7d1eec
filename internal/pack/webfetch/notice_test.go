package webfetch_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/pack/webfetch"
)

// TestNoticeWhenLittleIsKept: when the extraction keeps much less of a
// page's visible text than an article page gives, the result says so and
// how to get the whole document (raw); an ordinary article gets no notice,
// nor does the raw document itself. The pages are CONSTRUCTED.
func TestNoticeWhenLittleIsKept(t *testing.T) {
	var links strings.Builder
	for i := range 120 {
		fmt.Fprintf(&links, `<li><a href="/m/%d">Entry %d of the directory, with a few words about it</a></li>`+"\n", i, i)
	}
	var paras strings.Builder
	for i := range 20 {
		fmt.Fprintf(&paras, "<p>Paragraph %d: rivers carry water from the hills down to the sea, and with it the soil of the valleys.</p>\n", i)
	}
	pages := map[string]string{
		// A short lead the extractor takes for the article, then a large
		// directory it drops as a list of teasers.
		"/directory": `<html><head><title>Directory</title></head><body><main><h1>Directory</h1>
<p>This directory lists every member organisation, with a line about what each of them does, and is updated every week.</p>
<p>Members are listed in the order in which they joined, the oldest first, and each entry names the city where it is based.</p></main>
<ul class="listing">` + links.String() + `</ul></body></html>`,
		"/article": `<html><head><title>Rivers</title></head><body><nav><a href="/">Home</a></nav><article><h1>Rivers</h1>` + paras.String() + `</article></body></html>`,
	}
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, pages[r.URL.Path])
	}))
	reg := registry(t, webfetch.Config{})
	tests := []struct {
		name, path string
		raw        bool
		notice     bool
	}{
		{"little kept", "/directory", false, true},
		{"an article", "/article", false, false},
		{"raw document", "/directory", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := call(t, reg, map[string]any{"url": srv.URL + tt.path, "raw": tt.raw})
			if !res.OK() {
				t.Fatalf("fetch failed: %s", res.JSON)
			}
			if got := out.Notice != ""; got != tt.notice {
				t.Fatalf("notice = %q, want one: %v\ncontent:\n%s", out.Notice, tt.notice, out.Content)
			}
			if tt.notice && (!strings.Contains(out.Notice, "raw: true") || !strings.Contains(out.Notice, "%")) {
				t.Errorf("notice %q does not say how much was kept and how to get the whole page", out.Notice)
			}
			if tt.notice && !strings.Contains(string(res.JSON), `"notice"`) {
				t.Errorf("the result's JSON has no notice field: %s", res.JSON)
			}
		})
	}
}
