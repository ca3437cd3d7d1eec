// Package webuitest holds browser checks of the Discover Chat page that run
// in a real headless Chromium (Debian's chromium package) driven with
// chromedp. The same checks run against the in-repo fake of the chat API and
// against a real `toolport serve` with a scripted model, so that the page and
// the server are held to one contract (docs/api.md).
package webuitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/render"
	"github.com/toolport/toolport/internal/testexec"
)

// XSSTitle is the track title the scripted tool result must carry: the page
// must show it as text and never run it.
const XSSTitle = `<img src=x onerror=alert(1)>`

// Prompts are the messages that make the server's scripted model play each
// scenario. The scenarios the server must script:
//
//   - Tool: some text, then a semanticSearch call that succeeds and whose
//     tracks include one titled XSSTitle with inLibrary and isIndexed true,
//     then more text; message_end with stopReason end_turn.
//   - Failing: a tool call that fails after the registry's retry
//     (tool_call_error with wasRetried true), then text; message_end.
//   - Slow: text streamed slowly enough (several seconds) to be stopped.
//   - Error (optional): an `error` event in the stream.
type Prompts struct {
	Tool    string
	Failing string
	Slow    string
	Error   string // empty: the inline-error check is not run
}

// DefaultPrompts returns the prompts the in-repo fake API scripts.
func DefaultPrompts() Prompts {
	return Prompts{
		Tool:    "Find melancholic love songs",
		Failing: "Search the web for flaky servers",
		Slow:    "Tell me a very long story",
		Error:   "Make the model fail",
	}
}

// Options configures the browser and the checks.
type Options struct {
	// ChromiumPath is the browser binary. Default: $CHROMIUM_PATH, then
	// /usr/bin/chromium. A missing browser skips the test, or fails it
	// under TOOLPORT_TEST_REQUIRE_TOOLS=1 (testexec.Missing).
	ChromiumPath string
	// ArtifactsDir receives the screenshots. Default:
	// $TOOLPORT_ARTIFACTS_DIR, then a t.TempDir().
	ArtifactsDir string
	// Token is the API bearer token; when set the page is opened with
	// #token=… and the token prompt is checked too.
	Token string
	// Prompts drive the scenarios; zero fields take DefaultPrompts' (except
	// Error: without it the inline-error check is not run).
	Prompts Prompts
	// ExtraFlags are added to the browser's command line.
	ExtraFlags []chromedp.ExecAllocatorOption
	// Timeout bounds each check. Default 30 s.
	Timeout time.Duration
	// MatchedFeatures is how many tracks of the Tool prompt's search carry
	// matchedFeatures (audio features weighed against a mood word): the
	// card shows exactly those.
	MatchedFeatures int
}

// featuresLine is semanticSearch's matchedFeatures as the card shows it.
var featuresLine = regexp.MustCompile(`^[a-z]+ [01]\.\d\d(, [a-z]+ [01]\.\d\d)*$`)

// timingLine is the bench's timing line: the tool's and the round trip's
// durations as formatDuration writes them in English (Intl's short units:
// "<1 ms", "840 ms", "1.3 sec", "1 min 5 sec"); a loaded machine can take
// a second.
var timingLine = regexp.MustCompile(`Tool\s*(<1 ms|\d+ ms|\d+\.\d sec|\d+ min \d+ sec).*Round trip\s*(<1 ms|\d+ ms|\d+\.\d sec|\d+ min \d+ sec)`)

func (o Options) prompts() Prompts {
	p, d := o.Prompts, DefaultPrompts()
	if p.Tool == "" {
		p.Tool = d.Tool
	}
	if p.Failing == "" {
		p.Failing = d.Failing
	}
	if p.Slow == "" {
		p.Slow = d.Slow
	}
	return p
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 30 * time.Second
}

// ArtifactsDir returns where screenshots go, creating it.
func (o Options) artifactsDir(t *testing.T) string {
	t.Helper()
	dir := o.ArtifactsDir
	if dir == "" {
		dir = os.Getenv("TOOLPORT_ARTIFACTS_DIR")
	}
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts dir: %v", err)
	}
	return dir
}

