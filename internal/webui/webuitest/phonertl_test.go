package webuitest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The phone and right-to-left checks: a one-row header on a phone, the
// no-model banner that scrolls away and can be dismissed, regions that
// scroll sideways, every string of the page in Hebrew, units in the
// language's order, the direction of content, mirrored icons; axe-core on
// every state visited.

// headerJS measures the top bar: its height, the title's width, and how
// many of its visible controls sit off the title's row.
const headerJS = `(() => {
	const bar = document.querySelector('.topbar').getBoundingClientRect();
	const title = document.getElementById('conv-title').getBoundingClientRect();
	const mid = title.top + title.height / 2;
	const off = [...document.querySelectorAll('.topbar > *, .topbar-actions > *, .conv-actions > *')]
		.filter(e => e.id !== 'topbar-actions' && e.checkVisibility() && e.getBoundingClientRect().width > 1)
		.filter(e => { const r = e.getBoundingClientRect(); return mid < r.top || mid > r.bottom; })
		.map(e => e.id || e.className);
	return {Height: bar.height, Title: title.width, Off: off};
})()`

type header struct {
	Height, Title float64
	Off           []string
}

// untranslatedJS lists the page's text nodes that hold Latin letters
// outside content: what a tool, the model or the person wrote (dir="auto"
// or "ltr": messages, card fields, URLs, raw JSON, code), the tools'
// argument names (cards, bench fields), and names that read the same in
// every language.
const untranslatedJS = `(() => {
	const names = /\b(Toolport|TIDAL|YouTube|Brave|Google|SearXNG|CKAN|Markdown|JSON|MCP|ISRC|CSV|API|Enter|Shift)\b/g;
	// Content, and what names content: the server's version, announcements
	// of a conversation's title, a conversation's delete button, a track's
	// links (a service and the track's title), the settings' statuses that
	// quote the server's message.
	const content = '[dir="auto"], [dir="ltr"], code, pre, .md, .bubble, .tool-input dt, .model-chip, .msg-model, #model-picker, .raw-json, .conv-date, .code-lang, .chip-format, ' +
		'#server-info, #live-status, .conv-delete, .track-link, #settings-status, .setup-refused, script, style';
	const out = [];
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const el = n.parentElement;
		if (!el || el.closest(content)) continue;
		// A bench field's label starts with the argument's name, as the tool declares it.
		if (el.matches('.bench-field .field-label') && n === el.firstChild) continue;
		const text = n.textContent.replace(names, '');
		if (/[A-Za-z]/.test(text)) out.push((el.id || el.className || el.tagName) + ': ' + n.textContent.trim().slice(0, 60));
	}
	for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
		if (el.closest(content)) continue;
		for (const a of ['aria-label', 'title', 'placeholder']) {
			const v = (el.getAttribute(a) || '').replace(names, '');
			if (/[A-Za-z]/.test(v)) out.push((el.id || el.className || el.tagName) + '[' + a + ']: ' + el.getAttribute(a).slice(0, 60));
		}
	}
	return out;
})()`

