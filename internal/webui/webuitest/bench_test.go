package webuitest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBenchForms checks the forms the bench builds from the tools' JSON
// Schemas, its validation, and a run with the result shown as a card.
func TestBenchForms(t *testing.T) {
	api := newFakeAPI("", false, "")
	srv := api.server(t)
	b := openPage(t, srv.URL, Options{}, SetView(desktop(), "light"))
	to := 30 * time.Second
	b.Do(t, to, chromedp.WaitVisible(css(`.bench-tool[data-tool="semanticSearch"]`)))

	// Grouped by pack, in the order the server lists them.
	packs := Eval[[][]string](t, b, to, `[...document.querySelectorAll('.bench-pack')].map(p =>
		[p.querySelector('.bench-pack-title').textContent, ...[...p.querySelectorAll('.bench-tool')].map(b => b.dataset.tool)])`)
	wantPacks := [][]string{{"Web", "web_search_brave"}, {"Open data (CKAN)", "queryDatastore"}, {"Music", "semanticSearch", "tidalSearch", "batchMetadata"}}
	if !reflect.DeepEqual(packs, wantPacks) {
		t.Errorf("tools by pack = %q, want %q", packs, wantPacks)
	}

	// describe reports each control of the shown form.
	type control struct {
		Tag, Type, Min, Max, Value, Label string
		Required, Checked, Described      bool
		Options                           []string
	}
	describe := `Object.fromEntries([...document.querySelectorAll('.bench-form [data-field]')].map(e => [e.dataset.field, {
		Tag: e.tagName.toLowerCase(), Type: e.type || '', Min: e.getAttribute('min') || '', Max: e.getAttribute('max') || '',
		Value: e.value, Required: e.required, Checked: !!e.checked,
		Label: e.labels.length ? e.labels[0].textContent : '',
		Described: (e.getAttribute('aria-describedby') || '').split(' ').every(id => id && document.getElementById(id)),
		Options: e.tagName === 'SELECT' ? [...e.options].map(o => o.textContent) : null}]))`
	open := func(tool string) map[string]control {
		b.Do(t, to, chromedp.Click(css(`.bench-tool[data-tool="`+tool+`"]`)),
			WaitFor(`document.querySelector('.bench-form').dataset.tool === '`+tool+`'`))
		return Eval[map[string]control](t, b, to, describe)
	}

	// tidalSearch, not offered to the model, is marked and says why; the
	// page counts the tools the model is offered.
	tidal := open("tidalSearch")
	marked := Eval[[]string](t, b, to, `[...document.querySelectorAll('.bench-tool.is-not-offered')].map(b => b.dataset.tool)`)
	note := Eval[string](t, b, to, `document.querySelector('.bench-tool-unavailable')?.textContent || ''`)
	info := Eval[string](t, b, to, `document.getElementById('server-info').textContent`)
	if !reflect.DeepEqual(marked, []string{"tidalSearch"}) || !strings.Contains(note, "not offered") ||
		!strings.Contains(note, "TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET are not set") || !strings.Contains(info, "5 tools, 4 offered to the model") {
		t.Errorf("not offered: marked %q, note %q, server info %q", marked, note, info)
	}
	if n := Eval[int](t, b, to, `document.querySelectorAll('.bench-tool-unavailable').length`); n != 1 {
		t.Errorf("%d notes", n)
	}
	if c := tidal["searchType"]; c.Tag != "select" || !c.Required || !reflect.DeepEqual(c.Options, []string{"(not set)", "tracks", "albums", "both"}) {
		t.Errorf("enum searchType = %+v, want a required select of tracks, albums, both", c)
	}
	if c := tidal["limit"]; c.Type != "number" || c.Min != "1" || c.Max != "100" || c.Value != "20" || c.Required {
		t.Errorf("integer limit = %+v, want a number input 1–100 holding the default 20", c)
	}
	if c := tidal["query"]; c.Type != "text" || !c.Required || !strings.Contains(c.Label, "*") {
		t.Errorf("string query = %+v, want a required text input marked *", c)
	}
	for name, c := range tidal {
		if !strings.HasPrefix(c.Label, name) || !c.Described {
			t.Errorf("field %s: label %q, described %v; want a label naming it and a description", name, c.Label, c.Described)
		}
	}
	if c := open("batchMetadata")["isrcs"]; c.Tag != "textarea" || !c.Required || !strings.Contains(c.Label, "one per line") {
		t.Errorf("array isrcs = %+v, want a required one-per-line textarea", c)
	}
	if c := open("queryDatastore")["filters"]; c.Tag != "textarea" || !strings.Contains(c.Label, "JSON") {
		t.Errorf("object filters = %+v, want a JSON textarea", c)
	}
	search := open("semanticSearch")
	if n := Eval[int](t, b, to, `document.querySelectorAll('.bench-tool-unavailable').length`); n != 0 {
		t.Errorf("an offered tool's panel has %d notes that it is not offered", n)
	}
	if c := search["inLibraryOnly"]; c.Type != "checkbox" || c.Checked {
		t.Errorf("boolean inLibraryOnly = %+v, want an unchecked checkbox", c)
	}
	if c := search["maxEnergy"]; c.Type != "number" || c.Min != "0" || c.Max != "1" || c.Value != "" {
		t.Errorf("number maxEnergy = %+v, want an empty number input 0–1", c)
	}

	// A missing required value and a limit out of range are caught in the
	// form, shown by the field, and nothing is sent.
	b.Do(t, to, chromedp.Click(css(".bench-run")), chromedp.WaitVisible(css("#bench-semanticSearch-query-error")),
		WaitFor(`document.activeElement.id === 'bench-semanticSearch-query'`))
	b.Do(t, to, chromedp.SendKeys(css("#bench-semanticSearch-query"), "melancholic love songs"),
		chromedp.WaitNotVisible(css("#bench-semanticSearch-query-error")),
		chromedp.SetValue(css("#bench-semanticSearch-limit"), ""), chromedp.Focus(css("#bench-semanticSearch-limit")),
		chromedp.SendKeys(css("#bench-semanticSearch-limit"), "99"), enter(0),
		chromedp.WaitVisible(css("#bench-semanticSearch-limit-error")))
	v := Eval[struct{ Error, Invalid, Focused string }](t, b, to, `({Error: document.getElementById('bench-semanticSearch-limit-error').textContent,
		Invalid: document.getElementById('bench-semanticSearch-limit').getAttribute('aria-invalid'), Focused: document.activeElement.id})`)
	if !strings.Contains(v.Error, "50") || v.Invalid != "true" || v.Focused != "bench-semanticSearch-limit" {
		t.Errorf("out-of-range limit: error %q, aria-invalid %q, focus on %q; want an error naming 50, marked invalid and focused", v.Error, v.Invalid, v.Focused)
	}
	api.mu.Lock()
	if n := len(api.toolCalls); n != 0 {
		t.Errorf("the form sent %d calls with invalid arguments", n)
	}
	api.mu.Unlock()

	// Fixed, it runs (Enter in a field submits, as in any form) and the
	// result shows as the chat's card, with raw JSON and timing.
	b.Do(t, to, chromedp.SetValue(css("#bench-semanticSearch-limit"), ""), chromedp.SendKeys(css("#bench-semanticSearch-limit"), "2"),
		chromedp.WaitNotVisible(css("#bench-semanticSearch-limit-error")),
		chromedp.Click(css("#bench-semanticSearch-inLibraryOnly")), chromedp.Focus(css("#bench-semanticSearch-limit")), enter(0),
		WaitFor(`!!document.querySelector('.bench-result .tool-card[data-status="completed"]')`))
	res := Eval[struct {
		Titles        []string
		Summary, Raw  string
		Expanded, Dur string
	}](t, b, to, `(() => { const c = document.querySelector('.bench-result .tool-card'); return {
		Titles: [...c.querySelectorAll('.track-title')].map(e => e.textContent), Summary: c.querySelector('.tool-summary').textContent,
		Raw: document.querySelector('.bench-raw-json').textContent, Expanded: c.querySelector('.tool-head').getAttribute('aria-expanded'),
		Dur: document.querySelector('.bench-timing-tool').textContent}; })()`)
	if !reflect.DeepEqual(res.Titles, []string{XSSTitle, "Someone Like You"}) || res.Expanded != "true" {
		t.Errorf("card shows %q (expanded %s), want the 2 library tracks, expanded", res.Titles, res.Expanded)
	}
	if res.Summary != "Found 2 tracks matching 'melancholic love songs'" || !strings.Contains(res.Raw, `"durationMs": 37`) || res.Dur != "Tool 37 ms" {
		t.Errorf("summary %q, timing %q, raw:\n%s", res.Summary, res.Dur, res.Raw)
	}
	api.mu.Lock()
	want := []toolCall{{"semanticSearch", map[string]any{"query": "melancholic love songs", "limit": 2.0, "inLibraryOnly": true}}}
	if !reflect.DeepEqual(api.toolCalls, want) {
		t.Errorf("calls = %+v, want %+v", api.toolCalls, want)
	}
	api.toolCalls = nil
	api.mu.Unlock()

	// A list becomes an array, one item per non-blank line.
	open("batchMetadata")
	b.Do(t, to, chromedp.SendKeys(css("#bench-batchMetadata-isrcs"), "GBBKS1000351\n\n USRC17607839 \n"), chromedp.Click(css(".bench-run")),
		WaitFor(`!!document.querySelector('.bench-result .tool-card[data-tool="batchMetadata"][data-status="completed"]')`))
	api.mu.Lock()
	want = []toolCall{{"batchMetadata", map[string]any{"isrcs": []any{"GBBKS1000351", "USRC17607839"}}}}
	if !reflect.DeepEqual(api.toolCalls, want) {
		t.Errorf("calls = %+v, want %+v", api.toolCalls, want)
	}
	api.mu.Unlock()
}

