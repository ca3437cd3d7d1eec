package webuitest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// dailyAnswer is the scripted answer of TestDailyFeatures: code, a table,
// and enough lines that the thread scrolls.
var dailyAnswer = "Here is Go:\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```\n\n| name | n |\n|---|---|\n| a<b> | 1 |\n| c | 2 |\n\n" +
	strings.Repeat("A line of the answer.\n\n", 60) + "The end."

// TestDailyFeatures drives the daily features against the real server: the
// title the model writes after the first answer, copy (code, table as TSV,
// answer), highlighted code with its language, jump to latest, the day
// groups, a search snippet with the match marked, the export named after
// the title and the tracks' links out.
func TestDailyFeatures(t *testing.T) {
	e := newFeatureEnvTitled(t, true)
	axe := axeSource(t)
	dir := artifacts(t, "daily")
	b := openPage(t, e.url, Options{}, SetView(desktop(), "light"))
	to := 60 * time.Second
	// The clipboard is read where the page writes it.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`window.__copied = []; navigator.clipboard.writeText = (s) => { window.__copied.push(s); return Promise.resolve(); }`),
		send("code please"), waitIdle(), WaitFor(lastAssistant(`?.textContent.includes('The end.')`)),
		WaitFor(`document.getElementById('conv-title').textContent === 'Go snippets and tables'`),
		WaitFor(`document.querySelector('.conv-name')?.textContent === 'Go snippets and tables'`))
	id := Eval[string](t, b, to, currentID)
	if c, _ := e.db.GetConversation(context.Background(), id); c.Title != "Go snippets and tables" {
		t.Errorf("stored title = %q, want the model's", c.Title)
	}

	// Highlighting and the language label.
	code := Eval[map[string]any](t, b, to, `(() => { const c = document.querySelector('.code-block'); return {
		lang: c.querySelector('.code-lang').textContent,
		keywords: [...c.querySelectorAll('code .hljs-keyword')].map(e => e.textContent),
		comments: c.querySelectorAll('code .hljs-comment').length,
		text: c.querySelector('code').textContent,
		focusable: c.querySelector('pre').tabIndex === 0 }; })()`)
	if code["lang"] != "Go" || !strings.Contains(strings.Join(toStrings(code["keywords"]), ","), "func") || code["comments"] != 1.0 || code["focusable"] != true {
		t.Errorf("code block = %v, want Go labelled, func a keyword, the comment marked, focusable", code)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-code"), chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "code and copy buttons")

	// Copy: the code as written, the table as TSV, the answer's Markdown.
	b.Do(t, to, chromedp.Click(css(".copy-code")), chromedp.Click(css(".copy-table")), chromedp.Click(css(".msg-copy")),
		WaitFor(`window.__copied.length === 3`),
		WaitFor(`document.querySelector('.msg-copy').dataset.copied === 'true' && document.getElementById('live-status').textContent === 'Copied'`))
	copied := Eval[[]string](t, b, to, `window.__copied`)
	if copied[0] != "func main() {\n    fmt.Println(\"hi\") // greet\n}" {
		t.Errorf("copied code = %q", copied[0])
	}
	if copied[1] != "name\tn\na<b>\t1\nc\t2" {
		t.Errorf("copied table = %q, want TSV", copied[1])
	}
	if copied[2] != dailyAnswer {
		t.Errorf("copied answer is not the answer's Markdown: %q…", copied[2][:min(80, len(copied[2]))])
	}

	// Jump to latest: shown when scrolled up, back at the end when clicked.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`(t => { t.style.scrollBehavior = 'auto'; t.scrollTop = 0; t.dispatchEvent(new Event('scroll')); })(document.getElementById('thread'))`),
		WaitFor(`!document.getElementById('jump-latest').hidden`), Screenshot(t, dir, "desktop-light-jump"),
		chromedp.Click(css("#jump-latest")),
		WaitFor(`(t => t.scrollHeight - t.scrollTop - t.clientHeight < 120)(document.getElementById('thread')) && document.getElementById('jump-latest').hidden`))

	// The day groups, and a search's snippet with the match marked (the
	// table's "a<b>" stays text).
	if g := Eval[[]string](t, b, to, `[...document.querySelectorAll('.conv-group-title')].map(e => e.textContent)`); strings.Join(g, ",") != "Today" {
		t.Errorf("groups = %v, want Today", g)
	}
	b.Do(t, to, chromedp.SendKeys(css("#conv-search"), "greet"),
		WaitFor(`document.querySelector('.conv-snippet mark')?.textContent.toLowerCase() === 'greet'`),
		Screenshot(t, dir, "desktop-light-snippet"))
	reportAxe(t, b, to, "groups and snippet")
	if s := Eval[map[string]any](t, b, to, `(s => ({text: s.textContent, marks: s.querySelectorAll('mark').length, elements: s.querySelectorAll('*').length}))(document.querySelector('.conv-snippet'))`); !strings.Contains(s["text"].(string), "// greet") || s["marks"] != 1.0 || s["elements"] != 1.0 {
		t.Errorf("snippet = %v, want the text around greet with one mark and no other element", s)
	}
	b.Do(t, to, setField("#conv-search", ""), WaitFor(`!document.querySelector('.conv-snippet')`))

	// The export is named after the title.
	downloads := t.TempDir()
	b.Do(t, to, cdpCall(browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}),
		chromedp.Click(css("#export-md")))
	waitUntil(t, "the export to be downloaded", func() bool {
		files, _ := filepath.Glob(filepath.Join(downloads, "*.md"))
		if len(files) != 1 {
			return false
		}
		st, err := os.Stat(files[0])
		return err == nil && st.Size() > 0
	})
	files, _ := filepath.Glob(filepath.Join(downloads, "*.md"))
	if name := filepath.Base(files[0]); !strings.HasPrefix(name, "go-snippets-and-tables-") {
		t.Errorf("export file = %s, want it named after the title", name)
	}

	// Tracks link out: TIDAL by id, a MusicCaps clip to YouTube at its start.
	b.Do(t, to, chromedp.Click(css("#new-chat")), send("cards for links"), waitIdle(),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 9`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('.tool-card[data-tool="semanticSearch"] .tool-head').click()`))
	links := Eval[[]string](t, b, to, `[...document.querySelectorAll('.tool-card[data-tool="semanticSearch"] .track-link')].map(a => a.href + ' ' + a.target + ' ' + a.rel)`)
	want := "https://tidal.com/browse/track/1781871 _blank noopener noreferrer|https://www.youtube.com/watch?v=-0Gj8-vB1q4&t=30s _blank noopener noreferrer"
	if strings.Join(links, "|") != want {
		t.Errorf("track links = %q, want %q", links, want)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-track-links"), chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "track links")
}

func toStrings(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, x := range a {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}