// ChromiumPath finds the browser binary, or returns an error that says how
// to install it.
func ChromiumPath(configured string) (string, error) {
	for _, p := range []string{configured, os.Getenv("CHROMIUM_PATH"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if lp, err := exec.LookPath(p); err == nil {
			return lp, nil
		}
	}
	return "", fmt.Errorf("chromium not found (set CHROMIUM_PATH or run `apt-get install -y chromium`)")
}

// Browser is a headless Chromium tab with listeners that record what must
// never happen on the page: JavaScript dialogs (an injected alert), uncaught
// exceptions and Content-Security-Policy violations.
type Browser struct {
	// Ctx is the chromedp context of the tab.
	Ctx context.Context

	mu       sync.Mutex
	problems []string
}

// NewBrowser starts Chromium for the test; it is closed by t.Cleanup. A
// missing browser skips the test, or fails it where every tool is required
// (testexec.Missing).
func NewBrowser(t *testing.T, opts Options) *Browser {
	t.Helper()
	path, err := ChromiumPath(opts.ChromiumPath)
	if err != nil {
		testexec.Missing(t, "Chromium", "apt-get install chromium (.ci/run installs it), or set CHROMIUM_PATH", err)
	}
	flags := append(render.QuietFlags(),
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		// The page may name artwork on any https host: no name resolves, so
		// the browser never reaches beyond the test's own servers.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"),
		chromedp.WindowSize(1280, 860),
	)
	flags = append(flags, opts.ExtraFlags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags...)
	b := &Browser{}
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithListener(b.listener()))
	b.Ctx = ctx
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return b
}

// loadTimeout bounds opening a page: a hang guard on a loaded machine.
const loadTimeout = time.Minute

// openPage starts Chromium on the page served at base (the server's root,
// with #token=opts.Token when set) and waits until the page is ready; first
// runs before it loads (a viewport, a language). The page's problems
// (dialogs, exceptions, CSP violations) fail t when the test ends.
func openPage(t *testing.T, base string, opts Options, first ...chromedp.Action[chromedp.Void]) *Browser {
	t.Helper()
	b := NewBrowser(t, opts)
	t.Cleanup(func() { b.CheckNoProblems(t) })
	start := strings.TrimRight(base, "/") + "/"
	if opts.Token != "" {
		start += "#token=" + opts.Token
	}
	b.Do(t, loadTimeout, append(first, chromedp.Navigate(start), waitReady())...)
	return b
}

// NewTab opens another tab (with its own sessionStorage) in b's browser.
func (b *Browser) NewTab(t *testing.T) *Browser {
	t.Helper()
	nb := &Browser{}
	ctx, cancel := chromedp.NewContext(b.Ctx, chromedp.WithListener(nb.listener()))
	nb.Ctx = ctx
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return nb
}

// listener records page problems. It runs on the tab's reading goroutine, so
// it only records, and closes dialogs from another goroutine.
func (b *Browser) listener() func(ev any) {
	return func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.problem("a JavaScript %s dialog opened: %q", e.Type, e.Message)
			go func() {
				_, _ = chromedp.Call(b.Ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg = d.Exception.Description
			}
			b.problem("uncaught exception: %s (%s:%d)", msg, d.URL, d.LineNumber)
		case *cdplog.EventEntryAdded:
			if e.Entry != nil && (e.Entry.Source == cdplog.EntrySourceSecurity || strings.Contains(e.Entry.Text, "Content Security Policy")) {
				b.problem("CSP violation: %s", e.Entry.Text)
			}
		}
	}
}

func (b *Browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// Problems returns what went wrong on the page so far (dialogs, exceptions,
// CSP violations).
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// CheckNoProblems fails t for each recorded page problem.
func (b *Browser) CheckNoProblems(t *testing.T) {
	t.Helper()
	for _, p := range b.Problems() {
		t.Error(p)
	}
}

// Do runs steps within timeout, failing t on error.
func (b *Browser) Do(t *testing.T, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Eval evaluates a JavaScript expression (awaiting a promise) in b's tab and
// decodes its value into a T, failing t on error.
func Eval[T any](t *testing.T, b *Browser, timeout time.Duration, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %.80q: %v", expr, err)
	}
	return v
}

// WaitFor polls a synchronous JavaScript condition until it is true (bounded
// by the context's deadline).
func WaitFor(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(0))
}

