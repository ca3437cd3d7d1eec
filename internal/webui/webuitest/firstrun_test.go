package webuitest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/tool"
)

// firstRunDemo is how many demo tracks the browser tests load: the server's
// configuration (music.DemoIndex.Limit), not a parameter a client can send.
// The whole set takes minutes under -race on a loaded machine.
const firstRunDemo = 300

// heldDemo is the demo index with its load held after the first batch
// until release is closed, so that the page's progress can be seen.
type heldDemo struct {
	music.DemoIndex
	once    sync.Once
	shown   chan struct{} // closed after the first progress report
	release chan struct{}
}

func (d *heldDemo) Load(ctx context.Context, progress func(int)) (int, error) {
	return d.DemoIndex.Load(ctx, func(read int) {
		progress(read)
		d.once.Do(func() {
			close(d.shown)
			<-d.release
		})
	})
}

// firstRunServer is the real chat server over a fresh store with the music
// pack and no keys: TIDAL's tools are declared but not offered.
func firstRunServer(t *testing.T, wiring server.Wiring, logger *slog.Logger) (base string, demo *heldDemo) {
	t.Helper()
	db := newStore(t)
	emb, err := embedding.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	svc := music.New(db, emb, nil)
	reg := tool.NewRegistry()
	for _, tl := range music.Tools(svc) {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	demo = &heldDemo{DemoIndex: music.DemoIndex{Service: svc, Limit: firstRunDemo}, shown: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-demo.release:
		default:
			close(demo.release)
		}
	})
	wiring.Agent.Logger = logger
	return startServer(t, server.Config{Store: db, Playlists: db, Registry: reg, DemoIndex: demo, Logger: logger}, wiring), demo
}

// TestFirstRunNoKeys is a first run with no keys and no model: the bench
// opens on a tool that works, says which tools the model could use and
// why the rest are withheld, offers the demo tracks for the empty index,
// shows the load's progress and then the count, and a semantic search
// then finds the tracks.
func TestFirstRunNoKeys(t *testing.T) {
	base, demo := firstRunServer(t, server.Wiring{}, nil)
	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	dir := Options{}.artifactsDir(t)
	axe := axeSource(t)
	checkAxe := func(name string) {
		t.Helper()
		b.Do(t, 30*time.Second, chromedp.Evaluate[chromedp.Void](axe))
		reportAxe(t, b, 30*time.Second, name)
	}
	to := 60 * time.Second
	b.Do(t, to, chromedp.WaitVisible(css("#bench-load-demo")))

	// The bench opens on a tool the model is offered (no key needed).
	opened := Eval[string](t, b, to, `document.querySelector('.bench-tool[aria-pressed="true"]').dataset.tool`)
	if opened == "" || Eval[bool](t, b, to, `document.querySelector('.bench-tool[aria-pressed="true"]').classList.contains('is-not-offered')`) {
		t.Errorf("the bench opened on %q, a tool not offered", opened)
	}
	lines := Eval[[]string](t, b, to, `[...document.querySelectorAll('#bench-offered p')].map(p => p.textContent)`)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "The model can use ") || !strings.Contains(lines[0], "semanticSearch") ||
		strings.Contains(lines[0], "tidalSearch") || !strings.Contains(lines[1], "tidalSearch (") {
		t.Errorf("offered lines = %q, want the offered tools, then tidalSearch withheld with why", lines)
	}
	if got := Eval[string](t, b, to, `document.getElementById('bench-index').textContent`); !strings.Contains(got, "empty") ||
		!strings.Contains(got, "Load the 300 demo tracks") || strings.Contains(got, "null") {
		t.Errorf("index box = %q, want the empty index and the offer", got)
	}
	b.Do(t, to, Screenshot(t, dir, "firstrun-empty-index"))
	checkAxe("empty index")

	// Click 1: load. The load is held after its first batch, so the page
	// shows its progress.
	b.Do(t, to, chromedp.Click(css("#bench-load-demo")))
	<-demo.shown
	b.Do(t, to, WaitFor(`document.querySelector('#bench-index progress')?.value > 0`))
	prog := Eval[string](t, b, to, `document.querySelector('#bench-index .bench-index-text').textContent`)
	if !strings.HasPrefix(prog, "Loading the demo tracks: ") || !strings.Contains(prog, "of 300") {
		t.Errorf("progress = %q", prog)
	}
	b.Do(t, to, Screenshot(t, dir, "firstrun-demo-loading"))
	checkAxe("demo loading")
	close(demo.release)
	b.Do(t, to, WaitFor(`document.getElementById('bench-index').dataset.state === 'succeeded'`))
	if got := Eval[string](t, b, to, `document.getElementById('bench-index').textContent`); got != "Demo tracks loaded: 300 new. The music index holds 300 tracks." {
		t.Errorf("after the load: %q", got)
	}

	// Click 2: a semantic search finds the demo tracks.
	b.Do(t, to, chromedp.Click(css(`.bench-tool[data-tool="semanticSearch"]`)),
		WaitFor(`document.querySelector('.bench-form').dataset.tool === 'semanticSearch'`),
		chromedp.SendKeys(css("#bench-semanticSearch-query"), "sad piano ballad"),
		chromedp.Click(css(".bench-run")),
		WaitFor(`!!document.querySelector('.bench-result .tool-card[data-status="completed"]')`))
	raw := Eval[string](t, b, to, `document.querySelector('.bench-raw-json').textContent`)
	if !strings.Contains(raw, "MusicCaps clip") || !strings.Contains(raw, `"success": true`) {
		t.Errorf("search result = %.300q, want MusicCaps tracks", raw)
	}
	b.Do(t, to, Screenshot(t, dir, "firstrun-search-result"))
	checkAxe("search result")

	// Reloaded, the page shows the count instead of the offer.
	b.Do(t, to, chromedp.Reload(), waitReady(), WaitFor(`document.getElementById('bench-index').dataset.state === 'succeeded'`))
	if n := Eval[int](t, b, to, `document.querySelectorAll('#bench-load-demo').length`); n != 0 {
		t.Errorf("the offer to load is still shown after the load")
	}
}