// TestPhoneAndRTL drives a conversation of every card on a phone (390×844)
// in English, then in Hebrew, against the real server.
func TestPhoneAndRTL(t *testing.T) {
	e := newFeatureEnv(t)
	axe := axeSource(t)
	dir := artifacts(t, "phonertl")
	b := NewBrowser(t, Options{})
	defer b.CheckNoProblems(t)
	to := 90 * time.Second
	check := func(name string) {
		t.Helper()
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`window.axe ? 0 : `+axe))
		reportAxe(t, b, to, name)
	}
	measure := func(lang string) {
		t.Helper()
		hd := Eval[header](t, b, to, headerJS)
		if hd.Height > 56 || len(hd.Off) > 0 {
			t.Errorf("%s: the phone header is %.0f px high with %q off the title's row; want one row of at most 56 px", lang, hd.Height, hd.Off)
		}
		if hd.Title < 150 {
			t.Errorf("%s: the phone header leaves the title %.0f px; want at least 150", lang, hd.Title)
		}
	}

	b.Do(t, to, SetView(phone(), "light"), chromedp.Navigate(e.url+"/"), waitReady(),
		send("cards for the phone"), waitIdle(),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 9`),
		// An open conversation shows every header control: usage, the model
		// picker (two models), rename, the exports, Tools and Settings.
		WaitFor(`!document.getElementById('conv-actions').hidden && !document.getElementById('model-picker').hidden`))
	measure("English")

	t.Run("the header's menu", func(t *testing.T) {
		b.Do(t, to, chromedp.Click(css("#more-btn")), WaitFor(`document.getElementById('rename-btn').checkVisibility()`),
			Screenshot(t, dir, "phone-light-en-menu"))
		inView := Eval[[]string](t, b, to, `['model-picker', 'rename-btn', 'export-md', 'export-json', 'bench-btn', 'settings-btn']
			.filter(id => { const r = document.getElementById(id).getBoundingClientRect(); return !(r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.bottom <= innerHeight); })`)
		if len(inView) > 0 {
			t.Errorf("with the menu open, %q are not shown inside the screen", inView)
		}
		check("phone light, menu open")
		b.Do(t, to, chromedp.Focus(css("#rename-btn")), chromedp.KeyEvent(kb.Escape),
			WaitFor(`!document.getElementById('rename-btn').checkVisibility() && document.activeElement.id === 'more-btn'`))
		if got := Eval[string](t, b, to, `document.getElementById('more-btn').getAttribute('aria-expanded')`); got != "false" {
			t.Errorf("after Escape the menu button's aria-expanded = %q", got)
		}
		// An action from the menu closes it.
		b.Do(t, to, chromedp.Click(css("#more-btn")), chromedp.Click(css("#bench-btn")), chromedp.WaitVisible(css(".bench-form, .bench-tools")),
			WaitFor(`document.getElementById('more-btn').getAttribute('aria-expanded') === 'false'`),
			chromedp.Click(css("#more-btn")), chromedp.Click(css("#bench-btn")), WaitFor(`!document.getElementById('thread').hidden`))
	})

	t.Run("English phone: durations, axe light and dark", func(t *testing.T) {
		d := Eval[[]string](t, b, to, `[...document.querySelectorAll('.tool-duration')].map(e => e.getAttribute('dir') + ' ' + e.textContent)`)
		for _, s := range d {
			if !strings.HasPrefix(s, "auto ") || !strings.HasSuffix(s, " ms") && !strings.HasSuffix(s, " sec") {
				t.Errorf("a card's duration is %q; want dir=auto and Intl's short unit", s)
			}
		}
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.tool-card .tool-head').forEach(h => h.click())`),
			Screenshot(t, dir, "phone-light-en"))
		check("phone light, cards open")
		b.Do(t, to, SetView(phone(), "dark"), Screenshot(t, dir, "phone-dark-en"))
		check("phone dark, cards open")
		b.Do(t, to, SetView(phone(), "light"))
	})

	t.Run("a wide table scrolls in a named region", func(t *testing.T) {
		// A datastore card of 12 columns (CONSTRUCTED, in the shape of
		// queryDatastore's result) in the thread.
		b.Do(t, to, WaitForAsync(`import('/assets/js/cards.js').then(m => {
			const fields = Array.from({length: 12}, (_, i) => ({id: 'measurement_' + i}));
			const rec = Object.fromEntries(fields.map(f => [f.id, 'value of ' + f.id]));
			const card = new m.ToolCard({kind: 'tool', id: 'w1', name: 'queryDatastore', status: 'completed', input: {resource_id: 'r1'},
				result: {success: true, fields, records: [rec, rec], total: 2}}, 'wide');
			card.el.id = 'wide-card';
			document.querySelector('#messages .msg-assistant .msg-body').appendChild(card.el);
			card.toggle(true);
			card.el.scrollIntoView();
			return true; })`))
		region := `document.querySelector('#wide-card .md-table')`
		b.Do(t, to, WaitFor(region+`.dataset.scrolls === 'true'`))
		got := Eval[struct {
			Tab              int
			Role, Label, Img string
		}](t, b, to, `(e => ({Tab: e.tabIndex, Role: e.getAttribute('role') || '', Label: e.getAttribute('aria-label') || '', Img: getComputedStyle(e).backgroundImage}))(`+region+`)`)
		if got.Tab != 0 || got.Role != "region" || got.Label != "Table (scrolls sideways)" || !strings.Contains(got.Img, "gradient") {
			t.Errorf("the wide table: %+v; want a tab stop, a region named for its scrolling, a shade", got)
		}
		b.Do(t, to, chromedp.Focus(css(`#wide-card .md-table`)), chromedp.KeyEvent(kb.ArrowRight),
			WaitFor(`Math.abs(`+region+`.scrollLeft) > 0`), Screenshot(t, dir, "phone-light-en-wide-table"))
		check("phone light, a wide table")
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.getElementById('wide-card').remove()`))
		// A Markdown table in an answer is marked the same way.
		b.Do(t, to, WaitForAsync(`import('/assets/js/markdown.js').then(m => {
			const d = document.createElement('div'); d.className = 'md'; d.id = 'wide-md';
			d.appendChild(m.setDirections(m.renderMarkdown('| ' + Array.from({length: 14}, (_, i) => 'column' + i).join(' | ') + ' |\n|' + '---|'.repeat(14) + '\n| ' + 'x | '.repeat(14))));
			document.querySelector('#messages .msg-assistant .msg-body').appendChild(d);
			m.scrollRegion(d.querySelector('.md-table'), 'wide');
			return true; })`),
			WaitFor(`document.querySelector('#wide-md .md-table').dataset.scrolls === 'true' && document.querySelector('#wide-md .md-table').tabIndex === 0`),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('wide-md').remove()`))
	})

	// Hebrew: the same conversation, then a Hebrew one.
	b.Do(t, to, hebrew(), SetView(phone(), "light"), chromedp.Reload(), waitReady(), WaitFor(`document.documentElement.dir === 'rtl'`),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 9`),
		WaitFor(`!document.getElementById('conv-actions').hidden`))
	measure("Hebrew")

	t.Run("Hebrew: every string of the page is translated", func(t *testing.T) {
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.tool-card .tool-head').forEach(h => h.click())`),
			chromedp.Click(css("#more-btn")), WaitFor(`document.getElementById('rename-btn').checkVisibility()`))
		for _, s := range Eval[[]string](t, b, to, untranslatedJS) {
			t.Errorf("English in the Hebrew page: %s", s)
		}
		b.Do(t, to, chromedp.Click(css("#more-btn")), WaitFor(`!document.getElementById('rename-btn').checkVisibility()`))
	})

	t.Run("Hebrew: units in the language's order, icons mirrored", func(t *testing.T) {
		// Each duration reads number, then unit, in its own direction: the
		// digit of "3 ms" sits left of its "m" on screen.
		bad := Eval[[]string](t, b, to, `[...document.querySelectorAll('.tool-duration')].filter(e => /\d/.test(e.textContent) && /[a-z]/.test(e.textContent)).filter(e => {
			const node = e.firstChild, s = node.textContent;
			const rect = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect(); };
			return !(rect(s.search(/\d/)).left < rect(s.search(/[a-z]/)).left);
		}).map(e => e.textContent)`)
		if len(bad) > 0 {
			t.Errorf("durations whose unit comes before the number on screen: %q", bad)
		}
		if n := Eval[int](t, b, to, `document.querySelectorAll('.tool-duration').length`); n == 0 {
			t.Error("no durations to check")
		}
		tr := Eval[[]string](t, b, to, `[getComputedStyle(document.querySelector('#send-btn svg')).transform,
			getComputedStyle(document.querySelector('.tool-card:not(.open) .chevron') || (document.querySelector('.tool-card .tool-head').click(), document.querySelector('.tool-card:not(.open) .chevron'))).transform]`)
		for i, s := range tr {
			if !strings.HasPrefix(s, "matrix(-1, 0, 0, 1") {
				t.Errorf("directional icon %d (send, closed card's chevron) has transform %q; want it mirrored", i, s)
			}
		}
		// A numeric argument sits next to its name: the value's text ends
		// (right to left) where its cell begins.
		gap := Eval[float64](t, b, to, `import('/assets/js/cards.js').then(m => {
			const card = new m.ToolCard({kind: 'tool', id: 'n1', name: 'semanticSearch', status: 'completed', input: {limit: 10}, result: {success: true, tracks: []}}, 'rtl-num');
			card.el.id = 'rtl-num';
			document.querySelector('#messages .msg-assistant .msg-body').appendChild(card.el);
			card.toggle(true);
			const dd = card.el.querySelector('.tool-input dd');
			const r = document.createRange(); r.selectNodeContents(dd);
			const gap = dd.getBoundingClientRect().right - r.getBoundingClientRect().right;
			card.el.remove();
			return gap; })`)
		if gap > 4 {
			t.Errorf("the numeric argument's text is %.0f px from its name's side; want it beside the name", gap)
		}
		// A tool's note about the query shows above its result.
		if note := Eval[string](t, b, to, `import('/assets/js/cards.js').then(m => m.renderResult('semanticSearch', {success: true, tracks: [], note: 'The index is in English.'}).querySelector('.result-note')?.textContent || '')`); note != "The index is in English." {
			t.Errorf("the result's note shows as %q", note)
		}
		if notice := Eval[string](t, b, to, `import('/assets/js/cards.js').then(m => m.renderResult('web_fetch', {success: true, url: 'https://example.org/', content: '', notice: 'This page needs JavaScript.'}).querySelector('.result-note')?.textContent || '')`); notice != "This page needs JavaScript." {
			t.Errorf("web_fetch's notice shows as %q", notice)
		}
	})

	t.Run("Hebrew settings: the checks' strings", func(t *testing.T) {
		b.Do(t, to, chromedp.Click(css("#more-btn")), chromedp.Click(css("#settings-btn")),
			chromedp.WaitVisible(css("#settings-dialog")), WaitFor(`['done', 'error'].includes(document.getElementById('settings-dialog').dataset.state)`))
		// (A check that could not run says why in the server's words.)
		for _, s := range Eval[[]string](t, b, to, `(() => {
			const d = document.getElementById('settings-dialog');
			const status = d.dataset.state === 'done' ? ', #settings-status' : '';
			const keep = [...d.querySelectorAll('#settings-checks-title, #settings-checks-title + p, .settings-badge, .dialog-actions button' + status)].map(e => e.textContent);
			return keep.filter(s => /[A-Za-z]/.test(s.replace(/\b(Toolport)\b/g, '')));
		})()`) {
			t.Errorf("English in the Hebrew settings' checks: %q", s)
		}
		b.Do(t, to, Screenshot(t, dir, "phone-light-he-settings"))
		check("phone light, Hebrew settings")
		b.Do(t, to, chromedp.Click(css("#settings-close")), chromedp.WaitNotVisible(css("#settings-dialog")))
	})
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.getElementById('settings-dialog')?.close()`))

	t.Run("Hebrew bench: English descriptions read left to right", func(t *testing.T) {
		b.Do(t, to, chromedp.Click(css("#more-btn")), chromedp.Click(css("#bench-btn")),
			chromedp.Click(css(`.bench-tool[data-tool="semanticSearch"]`)), chromedp.WaitVisible(css(".bench-tool-desc")))
		// "Finds tracks by meaning." keeps its full stop at its end.
		if got := Eval[string](t, b, to, `getComputedStyle(document.querySelector('.bench-tool-desc')).direction`); got != "ltr" {
			t.Errorf("the English description in the Hebrew bench runs %s; want ltr (its own)", got)
		}
		for _, s := range Eval[[]string](t, b, to, untranslatedJS) {
			t.Errorf("English in the Hebrew bench: %s", s)
		}
		if Eval[bool](t, b, to, `document.getElementById('jump-latest').checkVisibility()`) {
			t.Error("the bench shows the thread's Jump to latest")
		}
		b.Do(t, to, Screenshot(t, dir, "phone-light-he-bench"))
		check("phone light, Hebrew bench")
		b.Do(t, to, chromedp.Click(css("#more-btn")), chromedp.Click(css("#bench-btn")), WaitFor(`!document.getElementById('thread').hidden`))
	})

	t.Run("Hebrew: a list keeps its bullet side for an English item", func(t *testing.T) {
		b.Do(t, to, chromedp.Click(css("#menu-btn")), WaitFor(`document.activeElement.id === 'new-chat'`), chromedp.Click(css("#new-chat")),
			send("אילו מאגרים יש על איכות אוויר?"), waitIdle(),
			WaitFor(`[...document.querySelectorAll('#messages .md li')].some(li => li.textContent === 'Noise measurements')`))
		got := Eval[struct {
			Dirs []string
			Gap  float64
		}](t, b, to, `(() => {
			const items = [...document.querySelectorAll('#messages .md li')];
			const li = items.find(li => li.textContent === 'Noise measurements');
			const r = document.createRange(); r.selectNodeContents(li);
			return {Dirs: items.map(li => getComputedStyle(li).direction), Gap: li.getBoundingClientRect().right - r.getBoundingClientRect().right};
		})()`)
		if strings.Join(got.Dirs, " ") != "rtl rtl" {
			t.Errorf("the Hebrew list's items run %q; want every item right to left (the bullets on the right)", got.Dirs)
		}
		if got.Gap > 4 {
			t.Errorf("the English item's text is %.0f px from the bullet's side", got.Gap)
		}
		b.Do(t, to, Screenshot(t, dir, "phone-light-he"))
		check("phone light, Hebrew")
		b.Do(t, to, SetView(phone(), "dark"), Screenshot(t, dir, "phone-dark-he"))
		check("phone dark, Hebrew")
	})
}

// TestNoModelBannerScrollsAndDismisses checks the no-model banner on a
// phone: it scrolls away with the bench, its contrast passes, and a
// dismissal holds over a reload until the state changes (a model is set,
// then gone again).
func TestNoModelBannerScrollsAndDismisses(t *testing.T) {
	api := newFakeAPI("", false, "")
	srv := api.server(t)
	axe := axeSource(t)
	dir := artifacts(t, "phonertl")
	b := NewBrowser(t, Options{})
	defer b.CheckNoProblems(t)
	to := 60 * time.Second
	// The state change is played in the page: with test.model set in
	// sessionStorage, /api/info says a model is configured.
	b.Do(t, to, cdpCall(page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
		const real = window.fetch;
		window.fetch = async (url, init) => {
			const res = await real(url, init);
			if (!String(url).endsWith('/api/info') || sessionStorage.getItem('test.model') !== 'on') return res;
			const info = await res.json();
			info.modelConfigured = true;
			info.model = 'test-model';
			return new Response(JSON.stringify(info), {status: 200, headers: {'Content-Type': 'application/json'}});
		};
	})()`}))
	banner := `document.getElementById('no-model-banner')`
	b.Do(t, to, SetView(phone(), "light"), chromedp.Navigate(srv.URL+"/"), waitReady(),
		chromedp.WaitVisible(css("#no-model-banner")), chromedp.WaitVisible(css(".bench-tool")),
		chromedp.Click(css(`.bench-tool[data-tool="semanticSearch"]`)), chromedp.WaitVisible(css(".bench-form")),
		Screenshot(t, dir, "phone-light-no-model"), chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "phone, no model")
	// Scrolled to the end of the bench, the banner is gone from the screen.
	shown := Eval[struct {
		Share  float64
		Scroll bool
	}](t, b, to, `(() => {
		const view = document.getElementById('bench');
		view.scrollTop = view.scrollHeight;
		// What shows of it: its box within the screen and within every
		// ancestor that clips (scrolls).
		const banner = `+banner+`, r = banner.getBoundingClientRect();
		let top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
		for (let a = banner.parentElement; a; a = a.parentElement) {
			if (!/auto|scroll|hidden/.test(getComputedStyle(a).overflowY)) continue;
			const ar = a.getBoundingClientRect();
			top = Math.max(top, ar.top);
			bottom = Math.min(bottom, ar.bottom);
		}
		return {Share: Math.max(0, bottom - top) / innerHeight, Scroll: view.scrollHeight > view.clientHeight + r.height};
	})()`)
	if !shown.Scroll {
		t.Fatal("the bench does not scroll past the banner at 390×844; the check needs a longer bench")
	}
	if shown.Share > 0 {
		t.Errorf("at the end of the bench the banner still takes %.0f%% of the screen", shown.Share*100)
	}
	b.Do(t, to, Screenshot(t, dir, "phone-light-no-model-scrolled"))

	// Dismissed, it stays dismissed over a reload.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.getElementById('bench').scrollTop = 0`),
		chromedp.Click(css("#no-model-dismiss")), chromedp.WaitNotVisible(css("#no-model-banner")),
		WaitFor(`document.activeElement.id === 'bench-title'`),
		chromedp.Reload(), waitReady(), chromedp.WaitVisible(css("#bench")))
	if Eval[bool](t, b, to, banner+`.checkVisibility()`) {
		t.Error("a dismissed banner came back after a reload")
	}
	// A model set (the banner has nothing to say), then gone again: the
	// banner shows again.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem('test.model', 'on')`), chromedp.Reload(), waitReady(),
		WaitFor(`localStorage.getItem('toolport.noModelDismissed') === null`),
		chromedp.Evaluate[chromedp.Void](`sessionStorage.removeItem('test.model')`), chromedp.Reload(), waitReady(),
		chromedp.WaitVisible(css("#no-model-banner")))

	// English units: Intl's short forms.
	got := Eval[[]string](t, b, to, `import('/assets/js/dom.js').then(m => [0.2, 3, 840.4, 1234, 65000, 'x'].map(m.formatDuration))`)
	if strings.Join(got, "|") != "<1 ms|3 ms|840 ms|1.2 sec|1 min 5 sec|" {
		t.Errorf("formatDuration = %q", got)
	}
}