// WaitForAsync evaluates an expression that yields a promise of a boolean
// until it is true.
func WaitForAsync(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for {
			ok, err := chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)(ctx, tg)
			if err != nil {
				return err
			}
			if ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %.60q: %w", expr, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// Viewport is a screen size in CSS pixels.
type Viewport struct{ Width, Height int64 }

// desktop and phone are the viewports of the screenshots.
func desktop() Viewport { return Viewport{1280, 860} }
func phone() Viewport   { return Viewport{390, 844} }

// SetView sets the viewport size (phone widths emulate a mobile device) and
// the color scheme ("light" or "dark").
func SetView(size Viewport, scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: size.Width, Height: size.Height, DeviceScaleFactor: 1, Mobile: size.Width < 600,
		}); err != nil {
			return fmt.Errorf("set viewport: %w", err)
		}
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{
				{Name: "prefers-color-scheme", Value: scheme},
				{Name: "prefers-reduced-motion", Value: "reduce"},
			},
		})
		if err != nil {
			return fmt.Errorf("set color scheme: %w", err)
		}
		return nil
	})
}

// Screenshot saves the viewport as dir/name.png.
func Screenshot(t *testing.T, dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.CaptureScreenshot()(ctx, tg)
		if err != nil {
			return fmt.Errorf("screenshot %s: %w", name, err)
		}
		p := filepath.Join(dir, name+".png")
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			return fmt.Errorf("screenshot: %w", err)
		}
		t.Logf("screenshot %s", p)
		return nil
	})
}

// snapshotJS describes what the thread shows, for comparing the live view
// with the reloaded one: roles, rendered text, each card's tool, status,
// summary, duration and rendered result (not its expanded state), and the
// message's foot as markup: a failed turn's error box and the incomplete
// note, which the server stores with the message.
const snapshotJS = `JSON.stringify([...document.querySelectorAll('#messages > li')].map(li => ({
  role: li.classList.contains('msg-user') ? 'user' : 'assistant',
  incomplete: li.dataset.incomplete,
  foot: [...li.querySelectorAll('.msg-foot > *')].map(el => el.outerHTML),
  parts: [...li.querySelectorAll('.msg-body > *')].map(el => el.classList.contains('tool-card') ? {
    tool: el.dataset.tool, status: el.dataset.status,
    summary: el.querySelector('.tool-summary').textContent,
    duration: el.querySelector('.tool-duration').textContent,
    content: el.querySelector('.tool-content').textContent,
  } : {text: el.textContent, html: el.innerHTML}),
})), null, 1)`

func lastAssistant(sel string) string {
	return `[...document.querySelectorAll('#messages > li.msg-assistant')].pop()` + sel
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// send types a prompt into the composer and presses Enter.
func send(prompt string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(css("#composer-input")),
		chromedp.Focus(css("#composer-input")),
		chromedp.SendKeys(css("#composer-input"), prompt),
		enter(0),
	)
}

// enter presses Enter as a person does: keydown and keyup, with the text
// inserted only when the page lets the keydown through. (chromedp's
// SendKeys sends a separate char event that inserts a newline even when the
// page cancels the keydown.)
func enter(modifiers int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Modifiers: modifiers}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text = "\r"
				p.UnmodifiedText = "\r"
			}
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, p); err != nil {
				return fmt.Errorf("press Enter: %w", err)
			}
		}
		return nil
	})
}

// waitIdle waits until no turn is streaming.
func waitIdle() chromedp.Action[chromedp.Void] {
	return WaitFor(`document.body.dataset.streaming === 'false' && !document.querySelector('#messages > li[data-streaming="true"]')`)
}

// waitReady waits until the page has loaded the server info and the sidebar.
func waitReady() chromedp.Action[chromedp.Void] {
	return WaitFor(`document.body.dataset.ready === 'true'`)
}

// fetchJS is a same-origin API call from the page, with the tab's token.
func fetchJS(path string) string {
	return `fetch(` + path + `, {headers: sessionStorage.getItem('toolport.token') ? {Authorization: 'Bearer ' + sessionStorage.getItem('toolport.token')} : {}})`
}