// TestModelFailureNamesURL: a model server that refuses the request (HTTP
// 404, as a wrong base URL gets) fails the turn with a message naming the
// server's URL, in the page and in the server log, and never the key. The
// suggestion chips fill the composer, which is shown.
func TestModelFailureNamesURL(t *testing.T) {
	const key = "sk-firstrun-secret-key"
	var calls int
	var mu sync.Mutex
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		// CONSTRUCTED in the shape of Anthropic's error body.
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"model: no-such-model"}}`)
	}))
	t.Cleanup(refusing.Close)
	model, err := llm.NewAnthropic("no-such-model", llm.Options{APIKey: key, BaseURL: refusing.URL})
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base, _ := firstRunServer(t, server.Wiring{Agent: agent.Config{Provider: model, ModelName: "anthropic:no-such-model",
		ContextWindow: 10000, ModelRetryDelay: time.Millisecond}}, logger)
	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	dir := Options{}.artifactsDir(t)
	to := 60 * time.Second
	b.Do(t, to, chromedp.WaitVisible(css(".suggestion")), chromedp.Click(css(".suggestion")))
	chip := Eval[struct {
		Value, Chip string
		Visible     bool
		Focused     bool
	}](t, b, to, `({Value: document.getElementById('composer-input').value, Chip: document.querySelector('.suggestion').textContent,
		Visible: !!document.getElementById('composer-input').offsetParent, Focused: document.activeElement.id === 'composer-input'})`)
	if chip.Value == "" || chip.Value != chip.Chip || !chip.Visible || !chip.Focused {
		t.Errorf("after a chip's click: %+v, want its text in the visible, focused composer", chip)
	}
	b.Do(t, to, enter(0), waitIdle(), WaitFor(lastAssistant(`?.textContent.includes('HTTP 404')`)))
	want := refusing.URL + "/v1/messages"
	shown := Eval[string](t, b, to, lastAssistant(`.textContent`))
	if !strings.Contains(shown, want) || strings.Contains(shown, key) {
		t.Errorf("the failed turn shows %q, want the model URL %s and no key", shown, want)
	}
	b.Do(t, to, Screenshot(t, dir, "firstrun-model-refused"))
	axe := axeSource(t)
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "model refused")
	logMu.Lock()
	logged := logBuf.String()
	logMu.Unlock()
	if !strings.Contains(logged, "the model call failed") || !strings.Contains(logged, "url="+want) || strings.Contains(logged, key) {
		t.Errorf("server log = %q, want the failed call with url=%s and no key", logged, want)
	}
}

// lockedWriter serializes the server's log writes for the test to read.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
