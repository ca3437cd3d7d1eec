package webuitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// englishInJS lists, under the element root selects, the text nodes and
// labels (aria-label, title, placeholder) with Latin letters, leaving out
// content (what a tool, the model or the person wrote, which keeps its own
// direction: dir="auto" or "ltr", or set apart in a string by the isolate
// marks U+2068…U+2069, as the credentials file's path is) and names that
// read the same in every language. It is untranslatedJS for one part of
// the page.
const englishInJS = `((sel) => {
	const names = /\u2068[^\u2069]*\u2069|\b(Toolport|Tidal|TIDAL|OpenAI|Anthropic|Ollama|LM Studio|vLLM|Brave Search|Google Custom Search|Brave|Google|SearXNG|CKAN|MCP|JSON|M3U8|API|URL|HTTP|stdio|Bearer)\b/g;
	const content = '[dir="auto"], [dir="ltr"], code, pre, bdi, .track-title, .track-sub, .pl-title, .pl-why p, .pl-unresolved li, script, style';
	const root = document.querySelector(sel);
	if (!root) return ['no ' + sel];
	const out = [];
	const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const el = n.parentElement;
		if (!el || el.closest(content)) continue;
		if (/[A-Za-z]/.test(n.textContent.replace(names, ''))) out.push((el.id || el.className || el.tagName) + ': ' + n.textContent.trim().slice(0, 60));
	}
	for (const el of root.querySelectorAll('[aria-label], [title], [placeholder]')) {
		if (el.closest(content)) continue;
		for (const a of ['aria-label', 'title', 'placeholder']) {
			const v = (el.getAttribute(a) || '').replace(names, '');
			if (/[A-Za-z]/.test(v)) out.push((el.id || el.className || el.tagName) + '[' + a + ']: ' + el.getAttribute(a).slice(0, 60));
		}
	}
	return out;
})`

// TestHebrewPlaylistAndSetup walks, in Hebrew, the two parts of the page
// the phone walk (TestPhoneAndRTL) does not reach: the playlist card, with
// its total in the language's units, and the setup part of Settings,
// including a failed model listing, whose label is the page's while the
// reason is the server's.
func TestHebrewPlaylistAndSetup(t *testing.T) {
	art := ArtServer(t)
	api, convID := newPlaylistAPI("s3cret-token", art.URL)
	srv := api.server(t)
	b := NewBrowser(t, fakeOptions())
	defer b.CheckNoProblems(t)
	to := 60 * time.Second
	b.Do(t, to, hebrew())

	card := `document.querySelector('.tool-card[data-tool="suggestPlaylist"]')`
	b.Do(t, to, chromedp.Navigate(srv.URL+"/?c="+convID+"#token=s3cret-token"), waitReady(),
		WaitFor(`document.documentElement.dir === 'rtl'`),
		WaitFor(card+` != null`), chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`),
		WaitFor(card+`.querySelector('.playlist-card') != null`))
	for _, s := range Eval[[]string](t, b, to, englishInJS+`('.tool-card[data-tool="suggestPlaylist"] .playlist-card')`) {
		t.Errorf("English in the Hebrew playlist card: %s", s)
	}
	// 850 s is 14 minutes: Intl's Hebrew short unit, the number first in
	// reading order, as formatDuration writes the cards' durations.
	want := Eval[string](t, b, to, `new Intl.NumberFormat('he', {style: 'unit', unit: 'minute', unitDisplay: 'short'}).format(14)`)
	got := Eval[struct{ Total, Sub string }](t, b, to, `(pl => ({Total: pl.querySelector('.pl-total').textContent, Sub: pl.querySelector('.pl-sub').textContent}))(`+card+`.querySelector('.playlist-card'))`)
	if got.Total != want || strings.ContainsAny(got.Total, "abcdefghijklmnopqrstuvwxyz") || got.Sub != "3 שירים · "+want {
		t.Errorf("the Hebrew playlist's total is %q in %q; want %q (Intl's unit) after \"3 שירים · \"", got.Total, got.Sub, want)
	}

	// The setup part, against the real server.
	base := runServe(t, map[string]string{}, "--packs", "web")
	b.Do(t, to, chromedp.Navigate(base+"/"), waitReady(), WaitFor(`document.documentElement.dir === 'rtl'`), openSettings())
	for _, s := range Eval[[]string](t, b, to, englishInJS+`('#setup')`) {
		t.Errorf("English in the Hebrew setup: %s", s)
	}
	// A listing the server refuses (nothing listens on port 9 of loopback).
	form := `#setup-model-form `
	label := Eval[string](t, b, to, `import('/assets/js/i18n.js').then(m => m.t('setupFailed'))`)
	listing := Eval[string](t, b, to, `import('/assets/js/i18n.js').then(m => m.t('setupListing'))`)
	b.Do(t, to, setField(form+`input[name="name"]`, "local"), setField(form+`input[name="baseUrl"]`, "http://127.0.0.1:9/v1"),
		chromedp.Click(css("#setup-list-models")),
		WaitFor(fmt.Sprintf(`!['', %q].includes(document.getElementById('setup-status').textContent)`, listing)))
	status := Eval[string](t, b, to, `document.getElementById('setup-status').textContent`)
	if !strings.HasPrefix(status, label+" ") || strings.ContainsAny(label, "abcdefghijklmnopqrstuvwxyz") {
		t.Errorf("the failed listing says %q; want the Hebrew label %q before the server's reason", status, label)
	}
}