// RunPageChecks drives the page served at baseURL (the server's root) through
// the scenarios of opts.Prompts and checks what a person would see. It is
// meant to be called both with the in-repo fake API and with a real
// `toolport serve` whose scripted model plays the Prompts scenarios.
// Screenshots of the main states go to opts' artifacts directory.
func RunPageChecks(t *testing.T, baseURL string, opts Options) {
	b := openPage(t, baseURL, opts, SetView(desktop(), "light"))
	dir := opts.artifactsDir(t)
	p := opts.prompts()
	to := opts.timeout()
	baseURL = strings.TrimRight(baseURL, "/")
	if frag := Eval[string](t, b, to, `location.hash`); strings.Contains(frag, "token") {
		t.Errorf("the token stays in the address bar: %q", frag)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-welcome"))

	t.Run("send: text streams, tool card goes executing then completed", func(t *testing.T) {
		b.Do(t, to, send(p.Tool),
			WaitFor(lastAssistant(`?.dataset.streaming === 'true'`)),
			WaitFor(lastAssistant(`?.querySelector('.md')?.textContent.length > 0`)),
			WaitFor(lastAssistant(`?.querySelector('.tool-card[data-tool="semanticSearch"]') != null`)),
			Screenshot(t, dir, "desktop-light-streaming"),
			WaitFor(lastAssistant(`?.querySelector('.tool-card[data-tool="semanticSearch"]')?.dataset.status === 'completed'`)),
			waitIdle())
		if h := Eval[string](t, b, to, lastAssistant(`.querySelector('.tool-card[data-tool="semanticSearch"]').dataset.statusHistory`)); h != "executing completed" {
			t.Errorf("card status went %q, want %q", h, "executing completed")
		}
		if u := Eval[string](t, b, to, `[...document.querySelectorAll('#messages > li.msg-user')].pop().querySelector('.bubble').textContent`); u != p.Tool {
			t.Errorf("user bubble = %q, want %q", u, p.Tool)
		}
		if v := Eval[string](t, b, to, `document.getElementById('composer-input').value`); v != "" {
			t.Errorf("after sending, the composer holds %q", v)
		}
		if !Eval[bool](t, b, to, `document.getElementById('stop-btn').hidden && !document.getElementById('send-btn').hidden`) {
			t.Error("after the turn the Stop button is still shown (or Send is hidden)")
		}
	})

	t.Run("expand card: tracks, badges, XSS title as text", func(t *testing.T) {
		card := lastAssistant(`.querySelector('.tool-card[data-tool="semanticSearch"]')`)
		b.Do(t, to, chromedp.Click(css(`#messages > li.msg-assistant:last-child .tool-card[data-tool="semanticSearch"] .tool-head`)),
			WaitFor(card+`.querySelector('.tool-head').getAttribute('aria-expanded') === 'true'`),
			WaitFor(card+`.querySelector('.tool-body').checkVisibility()`),
			Screenshot(t, dir, "desktop-light-card-expanded"))
		res := Eval[struct {
			Tracks       int
			Library      bool
			Indexed      bool
			Why          int
			Features     []string
			XSSAsText    bool
			ForeignImgs  []string
			HandlerAttrs int
			Summary      string
			Duration     string
		}](t, b, to, `(() => { const c = `+card+`;
			const vis = sel => [...c.querySelectorAll(sel)].some(e => e.checkVisibility());
			return {
				Tracks: c.querySelectorAll('.track').length,
				Library: vis('.badge-library') || vis('.tracks-note'), Indexed: vis('.badge-indexed'),
				Why: [...c.querySelectorAll('.track-why')].filter(e => e.checkVisibility() && e.textContent.trim() !== '').length,
				Features: [...c.querySelectorAll('.track-features')].filter(e => e.checkVisibility()).map(e => e.textContent),
				XSSAsText: [...c.querySelectorAll('.track-title')].some(e => e.textContent === `+jsString(XSSTitle)+` && e.children.length === 0),
				ForeignImgs: [...document.images].map(i => i.getAttribute('src')).filter(s => !/^https:\/\//.test(s)),
				HandlerAttrs: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
				Summary: c.querySelector('.tool-summary').textContent,
				Duration: c.querySelector('.tool-duration').textContent,
			}; })()`)
		if res.Tracks == 0 {
			t.Error("the expanded card shows no tracks")
		}
		// Every semantic search result is indexed: a badge the same on every
		// row says nothing, so only the library is shown.
		if !res.Library || res.Indexed {
			t.Errorf("badges visible: In library %v, Indexed %v; want the library only", res.Library, res.Indexed)
		}
		if res.Why != res.Tracks {
			t.Errorf("%d of %d tracks show why they matched (.track-why)", res.Why, res.Tracks)
		}
		if len(res.Features) != opts.MatchedFeatures {
			t.Errorf("%d tracks show the audio features weighed (.track-features: %q), want %d", len(res.Features), res.Features, opts.MatchedFeatures)
		}
		for _, f := range res.Features {
			if !featuresLine.MatchString(f) {
				t.Errorf("features line %q, want names and values (\"valence 0.12, energy 0.91\")", f)
			}
		}
		if !res.XSSAsText {
			t.Errorf("no track title shows %q as plain text", XSSTitle)
		}
		if len(res.ForeignImgs) > 0 {
			t.Errorf("images with non-https src: %q", res.ForeignImgs)
		}
		if res.HandlerAttrs > 0 {
			t.Errorf("%d elements carry on* attributes", res.HandlerAttrs)
		}
		if res.Summary == "" || res.Duration == "" {
			t.Errorf("card summary %q, duration %q: want both", res.Summary, res.Duration)
		}
	})

	t.Run("raw JSON toggle", func(t *testing.T) {
		card := `#messages > li.msg-assistant:last-child .tool-card[data-tool="semanticSearch"]`
		b.Do(t, to, chromedp.Click(css(card+` .raw-toggle`)), chromedp.WaitVisible(css(card+` .raw-json`)))
		raw := Eval[string](t, b, to, `document.querySelector(`+jsString(card+` .raw-json`)+`).textContent`)
		var v struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatalf("raw JSON does not parse: %v", err)
		}
		if v.Result["success"] != true {
			t.Errorf("raw JSON result.success = %v, want true", v.Result["success"])
		}
		if !strings.Contains(raw, XSSTitle) {
			t.Error("raw JSON lacks the XSS title text")
		}
		b.Do(t, to, chromedp.Click(css(card+` .raw-toggle`)), chromedp.WaitNotVisible(css(card+` .raw-json`)))
	})

	t.Run("failing tool card shows the error and the retry", func(t *testing.T) {
		failed := lastAssistant(`?.querySelector('.tool-card[data-status="failed"]')`)
		b.Do(t, to, send(p.Failing), WaitFor(failed+` != null`), waitIdle())
		res := Eval[struct {
			Summary, Error, Meta string
			RetriedBadge         bool
		}](t, b, to, `(() => { const c = `+failed+`; c.querySelector('.tool-head').click();
			return { Summary: c.querySelector('.tool-summary').textContent,
				RetriedBadge: c.querySelector('.badge-retried')?.checkVisibility() === true,
				Error: c.querySelector('.tool-error-msg')?.textContent || '',
				Meta: c.querySelector('.tool-error-meta')?.textContent || '' }; })()`)
		b.Do(t, to, Screenshot(t, dir, "desktop-light-failed-tool"))
		errText := strings.TrimSpace(res.Error)
		if errText == "" || !strings.Contains(res.Summary, errText[:min(20, len(errText))]) {
			t.Errorf("failed card: summary %q, error %q: want the error in both", res.Summary, res.Error)
		}
		if !res.RetriedBadge || !strings.Contains(res.Meta, "Retried") {
			t.Errorf("failed card does not say it was retried: badge shown %v, details %q", res.RetriedBadge, res.Meta)
		}
	})

	if p.Error != "" {
		t.Run("error event shown inline", func(t *testing.T) {
			b.Do(t, to, send(p.Error),
				WaitFor(lastAssistant(`?.querySelector('.inline-error') != null`)), waitIdle(),
				Screenshot(t, dir, "desktop-light-error-event"))
			if msg := Eval[string](t, b, to, lastAssistant(`.querySelector('.inline-error').textContent`)); msg == "" {
				t.Error("inline error is empty")
			}
		})
	}

	t.Run("reload shows what was shown live", func(t *testing.T) {
		live := Eval[string](t, b, to, snapshotJS)
		if search := Eval[string](t, b, to, `location.search`); !strings.HasPrefix(search, "?c=") {
			t.Fatalf("location.search = %q, want ?c=<id>", search)
		}
		b.Do(t, to, chromedp.Reload(), waitReady())
		if reloaded := Eval[string](t, b, to, snapshotJS); reloaded != live {
			t.Errorf("after reload the thread differs.\nlive:\n%s\nreloaded:\n%s", live, reloaded)
		}
		if !Eval[bool](t, b, to, `!!document.querySelector('.conv.current .conv-open[aria-current="page"]')`) {
			t.Error("the open conversation is not marked current in the sidebar")
		}
	})

	t.Run("keyboard: Shift+Enter is a new line, cards toggle with Enter", func(t *testing.T) {
		b.Do(t, to, chromedp.Focus(css("#composer-input")),
			chromedp.SendKeys(css("#composer-input"), "first line"),
			enter(int64(chromedp.ModifierShift)),
			chromedp.SendKeys(css("#composer-input"), "second line"))
		if v := Eval[string](t, b, to, `document.getElementById('composer-input').value`); v != "first line\nsecond line" {
			t.Errorf("composer value = %q, want two lines", v)
		}
		if n := Eval[int](t, b, to, `document.querySelectorAll('#messages > li').length`); n == 0 {
			t.Fatal("no messages")
		}
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.getElementById('composer-input').value = ''`))
		head := `#messages > li.msg-assistant .tool-card .tool-head`
		before := Eval[string](t, b, to, `document.querySelector(`+jsString(head)+`).getAttribute('aria-expanded')`)
		b.Do(t, to, chromedp.Focus(css(head)), enter(0))
		after := Eval[string](t, b, to, `document.querySelector(`+jsString(head)+`).getAttribute('aria-expanded')`)
		if before == after {
			t.Errorf("Enter on a card header left aria-expanded at %q", after)
		}
		if !Eval[bool](t, b, to, `getComputedStyle(document.activeElement).outlineStyle !== 'none'`) {
			t.Error("the focused card header shows no focus ring")
		}
	})

	t.Run("screenshots: dark, phone", func(t *testing.T) {
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.tool-card[data-tool="semanticSearch"] .tool-head').forEach(h => h.getAttribute('aria-expanded') === 'false' && h.click())`),
			SetView(desktop(), "dark"), Screenshot(t, dir, "desktop-dark-conversation"),
			SetView(phone(), "light"), Screenshot(t, dir, "phone-light-conversation"),
			SetView(phone(), "dark"), Screenshot(t, dir, "phone-dark-conversation"))
		if !Eval[bool](t, b, to, `document.getElementById('sidebar').getBoundingClientRect().right <= 0`) {
			t.Error("on a phone the sidebar is visible without opening the menu")
		}
		b.Do(t, to, chromedp.Click(css("#menu-btn")),
			WaitFor(`document.getElementById('sidebar').getBoundingClientRect().left >= 0 && document.activeElement.id === 'new-chat'`),
			Screenshot(t, dir, "phone-dark-sidebar"),
			chromedp.KeyEvent("\u001b"),
			WaitFor(`document.getElementById('sidebar').getBoundingClientRect().right <= 0`),
			SetView(desktop(), "light"))
	})

	t.Run("stop cancels a running turn", func(t *testing.T) {
		b.Do(t, to, chromedp.Click(css("#new-chat")), WaitFor(`!document.getElementById('welcome').hidden`),
			send(p.Slow),
			WaitFor(lastAssistant(`?.querySelector('.md')?.textContent.length > 0`)),
			WaitFor(`!document.getElementById('stop-btn').hidden && document.getElementById('send-btn').hidden`),
			Screenshot(t, dir, "desktop-light-slow-streaming"),
			chromedp.Click(css("#stop-btn")),
			waitIdle(),
			WaitFor(lastAssistant(`.dataset.incomplete === 'true'`)),
			Screenshot(t, dir, "desktop-light-stopped"))
		ui := Eval[struct{ StopHidden, SendShown, Focused bool }](t, b, to, `({StopHidden: document.getElementById('stop-btn').hidden,
			SendShown: !document.getElementById('send-btn').hidden, Focused: document.activeElement.id === 'composer-input'})`)
		if !ui.StopHidden || !ui.SendShown || !ui.Focused {
			t.Errorf("after Stop: %+v, want Stop hidden, Send shown, focus in the composer", ui)
		}
		// The server saves what it produced, marked incomplete; a reload shows it so.
		b.Do(t, to, WaitForAsync(`(async () => {
			const id = new URLSearchParams(location.search).get('c');
			const c = await (await `+fetchJS(`'/api/conversations/' + encodeURIComponent(id)`)+`).json();
			const last = c.messages[c.messages.length - 1];
			return last.role === 'assistant' && last.incomplete === true;
		})()`), chromedp.Reload(), waitReady(),
			WaitFor(lastAssistant(`?.dataset.incomplete === 'true'`)))
	})

	t.Run("delete a conversation after confirming", func(t *testing.T) {
		id := Eval[string](t, b, to, `new URLSearchParams(location.search).get('c')`)
		sel := `.conv[data-id=` + jsString(id) + `]`
		b.Do(t, to, WaitFor(`!!document.querySelector(`+jsString(sel)+`)`),
			chromedp.Click(css(sel+` .conv-delete`)),
			chromedp.WaitVisible(css("#confirm-dialog")),
			Screenshot(t, dir, "desktop-light-confirm-delete"),
			chromedp.Click(css("#confirm-cancel")),
			chromedp.WaitNotVisible(css("#confirm-dialog")))
		if !Eval[bool](t, b, to, `!!document.querySelector(`+jsString(sel)+`)`) {
			t.Fatal("Cancel deleted the conversation")
		}
		b.Do(t, to, chromedp.Click(css(sel+` .conv-delete`)),
			chromedp.WaitVisible(css("#confirm-dialog")),
			chromedp.Click(css("#confirm-ok")),
			WaitFor(`!document.querySelector(`+jsString(sel)+`) && !document.getElementById('welcome').hidden`),
			WaitForAsync(`(async () => (await `+fetchJS(`'/api/conversations/' + encodeURIComponent(`+jsString(id)+`)`)+`).status === 404)()`))
	})

	if opts.Token != "" {
		t.Run("asks for the token on 401", func(t *testing.T) {
			tab := b.NewTab(t)
			defer tab.CheckNoProblems(t)
			tab.Do(t, to, SetView(desktop(), "light"), chromedp.Navigate(baseURL+"/"),
				chromedp.WaitVisible(css("#token-dialog")),
				chromedp.SendKeys(css("#token-input"), "wrong-token"), enter(0),
				chromedp.WaitVisible(css("#token-error")),
				Screenshot(t, dir, "desktop-light-token-prompt"),
				chromedp.SendKeys(css("#token-input"), opts.Token), enter(0),
				waitReady(),
				chromedp.WaitNotVisible(css("#token-dialog")),
				WaitFor(`document.querySelectorAll('.conv').length > 0`))
		})
	}
}

