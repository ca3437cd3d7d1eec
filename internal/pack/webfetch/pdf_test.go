package webfetch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/toolport/toolport/extract/pdftext"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/tool"
)

func TestPDF(t *testing.T) {
	files := map[string]string{
		"/walden.pdf": "walden.pdf", "/scan.pdf": "blank-scan.pdf", "/locked.pdf": "walden-encrypted-rc4.pdf",
		"/errata.pdf": "adobe-errata.pdf", "/download": "walden.pdf",
	}
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Error(err)
		}
		if r.URL.Path == "/download" {
			// A server that does not say what it sends: sniffed as a PDF.
			w.Header().Set("Content-Type", "application/octet-stream")
		} else {
			w.Header().Set("Content-Type", "application/pdf")
		}
		w.Write(b)
	}))
	reg := registry(t, webfetch.Config{PDF: pdftext.Options{MaxPages: 5}})

	t.Run("text with page markers, paged by lines", func(t *testing.T) {
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/walden.pdf", "limit": 3})
		if !res.OK() {
			t.Fatal(res.JSON)
		}
		if !strings.HasPrefix(out.Content, "<!-- page 1 -->") || out.ContentType != "application/pdf" || !out.HasMore || out.Lines != 3 {
			t.Errorf("unexpected first page: %+v", out)
		}
		_, all := call(t, reg, map[string]any{"url": srv.URL + "/walden.pdf"})
		if !strings.Contains(all.Content, "THOREAU") || !strings.Contains(all.Content, "<!-- page 2 -->") {
			t.Errorf("text missing:\n%.500s", all.Content)
		}
	})
	t.Run("paged by characters", func(t *testing.T) {
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/walden.pdf", "start_index": 0, "max_length": 40})
		if !res.OK() || len([]rune(out.Content)) != 40 || out.NextStartIndex == nil || *out.NextStartIndex != 40 {
			t.Fatalf("%s %+v", res.JSON, out)
		}
	})
	t.Run("sniffed from octet-stream", func(t *testing.T) {
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/download"})
		if !res.OK() || !strings.Contains(out.Content, "WALDEN") {
			t.Fatalf("%s", res.JSON)
		}
	})
	t.Run("page cap says what was left out", func(t *testing.T) {
		// The note ends the text, past the DefaultMaxLength of an unpaged call.
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/errata.pdf", "max_length": webfetch.MaxMaxLength})
		if !res.OK() {
			t.Fatal(res.JSON)
		}
		if strings.Contains(out.Content, "<!-- page 6 -->") || !strings.Contains(out.Content, "only the first 5 of 18 pages were read") {
			t.Errorf("page cap not applied or not reported:\n…%s", out.Content[max(0, len(out.Content)-300):])
		}
	})
	for _, tt := range []struct {
		path    string
		code    tool.Code
		message string
	}{
		{"/locked.pdf", tool.CodePDFEncrypted, "encrypted"},
		{"/scan.pdf", tool.CodePDFNoText, "no text layer"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			res, _ := call(t, reg, map[string]any{"url": srv.URL + tt.path})
			if res.OK() || res.Err.Code != tt.code || res.Err.Retryable || !strings.Contains(res.Err.Message, tt.message) {
				t.Fatalf("got %s, want %s", res.JSON, tt.code)
			}
		})
	}
	t.Run("raw is refused for a PDF", func(t *testing.T) {
		res, _ := call(t, reg, map[string]any{"url": srv.URL + "/walden.pdf", "raw": true})
		if res.OK() || res.Err.Code != tool.CodeUnsupported {
			t.Fatalf("got %s", res.JSON)
		}
	})
}

func TestCanonicalAndLang(t *testing.T) {
	page := `<html lang="%s"><head><title>T</title><link rel="canonical" href="/canonical/page"></head><body><article><p>` +
		strings.Repeat("Enough words for the extractor to keep this paragraph as content. ", 8) + `</p></article></body></html>`
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Language", "de-CH")
		w.Write([]byte(strings.Replace(page, "%s", r.URL.Query().Get("lang"), 1)))
	}))
	reg := registry(t, webfetch.Config{})
	for declared, want := range map[string]string{"pt_BR": "pt-BR", "": "de-CH"} {
		res, out := call(t, reg, map[string]any{"url": srv.URL + "/p?lang=" + declared})
		if !res.OK() {
			t.Fatal(res.JSON)
		}
		if out.CanonicalURL != srv.URL+"/canonical/page" || out.Lang != want {
			t.Errorf("lang=%q: canonical %q lang %q; want %q", declared, out.CanonicalURL, out.Lang, want)
		}
	}
}

// TestTitleAndSiteNameFromJSONLD: a page that declares its headline and
// site only in JSON-LD (schema.org @graph) gets both in the result.
func TestTitleAndSiteNameFromJSONLD(t *testing.T) {
	page := `<html><head><title>SEO title | Example</title><script type="application/ld+json">
{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"Example News"},{"@type":"NewsArticle","headline":"The headline"}]}
</script></head><body><article><p>` + strings.Repeat("Enough words for the extractor to keep this paragraph as content. ", 8) + `</p></article></body></html>`
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	res, out := call(t, registry(t, webfetch.Config{}), map[string]any{"url": srv.URL + "/a"})
	if !res.OK() {
		t.Fatal(res.JSON)
	}
	if out.Title != "The headline" || out.SiteName != "Example News" {
		t.Errorf("title %q site %q", out.Title, out.SiteName)
	}
}

func TestPDFReportsItsPages(t *testing.T) {
	body, err := os.ReadFile("testdata/adobe-errata.pdf")
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(body)
	}))
	reg := registry(t, webfetch.Config{})
	var got []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
	raw, _ := json.Marshal(map[string]any{"url": srv.URL + "/errata.pdf"})
	if res := reg.Call(ctx, "web_fetch", raw); !res.OK() {
		t.Fatal(string(res.JSON))
	}
	var pages []string
	for i, p := range got {
		if p.Total != 2 || i > 0 && p.Done <= got[i-1].Done {
			t.Errorf("report %d: %+v after %+v; want a rising value out of 2", i, p, got[max(i-1, 0)])
		}
		if strings.HasPrefix(p.Message, "reading PDF page") {
			pages = append(pages, p.Message)
		}
	}
	// All 18 pages are read, each reported (fewer than pdfProgressSteps).
	if len(pages) != 18 || pages[17] != "reading PDF page 18 of 18" || got[len(got)-1].Done != 2 {
		t.Errorf("page reports %v; last report %+v", pages, got[len(got)-1])
	}
}
