package webuitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fakeOptions opens the browser for the fake servers: the artwork server's
// self-signed certificate is accepted (it is the test's own 127.0.0.1 server).
func fakeOptions() Options {
	return Options{
		Token:      "s3cret-token",
		Prompts:    DefaultPrompts(),
		ExtraFlags: []chromedp.ExecAllocatorOption{chromedp.Flag("ignore-certificate-errors", true)},
		// The fake's search for melancholic love songs weighs the valence
		// of two of its three tracks.
		MatchedFeatures: 2,
	}
}

func TestPageAgainstFakeAPI(t *testing.T) {
	art := ArtServer(t)
	api := newFakeAPI("s3cret-token", true, art.URL)
	srv := api.server(t)
	RunPageChecks(t, srv.URL, fakeOptions())
	api.mu.Lock()
	defer api.mu.Unlock()
	if api.canceled != 1 {
		t.Errorf("the server saw %d aborted turns, want 1 (the Stop check)", api.canceled)
	}
}

func TestNoModelBanner(t *testing.T) {
	api := newFakeAPI("", false, "")
	srv := api.server(t)
	RunNoModelChecks(t, srv.URL, Options{})
}

// TestBrowserDetectsPageProblems makes sure the listeners that the page
// checks rely on do fire: an alert, an uncaught exception and an inline
// script blocked by the Content-Security-Policy are all recorded.
func TestBrowserDetectsPageProblems(t *testing.T) {
	srv := newFakeAPI("", true, "").server(t)
	b := NewBrowser(t, Options{})
	to := 30 * time.Second
	b.Do(t, to, chromedp.Navigate(srv.URL+"/"), waitReady(),
		chromedp.Evaluate[chromedp.Void](`setTimeout(() => alert('boom'), 0)`),
		chromedp.Evaluate[chromedp.Void](`setTimeout(() => { throw new Error('kaput') }, 0)`),
		chromedp.Evaluate[chromedp.Void](`document.body.appendChild(Object.assign(document.createElement('script'), {textContent: 'window.inlineRan = true'}))`),
		chromedp.Evaluate[chromedp.Void](`document.body.appendChild(Object.assign(document.createElement('img'), {src: 'http://127.0.0.1:9/x.png'}))`))
	want := []string{"dialog opened", "kaput", "CSP violation"}
	waitUntil(t, fmt.Sprintf("the problems %q to be recorded", want), func() bool {
		all := strings.Join(b.Problems(), "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				return false
			}
		}
		return true
	})
	if Eval[bool](t, b, to, `window.inlineRan === true`) {
		t.Error("an inline script ran despite the CSP")
	}
}

// TestSidebarPages checks that the sidebar lists conversations newest first,
// 20 at a time, and that "Load more" fetches the next page.
func TestSidebarPages(t *testing.T) {
	api := newFakeAPI("", true, "")
	api.mu.Lock()
	for i := 1; i <= 23; i++ {
		api.newConv(fmt.Sprintf("Conversation %02d", i))
	}
	api.mu.Unlock()
	srv := api.server(t)
	b := NewBrowser(t, Options{})
	to := 30 * time.Second
	titles := `[...document.querySelectorAll('.conv-name')].map(e => e.textContent)`
	b.Do(t, to, chromedp.Navigate(srv.URL+"/"), waitReady(), chromedp.WaitVisible(css("#load-more")))
	first := Eval[[]string](t, b, to, titles)
	if len(first) != 20 || first[0] != "Conversation 23" || first[19] != "Conversation 04" {
		t.Fatalf("first page = %q, want Conversation 23 … 04", first)
	}
	b.Do(t, to, chromedp.Click(css("#load-more")), WaitFor(`document.querySelectorAll('.conv').length === 23`),
		chromedp.WaitNotVisible(css("#load-more")))
	all := Eval[[]string](t, b, to, titles)
	if all[22] != "Conversation 01" {
		t.Errorf("last title = %q, want Conversation 01", all[22])
	}
	// Opening one from the sidebar shows it and marks it current.
	b.Do(t, to, chromedp.Click(css(`.conv[data-id="conv-0005"] .conv-open`)),
		WaitFor(`document.getElementById('conv-title').textContent === 'Conversation 05'`),
		WaitFor(`location.search === '?c=conv-0005'`))
	b.CheckNoProblems(t)
}