// RunNoModelChecks checks the page of a server without a model: a brief
// banner with the server's help text (folded), and the tool bench offered in
// place of a composer that cannot send.
func RunNoModelChecks(t *testing.T, baseURL string, opts Options) {
	b := openPage(t, baseURL, opts, SetView(desktop(), "light"))
	dir := opts.artifactsDir(t)
	to := opts.timeout()
	b.Do(t, to, chromedp.WaitVisible(css("#no-model-banner")), chromedp.WaitVisible(css("#bench")),
		Screenshot(t, dir, "desktop-light-no-model"),
		SetView(phone(), "dark"), Screenshot(t, dir, "phone-dark-no-model"))
	// The help names long URLs: at phone width they must wrap inside the
	// banner, not run out of it (opened, as a person reading it would).
	b.Do(t, to, chromedp.Click(css("#no-model-banner summary")), chromedp.WaitVisible(css("#no-model-help")))
	if w := Eval[struct{ Scroll, Client int }](t, b, to, `(() => { const e = document.getElementById('no-model-banner'); return {Scroll: e.scrollWidth, Client: e.clientWidth}; })()`); w.Scroll > w.Client {
		t.Errorf("at phone width the no-model banner's text is %d px wide in a %d px banner", w.Scroll, w.Client)
	}
	b.Do(t, to, chromedp.Click(css("#no-model-banner summary")), SetView(desktop(), "light"))
	res := Eval[struct {
		Help                     string
		Bench, Composer, Pressed bool
	}](t, b, to, `({Help: document.getElementById('no-model-help').textContent,
		Bench: !document.getElementById('bench').hidden,
		Composer: document.getElementById('composer').checkVisibility(),
		Pressed: document.getElementById('bench-btn').getAttribute('aria-pressed') === 'true'})`)
	if strings.TrimSpace(res.Help) == "" {
		t.Error("the no-model banner has no help text")
	}
	if !res.Bench || !res.Pressed {
		t.Errorf("without a model the page does not offer the tool bench (shown %v, Tools pressed %v)", res.Bench, res.Pressed)
	}
	if res.Composer {
		t.Error("without a model the page shows a composer that cannot send")
	}
	// The chat view offers the bench instead of a disabled message box.
	b.Do(t, to, chromedp.Click(css("#bench-btn")), chromedp.WaitVisible(css("#no-model-note")))
	// Suggestions fill the hidden composer: clicking one would do nothing.
	if n := Eval[int](t, b, to, `[...document.querySelectorAll('.suggestion')].filter(e => e.checkVisibility()).length`); n != 0 {
		t.Errorf("without a model the chat view shows %d suggestions for a composer it hides", n)
	}
	b.Do(t, to, chromedp.Click(css("#open-bench")), chromedp.WaitVisible(css("#bench")),
		WaitFor(`document.activeElement && document.activeElement.id === 'bench-title'`))
}