// TestBenchWithModel: with a model the page opens on the chat, and the Tools
// button in the header switches to the bench and back.
func TestBenchWithModel(t *testing.T) {
	srv := newFakeAPI("", true, "").server(t)
	b := openPage(t, srv.URL, Options{})
	to := 30 * time.Second
	b.Do(t, to, chromedp.WaitVisible(css("#composer-input")))
	if Eval[bool](t, b, to, `!document.getElementById('bench').hidden`) {
		t.Fatal("with a model the page opens on the bench, not the chat")
	}
	b.Do(t, to, chromedp.Focus(css("#bench-btn")), enter(0), chromedp.WaitVisible(css(".bench-form")),
		chromedp.WaitNotVisible(css("#composer-input")),
		WaitFor(`document.getElementById('bench-btn').getAttribute('aria-pressed') === 'true'`),
		chromedp.Click(css("#bench-btn")), chromedp.WaitVisible(css("#composer-input")), chromedp.WaitNotVisible(css("#bench")))
}

// TestBenchAgainstFakeAPI runs the exported bench checks (the ones the e2e
// test runs against the real server) against the fake, with a token.
func TestBenchAgainstFakeAPI(t *testing.T) {
	art := ArtServer(t)
	srv := newFakeAPI("s3cret-token", false, art.URL).server(t)
	opts := fakeOptions()
	RunBenchChecks(t, srv.URL, opts, BenchRun{Tool: "semanticSearch", Fields: map[string]string{"query": "love songs", "limit": "3"}, Want: "Everybody Hurts"})
}

// TestBenchOpensOnOfferedTool checks that with no keys the bench opens on the
// first tool that works (queryDatastore), not on web_search_brave, which
// could only fail for its missing key; with every tool offered it opens on
// the first.
func TestBenchOpensOnOfferedTool(t *testing.T) {
	for _, tc := range []struct {
		notOffered map[string]string
		want       string
	}{
		{map[string]string{"web_search_brave": "BRAVE_API_KEY is not set"}, "queryDatastore"},
		{nil, "web_search_brave"},
	} {
		api := newFakeAPI("", false, "")
		api.notOffered = tc.notOffered
		srv := api.server(t)
		b := NewBrowser(t, Options{})
		to := 30 * time.Second
		b.Do(t, to, SetView(desktop(), "light"), chromedp.Navigate(srv.URL+"/"), waitReady(),
			WaitFor(`!!document.querySelector('.bench-form')?.dataset.tool`))
		if got := Eval[string](t, b, to, `document.querySelector('.bench-form').dataset.tool`); got != tc.want {
			t.Errorf("not offered %v: the bench opens on %q, want %q", tc.notOffered, got, tc.want)
		}
		b.CheckNoProblems(t)
	}
}
