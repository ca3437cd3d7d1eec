package webuitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/testexec"
)

// The Settings view against the real `toolport serve` (cli.Run in process,
// on SQLite, with the environment given as a map): what a person sets up
// from the page works in the next message, without a restart.

// runServe starts `toolport serve` on a loopback port with vars as its whole
// environment and returns its base URL; it stops with the test.
func runServe(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db"), "HOME": dir}
	for k, v := range vars {
		env[k] = v
	}
	cfg, err := config.New(func(k string) string { return env[k] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testexec.Buffer
	done := make(chan int, 1)
	exited := make(chan struct{})
	go func() {
		done <- cli.Run(ctx, &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry},
			append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
		close(exited)
	}()
	actx, acancel := context.WithTimeout(ctx, 2*time.Minute) // a hang guard on a loaded machine
	defer acancel()
	go func() { // a serve that exits stops the wait
		select {
		case <-exited:
			acancel()
		case <-actx.Done():
		}
	}()
	line, err := out.Await(actx, func(s string) bool { return strings.Contains(s, "serving on ") })
	if err != nil {
		cancel()
		t.Fatalf("serve did not start: %v\n%s", err, errb.String())
	}
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d\n%s", code, errb.String())
		}
		t.Logf("serve's log:\n%s", errb.String())
	})
	_, u, _ := strings.Cut(line, "serving on ")
	u, _, _ = strings.Cut(u, "\n")
	return strings.TrimSuffix(strings.TrimSpace(u), "/")
}

// openAICompatible is a local OpenAI-compatible server as Ollama or vLLM
// is: GET /v1/models lists its models (CONSTRUCTED from OpenAI's documented
// answer), and every other request goes to the scripted model server, which
// streams /v1/chat/completions. Requests without the key are refused.
type openAICompatible struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string // Authorization of each chat request
	lists int      // model listings asked for, with any key
}

func newOpenAICompatible(t *testing.T, key string, ms *servertest.ModelServer) *openAICompatible {
	target, err := url.Parse(ms.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // stream as the model writes
	o := &openAICompatible{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			o.mu.Lock()
			o.lists++
			o.mu.Unlock()
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"id":"llama3.2","object":"model","created":1,"owned_by":"library"},{"id":"qwen2.5:7b","object":"model","created":1,"owned_by":"library"}]}`)
			return
		}
		o.mu.Lock()
		o.auths = append(o.auths, r.Header.Get("Authorization"))
		o.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

// braveEcho is a Brave Search fake whose one result quotes the
// subscription token back, as a misbehaving upstream or proxy might: the
// scrubber must keep it from the page. CONSTRUCTED in the shape of Brave's
// web search answer (brave/testdata), cut to one result.
func braveEcho(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" {
			http.NotFound(w, r)
			return
		}
		tok := r.Header.Get("X-Subscription-Token")
		mu.Lock()
		tokens = append(tokens, tok)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web": map[string]any{"type": "search", "results": []any{map[string]any{
				"type": "search_result", "title": "Toolport settings " + tok, "url": "https://example.org/toolport",
				"description": "The key you sent is " + tok + ".",
			}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &tokens
}

// checkAxe runs axe-core (loaded into the page by the caller) in light and
// dark and reports each violation under name.
func checkAxe(t *testing.T, b *Browser, to time.Duration, name string) {
	t.Helper()
	for _, scheme := range []string{"light", "dark"} {
		b.Do(t, to, SetView(desktop(), scheme))
		reportAxe(t, b, to, name+", "+scheme)
	}
	b.Do(t, to, SetView(desktop(), "light"))
}

// waitSetup waits for cond in the Settings view; when it does not come,
// the test fails with what the view's status line says.
func waitSetup(t *testing.T, b *Browser, to time.Duration, cond string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, to)
	defer cancel()
	if err := chromedp.Do(ctx, WaitFor(cond)); err != nil {
		t.Fatalf("waiting for %s: %v; the Settings status says %q", cond, err,
			Eval[string](t, b, 10*time.Second, `document.getElementById('setup-status')?.textContent`))
	}
}

// openSettings opens the Settings dialog and waits for the setup part.
func openSettings() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Click(css("#settings-btn")),
		WaitFor(`document.getElementById('settings-dialog')?.open && !!document.getElementById('setup-model-form')`))
}

// closeSettings closes the Settings dialog.
func closeSettings() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Click(css("#settings-close")), WaitFor(`!document.getElementById('settings-dialog').open`))
}

// toChat leaves the bench (where a page without a model opens) for the chat.
func toChat() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.getElementById('bench').hidden || document.getElementById('bench-btn').click()`),
		chromedp.WaitVisible(css("#composer-input")))
}