// TestMarkdown is the renderer's spec: Markdown in, the exact DOM out.
func TestMarkdown(t *testing.T) {
	const a = ` target="_blank" rel="noopener noreferrer"`
	tests := []struct{ name, in, want string }{
		{"paragraph", "Hello **world**", `<p>Hello <strong>world</strong></p>`},
		{"html is text", `<img src=x onerror=alert(1)>`, `<p>&lt;img src=x onerror=alert(1)&gt;</p>`},
		{"script is text", "<script>alert(1)</script>", `<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>`},
		{"javascript link is text", "[x](javascript:alert(1))", `<p>x</p>`},
		{"data link is text", "[x](data:text/html;base64,PHNjcmlwdD4=)", `<p>x</p>`},
		{"relative link is text", "[x](/api/conversations)", `<p>x</p>`},
		{"https link", "[x](https://e.com/a?b=1&c=2)", `<p><a href="https://e.com/a?b=1&amp;c=2"` + a + `>x</a></p>`},
		{"link title", `[x](https://e.com "T")`, `<p><a href="https://e.com/"` + a + ` title="T">x</a></p>`},
		{"image becomes link", "![cover](https://e.com/i.png)", `<p><a href="https://e.com/i.png"` + a + `>cover</a></p>`},
		{"autolink", "<https://e.com/x>", `<p><a href="https://e.com/x"` + a + `>https://e.com/x</a></p>`},
		{"bare url", "see https://x.org/a.", `<p>see <a href="https://x.org/a"` + a + `>https://x.org/a</a>.</p>`},
		{"heading", "# Title", `<h3 class="md-h">Title</h3>`},
		{"heading 4", "### Sub ###", `<h5 class="md-h">Sub</h5>`},
		{"fenced code", "```js\n<b>x</b>\n```", `<pre class="md-code" data-lang="js"><code>&lt;b&gt;x&lt;/b&gt;</code></pre>`},
		{"unclosed fence while streaming", "```\nline", `<pre class="md-code"><code>line</code></pre>`},
		{"indented code", "    a < b", `<pre class="md-code"><code>a &lt; b</code></pre>`},
		{"code span", "`a<b` and ``x`y``", `<p><code>a&lt;b</code> and <code>x` + "`" + `y</code></p>`},
		{"emphasis", "*a* _b_ ~~c~~ ***d***", `<p><em>a</em> <em>b</em> <del>c</del> <strong><em>d</em></strong></p>`},
		{"intraword underscore", "snake_case_word", `<p>snake_case_word</p>`},
		{"escapes", `\*not em\*`, `<p>*not em*</p>`},
		{"unclosed strong", "**unclosed", `<p>**unclosed</p>`},
		{"line breaks", "a\nb", `<p>a<br>b</p>`},
		{"unordered list", "- a\n- b", `<ul><li>a</li><li>b</li></ul>`},
		{"ordered list", "1. a\n2. b", `<ol><li>a</li><li>b</li></ol>`},
		{"ordered start", "3. a", `<ol start="3"><li>a</li></ol>`},
		{"nested list", "- a\n  - b\n- c", `<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>`},
		{"loose list", "- a\n\n- b", `<ul><li><p>a</p></li><li><p>b</p></li></ul>`},
		{"quote", "> quote\n> more", `<blockquote><p>quote<br>more</p></blockquote>`},
		{"rule", "---", `<hr>`},
		{"table", "| a | b |\n|---|--:|\n| 1 | `x|y` |", `<div class="md-table"><table><thead><tr><th>a</th><th class="align-right">b</th></tr></thead><tbody><tr><td>1</td><td class="align-right"><code>x|y</code></td></tr></tbody></table></div>`},
		{"paragraphs", "one\n\ntwo", `<p>one</p><p>two</p>`},
		{"empty", "", ``},
	}
	srv := newFakeAPI("", true, "").server(t)
	b := NewBrowser(t, Options{})
	to := 30 * time.Second
	b.Do(t, to, chromedp.Navigate(srv.URL+"/"), waitReady())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Eval[string](t, b, to, `import('/assets/js/markdown.js').then(m => {
				const d = document.createElement('div'); d.appendChild(m.renderMarkdown(`+jsString(tt.in)+`)); return d.innerHTML; })`)
			if got != tt.want {
				t.Errorf("renderMarkdown(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
			}
		})
	}
	t.Run("random input only yields allowed markup", func(t *testing.T) {
		// A seeded generator strings together Markdown syntax and hostile
		// fragments; every output element and attribute must be on the list
		// and every link http(s).
		bad := Eval[[]string](t, b, to, `import('/assets/js/markdown.js').then(m => {
			let seed = 20260314;
			const rnd = n => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
			const toks = ['*', '**', '_', '~~', '`+"`"+`', '`+"```"+`', '[', ']', '(', ')', '![', 'https://x.y/p', 'javascript:alert(1)',
				'<img src=x onerror=alert(1)>', '<script>', '"', '|', '---', '\n', '\n\n', '# ', '- ', '1. ', '> ', '    ', 'a', 'b c', '\\', '<', '>', ':', 'http://h'];
			const allowed = {P: [], H3: ['class'], H4: ['class'], H5: ['class'], H6: ['class'], STRONG: [], EM: [], DEL: [], CODE: [],
				PRE: ['class', 'data-lang'], BLOCKQUOTE: [], UL: [], OL: ['start'], LI: [], HR: [], BR: [], DIV: ['class'],
				TABLE: [], THEAD: [], TBODY: [], TR: [], TH: ['class'], TD: ['class'], A: ['href', 'target', 'rel', 'title']};
			const bad = [];
			for (let i = 0; i < 3000 && bad.length < 5; i++) {
				let s = '';
				for (let n = rnd(40); n > 0; n--) s += toks[rnd(toks.length)];
				const d = document.createElement('div');
				d.appendChild(m.renderMarkdown(s));
				for (const el of d.querySelectorAll('*')) {
					const ok = allowed[el.tagName];
					if (!ok) { bad.push(el.tagName + ' from ' + JSON.stringify(s)); break; }
					for (const at of el.attributes) if (!ok.includes(at.name)) bad.push(el.tagName + '[' + at.name + '] from ' + JSON.stringify(s));
					if (el.tagName === 'A' && !/^https?:\/\//.test(el.getAttribute('href'))) bad.push('href ' + el.getAttribute('href'));
				}
			}
			return bad; })`)
		for _, s := range bad {
			t.Error(s)
		}
	})
	t.Run("adversarial input finishes", func(t *testing.T) {
		// Each of these makes a naive delimiter search quadratic; the
		// renderer must still finish within the check's time bound.
		n := Eval[int](t, b, to, `import('/assets/js/markdown.js').then(m => {
			const inputs = ['**a '.repeat(20000), '['.repeat(50000), '`+"`"+`a '.repeat(20000), '_a '.repeat(30000), '- '.repeat(5000) + 'x',
				'> '.repeat(5000) + 'x', '[a](' .repeat(10000), '~~x '.repeat(20000)];
			let total = 0;
			for (const s of inputs) { const d = document.createElement('div'); d.appendChild(m.renderMarkdown(s)); total += d.textContent.length > 0 ? 1 : 0; }
			return total; })`)
		if n != 8 {
			t.Errorf("%d of 8 adversarial inputs rendered text", n)
		}
	})
}