// BenchRun is a tool call made through the bench: the arguments typed into
// its form, and a text the result card must show.
type BenchRun struct {
	Tool   string
	Fields map[string]string // field name → text typed into it
	Want   string            // shown in the result card and the raw JSON
}

// RunBenchChecks opens the page (the bench is expected on offer, as without
// a model), runs run through the bench's form and checks the result card,
// the raw JSON and the timing; screenshots of the bench with the result go
// to the artifacts directory, at desktop and phone widths, light and dark.
func RunBenchChecks(t *testing.T, baseURL string, opts Options, run BenchRun) {
	b := openPage(t, baseURL, opts, SetView(desktop(), "light"))
	dir := opts.artifactsDir(t)
	to := opts.timeout()
	tool := `.bench-tool[data-tool=` + jsString(run.Tool) + `]`
	b.Do(t, to, chromedp.WaitVisible(css("#bench")), chromedp.WaitVisible(css(tool)), chromedp.Click(css(tool)),
		WaitFor(`document.querySelector('.bench-form').dataset.tool === `+jsString(run.Tool)))
	for name, v := range run.Fields {
		q := `.bench-form [data-field=` + jsString(name) + `]`
		b.Do(t, to, chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(q)+`).value = ''`),
			chromedp.Focus(css(q)), chromedp.SendKeys(css(q), v))
	}
	card := `.bench-result .tool-card[data-tool=` + jsString(run.Tool) + `]`
	b.Do(t, to, chromedp.Click(css(".bench-run")),
		WaitFor(`!!document.querySelector(`+jsString(card+`[data-status="completed"]`)+`)`))
	got := Eval[struct{ Content, Raw, Timing, Summary string }](t, b, to, `(() => {
		const c = document.querySelector(`+jsString(card)+`);
		return {Content: c.querySelector('.tool-content').textContent, Summary: c.querySelector('.tool-summary').textContent,
			Raw: document.querySelector('.bench-raw-json').textContent, Timing: document.querySelector('.bench-timing').textContent};
	})()`)
	if !strings.Contains(got.Content, run.Want) {
		t.Errorf("the result card does not show %q:\n%s", run.Want, got.Content)
	}
	if !strings.Contains(got.Raw, jsString(run.Want)) || !strings.Contains(got.Raw, `"success": true`) {
		t.Errorf("the raw JSON does not hold %q and success:\n%s", run.Want, got.Raw)
	}
	if !timingLine.MatchString(got.Timing) {
		t.Errorf("the timing line is %q, want the tool's and the round trip's durations", got.Timing)
	}
	if got.Summary == "" {
		t.Error("the result card has no summary")
	}
	for _, v := range []struct {
		size   Viewport
		scheme string
		name   string
	}{{desktop(), "light", "desktop-light-bench"}, {desktop(), "dark", "desktop-dark-bench"}, {phone(), "light", "phone-light-bench"}, {phone(), "dark", "phone-dark-bench"}} {
		b.Do(t, to, SetView(v.size, v.scheme), chromedp.ScrollIntoView(css(".bench-result .tool-card")), Screenshot(t, dir, v.name))
		if w := Eval[struct{ Scroll, Client int }](t, b, to, `({Scroll: document.getElementById('bench').scrollWidth, Client: document.getElementById('bench').clientWidth})`); w.Scroll > w.Client {
			t.Errorf("%s: the bench is %d px wide in a %d px view", v.name, w.Scroll, w.Client)
		}
	}
}

// ArtServer serves generated album artwork (/art/N.svg) over https on
// 127.0.0.1 until the test ends: the page shows https artwork only.
func ArtServer(t *testing.T) *httptest.Server {
	colors := [][2]string{{"#6d5efc", "#19b6c9"}, {"#f76b1c", "#fad961"}, {"#0f9b8e", "#2c3e50"}, {"#e94057", "#8a2387"}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/art/%d.svg", &n); err != nil || n < 0 {
			http.NotFound(w, r)
			return
		}
		c := colors[n%len(colors)]
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="%s"/><stop offset="1" stop-color="%s"/></linearGradient></defs><rect width="100" height="100" fill="url(#g)"/><circle cx="50" cy="50" r="22" fill="none" stroke="#fff" stroke-opacity=".6" stroke-width="3"/><circle cx="50" cy="50" r="4" fill="#fff" fill-opacity=".8"/></svg>`, c[0], c[1])
	}))
	t.Cleanup(srv.Close)
	return srv
}