// TestSettingsModelAndKeyFromThePage: a page with no model (the banner, the
// bench) gets a model connection from Settings (a local OpenAI-compatible
// server: its models listed, one picked) and a Brave key, then chats and
// searches at once, without a restart; the key never reaches the page, even
// when the upstream quotes it back. axe-core finds nothing in the Settings
// states visited, light and dark.
func TestSettingsModelAndKeyFromThePage(t *testing.T) {
	const (
		modelKey = "sk-local-model-key-5150aa"
		braveKey = "BSA-page-set-brave-key-9931"
	)
	axe := axeSource(t)
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "hello", Events: []servertest.Event{
		servertest.Text("Hi from "), servertest.Text("the model set in Settings.")}})
	model := newOpenAICompatible(t, modelKey, ms)
	brave, tokens := braveEcho(t)
	base := runServe(t, map[string]string{"BRAVE_API_BASE_URL": brave.URL}, "--packs", "web")

	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	dir := artifacts(t, "settings")
	to := 60 * time.Second
	b.Do(t, to, chromedp.WaitVisible(css("#no-model-banner")), openSettings(),
		WaitFor(`document.getElementById('settings-dialog').dataset.state === 'done'`),
		chromedp.Evaluate[chromedp.Void](axe), Screenshot(t, dir, "desktop-light-settings-empty"))
	checkAxe(t, b, to, "settings, empty")

	form := `#setup-model-form `
	status := `document.getElementById('setup-status').textContent`
	// A wrong key first: the listing fails with the server's refusal, shown
	// in the form, the key not quoted.
	b.Do(t, to, setField(form+`input[name="name"]`, "local"),
		setField(form+`input[name="baseUrl"]`, model.URL+"/v1"),
		setField(form+`input[name="apiKey"]`, "sk-wrong-key-000000"),
		chromedp.Click(css("#setup-list-models")),
		WaitFor(status+`.startsWith('Not saved:')`), Screenshot(t, dir, "desktop-light-settings-error"))
	if s := Eval[string](t, b, to, status); strings.Contains(s, "sk-wrong-key") {
		t.Errorf("the error quotes the key: %q", s)
	}
	checkAxe(t, b, to, "settings, listing failed")

	// The right key: the server's models are listed, one is picked.
	// (The status is emptied first: a second failure says the same.)
	b.Do(t, to, setField(form+`input[name="apiKey"]`, modelKey),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('setup-status').textContent = ''`),
		chromedp.Click(css("#setup-list-models")))
	waitSetup(t, b, to, `(s => s !== '' && !s.startsWith('Asking'))(`+status+`)`)
	if s := Eval[string](t, b, to, status); !strings.HasPrefix(s, "2 models found") {
		model.mu.Lock()
		defer model.mu.Unlock()
		t.Fatalf("listing with the right key: %q (the server was asked %d times)", s, model.lists)
	}
	if ids := Eval[[]string](t, b, to, `[...document.querySelectorAll('#setup-model-ids option')].map(o => o.value)`); strings.Join(ids, ",") != "llama3.2,qwen2.5:7b" {
		t.Errorf("listed models = %q", ids)
	}
	b.Do(t, to, setField(form+`input[name="model"]`, "qwen2.5:7b"), chromedp.Click(css("#setup-default")),
		chromedp.Click(css("#setup-save-model")))
	waitSetup(t, b, to, `!!document.querySelector('#setup-models li[data-model="local:qwen2.5:7b"]')`)
	b.Do(t, to, WaitFor(`document.getElementById('no-model-banner').hidden`), Screenshot(t, dir, "desktop-light-settings-model"))
	if row := Eval[string](t, b, to, `document.querySelector('#setup-models li[data-model="local:qwen2.5:7b"]').textContent`); !strings.Contains(row, "key ••••50aa") || strings.Contains(row, modelKey) {
		t.Errorf("the connection's row = %q, want the key masked", row)
	}
	checkAxe(t, b, to, "settings, with a model")

	// The Brave key: saved, shown masked.
	keyField := `#setup-keys-form input[name="brave_api_key"]`
	b.Do(t, to, chromedp.Focus(css(keyField)), chromedp.SendKeys(css(keyField), braveKey), chromedp.Click(css("#setup-save-keys")),
		WaitFor(`document.querySelector(`+jsString(keyField)+`)?.placeholder === '••••9931'`))
	if v := Eval[string](t, b, to, `document.querySelector(`+jsString(keyField)+`).value`); v != "" {
		t.Errorf("the key field still holds %d characters after saving", len(v))
	}

	// Chat at once: the page's model is the one set, the answer streams.
	b.Do(t, to, closeSettings(), toChat(), send("hello there"), waitIdle(),
		WaitFor(lastAssistant(`?.textContent.includes('Hi from the model set in Settings.')`)),
		Screenshot(t, dir, "desktop-light-chat-after-settings"))
	if chip := Eval[string](t, b, to, `document.getElementById('model-chip').textContent`); chip != "local:qwen2.5:7b" {
		t.Errorf("model chip = %q, want the connection set from the page", chip)
	}
	model.mu.Lock()
	if len(model.auths) == 0 || model.auths[0] != "Bearer "+modelKey {
		t.Errorf("the model server saw %d chat requests, want them with the key set from the page", len(model.auths))
	}
	model.mu.Unlock()

	// The bench's Brave tool works with the new key; the upstream quotes
	// it back and the page shows it redacted.
	bench := `.bench-tool[data-tool="web_search_brave"]`
	card := `.bench-result .tool-card[data-tool="web_search_brave"]`
	b.Do(t, to, chromedp.Click(css("#bench-btn")), chromedp.WaitVisible(css(bench)), chromedp.Click(css(bench)),
		WaitFor(`document.querySelector('.bench-form').dataset.tool === 'web_search_brave'`),
		setField(`.bench-form [data-field="query"]`, "toolport settings"), chromedp.Click(css(".bench-run")),
		WaitFor(`!!document.querySelector(`+jsString(card+`[data-status="completed"]`)+`)`),
		Screenshot(t, dir, "desktop-light-bench-brave-after-settings"))
	got := Eval[string](t, b, to, `document.querySelector(`+jsString(card)+`).textContent + document.querySelector('.bench-raw-json').textContent`)
	if !strings.Contains(got, "Toolport settings [REDACTED]") {
		t.Errorf("the Brave result does not show the echoed key redacted:\n%s", got)
	}
	if len(*tokens) == 0 || (*tokens)[len(*tokens)-1] != braveKey {
		t.Errorf("Brave saw tokens %d, want the key set from the page", len(*tokens))
	}

	// Nowhere on the page, nor in what the API answers it.
	leak := Eval[[]string](t, b, to, `(async () => {
		const keys = `+jsString(modelKey)+`, brave = `+jsString(braveKey)+`;
		const found = [];
		const html = document.documentElement.outerHTML + [...document.querySelectorAll('input')].map(i => i.value).join(' ');
		if (html.includes(keys) || html.includes(brave)) found.push('the DOM');
		for (const p of ['/api/settings', '/api/info', '/api/tools', '/api/conversations']) {
			const body = await (await fetch(p)).text();
			if (body.includes(keys) || body.includes(brave)) found.push(p);
		}
		return found;
	})()`)
	if len(leak) > 0 {
		t.Errorf("a key set from the page is in %q", leak)
	}
}