// TestSSEParser checks the event-stream parser on every split of a stream
// into two chunks (line endings \n, \r\n and \r, comments, other fields,
// multi-line data, a final event without a blank line) and its size bound.
func TestSSEParser(t *testing.T) {
	srv := newFakeAPI("", true, "").server(t)
	b := NewBrowser(t, Options{})
	to := 30 * time.Second
	b.Do(t, to, chromedp.Navigate(srv.URL+"/"), waitReady())
	res := Eval[struct {
		Failures []string
		Bounded  bool
	}](t, b, to, `import('/assets/js/sse.js').then(m => {
		const stream = 'data: {"type":"a"}\n\n: ping\n\nevent: x\nid: 7\ndata: x\r\ndata: y\r\n\r\ndata:z\rdata:  w\r\rretry: 5\n\ndata\n\ndata: last';
		const want = JSON.stringify(['{"type":"a"}', 'x\ny', 'z\n w', '', 'last']);
		const failures = [];
		for (let i = 0; i <= stream.length; i++) {
			const p = new m.SSEParser();
			const got = [...p.push(stream.slice(0, i)), ...p.push(stream.slice(i)), ...p.end()];
			if (JSON.stringify(got) !== want) failures.push(i + ': ' + JSON.stringify(got));
		}
		let bounded = false;
		try { new m.SSEParser(16).push('data: ' + 'x'.repeat(32) + '\n'); } catch { bounded = true; }
		return {Failures: failures.slice(0, 5), Bounded: bounded}; })`)
	for _, f := range res.Failures {
		t.Errorf("split at %s", f)
	}
	if !res.Bounded {
		t.Error("an event larger than the bound was accepted")
	}
}

// TestFailuresSurviveReload checks that a turn that failed shows, after a
// reload, the same error box, code and incomplete note as it did live: both
// when it failed before any output and when the no-model error ended it.
func TestFailuresSurviveReload(t *testing.T) {
	for _, tc := range []struct {
		name     string
		model    bool
		wantCode string
	}{
		{"model failed before any output", true, "MODEL_ERROR"},
		{"no model configured", false, "MODEL_NOT_CONFIGURED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeAPI("", tc.model, "").server(t)
			b := openPage(t, srv.URL, Options{})
			to := 30 * time.Second
			if !tc.model {
				// The page does not let a person send without a model; a
				// client can, and the server answers with the error.
				b.Do(t, to, WaitForAsync(`(async () => {
					const c = await (await fetch('/api/conversations', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'})).json();
					const r = await fetch('/api/conversations/' + c.id + '/messages', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({content: 'hello?'})});
					await r.text();
					history.replaceState(null, '', '?c=' + c.id);
					return true;
				})()`), chromedp.Reload(), waitReady())
			} else {
				b.Do(t, to, send(failBeforeOutput), WaitFor(lastAssistant(`?.querySelector('.inline-error') != null`)), waitIdle())
			}
			live := Eval[string](t, b, to, snapshotJS)
			b.Do(t, to, chromedp.Reload(), waitReady(), WaitFor(`document.querySelectorAll('#messages > li').length > 0`))
			reloaded := Eval[string](t, b, to, snapshotJS)
			if tc.model && reloaded != live {
				t.Errorf("after reload the thread differs.\nlive:\n%s\nreloaded:\n%s", live, reloaded)
			}
			res := Eval[struct {
				Code, Text string
				Incomplete bool
			}](t, b, to, `(() => { const li = `+lastAssistant(``)+`;
				return {Code: li.querySelector('.inline-error code')?.textContent || '',
					Text: li.querySelector('.inline-error')?.textContent || '',
					Incomplete: !!li.querySelector('.incomplete-note')}; })()`)
			if res.Code != tc.wantCode || res.Text == "" || !res.Incomplete {
				t.Errorf("reloaded failed answer: %+v, want the %s error box and the incomplete note", res, tc.wantCode)
			}
		})
	}
}
