package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/webui/webuitest"
)

// TestDiscoverChatInBrowser runs the Discover Chat page checks in a headless
// Chromium against real `toolport serve` processes: with the scripted model
// over the Anthropic protocol and a bearer token, over the OpenAI protocol
// without one, and with no model at all. The music tools answer from an
// index and a library prepared with the toolport CLI; web_fetch fails against
// a local server that always answers 503.
func TestDiscoverChatInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolport and drives Chromium")
	}
	bin := buildToolport(t)
	art := webuitest.ArtServer(t)
	artifacts := os.Getenv("TOOLPORT_ARTIFACTS_DIR")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	t.Logf("screenshots go to %s", artifacts)
	// The artwork server's certificate is the test's own (127.0.0.1).
	flags := []chromedp.ExecAllocatorOption{chromedp.Flag("ignore-certificate-errors", true)}

	for _, tc := range []struct {
		name, provider, token string
	}{
		{"anthropic-token", "anthropic", "e2e-s3cret-token"},
		{"openai", "openai", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flaky := newFlakyServer(t)
			ms := servertest.NewModelServer(t, scenarios(flaky.URL)...)
			dir := t.TempDir()
			env := baseEnv(dir)
			prepareMusic(t, bin, env, dir, art.URL)
			env = append(env, ms.Env(tc.provider)...)
			env = append(env, "TOOLPORT_FETCH_ALLOW_PRIVATE=1")
			if tc.token != "" {
				env = append(env, "TOOLPORT_API_TOKEN="+tc.token)
			}
			srv := startServe(t, bin, env)
			checkSearch(t, srv.url, tc.token)

			webuitest.RunPageChecks(t, srv.url, webuitest.Options{
				Token:        tc.token,
				Prompts:      webuitest.DefaultPrompts(),
				ArtifactsDir: filepath.Join(artifacts, tc.name),
				ExtraFlags:   flags,
			})
			// The Failing scenario ran once: web_fetch's request and the
			// registry's one retry.
			if n := flaky.hits.Load(); n != 2 {
				t.Errorf("the failing web server saw %d requests, want 2 (a fetch and its retry)", n)
			}
			srv.stop(t)
		})
	}

	t.Run("no-model", func(t *testing.T) {
		dir := t.TempDir()
		env := baseEnv(dir)
		prepareMusic(t, bin, env, dir, art.URL)
		srv := startServe(t, bin, env)
		webuitest.RunNoModelChecks(t, srv.url, webuitest.Options{ArtifactsDir: filepath.Join(artifacts, "no-model")})
		// Every tool works without a model: the bench the page offers runs
		// semanticSearch on the prepared index and shows the track card.
		webuitest.RunBenchChecks(t, srv.url, webuitest.Options{ArtifactsDir: filepath.Join(artifacts, "no-model"), ExtraFlags: flags},
			webuitest.BenchRun{Tool: "semanticSearch", Fields: map[string]string{"query": "melancholic piano ballad about lost love", "limit": "3"}, Want: "Someone Like You"})
		srv.stop(t)
	})
}

// scenarios scripts the model for webuitest's DefaultPrompts; flakyURL is a
// server whose every answer is 503.
func scenarios(flakyURL string) []servertest.Turn {
	p := webuitest.DefaultPrompts()
	answer := "Here are songs with that **bittersweet** feel:\n\n" +
		"1. **Someone Like You** by Adele, from *21*\n" +
		"2. **Everybody Hurts** by R.E.M.\n" +
		"3. A track whose title looks like markup: `" + webuitest.XSSTitle + "`\n\n" +
		"| Track | Mood | In library |\n|---|---|:-:|\n" +
		"| Someone Like You | longing | yes |\n| Everybody Hurts | solace | no |\n\n" +
		"Two are already in your library. [not a link](javascript:alert(2)) <script>alert(3)</script>"
	fetchInput, _ := json.Marshal(map[string]string{"url": flakyURL + "/status"})

	slow := []servertest.Event{}
	for i := range 20 {
		slow = append(slow, servertest.Pause(100*time.Millisecond),
			servertest.Text(fmt.Sprintf("Once upon a time, part %d, the story went on and on. ", i+1)))
	}
	// The story never ends by itself: the check stops it, and waits for
	// that, so no timing can let the turn finish first.
	slow = append(slow, servertest.Pause(10*time.Minute))

	return []servertest.Turn{
		{Match: p.Tool, Events: append(words("Let me look through the index for melancholic love songs."),
			servertest.Call("toolu_e2e_search", "semanticSearch", `{"query":"melancholic love songs","limit":5}`)),
			InputTokens: 900, OutputTokens: 40},
		{Match: p.Tool, Step: 1, Events: words(answer), InputTokens: 1500, OutputTokens: 120},
		{Match: p.Failing, Events: append(words("I'll fetch that status page."),
			servertest.Call("toolu_e2e_fetch", "web_fetch", string(fetchInput))), InputTokens: 800, OutputTokens: 30},
		{Match: p.Failing, Step: 1, Events: words("The server answered 503 twice, even after a retry, so I can't read it right now."),
			InputTokens: 1000, OutputTokens: 30},
		{Match: p.Slow, Events: slow, InputTokens: 500, OutputTokens: 400},
		{Match: p.Error, Events: append(words("Let me think about that."), servertest.Break())},
	}
}

// words streams text as deltas of a few words each, with a short pause
// between them so the page renders the text as it grows.
func words(text string) []servertest.Event {
	var out []servertest.Event
	parts := strings.SplitAfter(text, " ")
	for i := 0; i < len(parts); i += 3 {
		out = append(out, servertest.Pause(15*time.Millisecond), servertest.Text(strings.Join(parts[i:min(i+3, len(parts))], "")))
	}
	return out
}

// baseEnv is a process environment confined to dir: no credentials or
// configuration of the person running the tests reach the server.
func baseEnv(dir string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"TOOLPORT_DATABASE_URL=" + filepath.Join(dir, "toolport.db"),
	}
}

// The ISRCs of the prepared tracks.
const (
	isrcXSS     = "GBE2E2600001"
	isrcAdele   = "GBBKS1000351"
	isrcREM     = "USWB19200001"
	isrcSunny   = "GBAYE8500001"
	isrcHurt    = "USUM70200001"
	isrcSeptemb = "USSM17800001"
)

// prepareMusic fills the index and the library with the toolport CLI: the
// track titled webuitest.XSSTitle is indexed and in the library, so that the
// Tool scenario's search finds it with both badges.
func prepareMusic(t *testing.T, bin string, env []string, dir, artURL string) {
	t.Helper()
	type rec = map[string]any
	tracks := []rec{
		{"isrc": isrcXSS, "title": webuitest.XSSTitle, "artist": "The Escapes", "album": "<b>Onerror</b>", "duration": 245,
			"interpretation": "A melancholic love song about longing for someone who left: a sad, bittersweet ballad of heartbreak and lost love."},
		{"isrc": isrcAdele, "title": "Someone Like You", "artist": "Adele", "album": "21", "duration": 285,
			"interpretation": "A melancholic piano ballad about lost love and moving on; a tender, sad love song."},
		{"isrc": isrcREM, "title": "Everybody Hurts", "artist": "R.E.M.", "album": "Automatic for the People", "duration": 320,
			"interpretation": "A slow, melancholic song of solace for people in pain: everybody hurts sometimes."},
		{"isrc": isrcHurt, "title": "Hurt", "artist": "Johnny Cash", "album": "American IV", "duration": 218,
			"interpretation": "A stark, melancholic song of regret and loss at the end of a life."},
		{"isrc": isrcSunny, "title": "Walking on Sunshine", "artist": "Katrina and the Waves", "album": "Walking on Sunshine", "duration": 239,
			"interpretation": "An upbeat, joyful pop song about the rush of being happy and in love."},
		{"isrc": isrcSeptemb, "title": "September", "artist": "Earth, Wind & Fire", "album": "The Best of Earth, Wind & Fire", "duration": 215,
			"interpretation": "A joyful funk party song for dancing, celebrating a night to remember."},
	}
	for i, tr := range tracks {
		tr["artworkUrl"] = fmt.Sprintf("%s/art/%d.svg", artURL, i+1)
	}
	library := []rec{
		{"isrc": isrcXSS, "title": webuitest.XSSTitle, "artist": "The Escapes", "album": "<b>Onerror</b>"},
		{"isrc": isrcAdele, "title": "Someone Like You", "artist": "Adele", "album": "21"},
	}
	indexFile := writeJSONL(t, filepath.Join(dir, "tracks.jsonl"), tracks)
	libFile := writeJSONL(t, filepath.Join(dir, "library.jsonl"), library)
	runCLI(t, bin, env, "index", "add", "--quiet", indexFile)
	runCLI(t, bin, env, "library", "import", libFile)
}

func writeJSONL(t *testing.T, name string, recs []map[string]any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// runCLI runs a toolport command that must succeed and report no skipped line.
func runCLI(t *testing.T, bin string, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || strings.Contains(stderr.String(), "skipped") {
		t.Fatalf("toolport %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("toolport %s: %s", strings.Join(args, " "), strings.TrimSpace(stdout.String()))
}

// checkSearch asks the server's tool API directly what the Tool scenario's
// search will return, so that a page failure cannot hide a data problem.
func checkSearch(t *testing.T, base, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/tools/semanticSearch",
		strings.NewReader(`{"query":"melancholic love songs","limit":5}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var res struct {
		Success bool
		Tracks  []struct {
			ISRC, Title          string
			InLibrary, IsIndexed bool
		}
	}
	if err := json.Unmarshal(body, &res); err != nil || resp.StatusCode != http.StatusOK || !res.Success {
		t.Fatalf("semanticSearch via /api/tools: %s %v\n%s", resp.Status, err, body)
	}
	for _, tr := range res.Tracks {
		if tr.Title == webuitest.XSSTitle {
			if !tr.InLibrary || !tr.IsIndexed {
				t.Fatalf("the XSS track has inLibrary %v, isIndexed %v; want both true", tr.InLibrary, tr.IsIndexed)
			}
			return
		}
	}
	t.Fatalf("semanticSearch does not find the XSS track:\n%s", body)
}

// serveProc is a running `toolport serve`.
type serveProc struct {
	url    string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's, once done is closed
	stderr string        // file receiving the server's stderr
}

// startServe runs `toolport serve` on a free loopback port and waits until
// it answers /healthz. The process is killed when the test ends unless stop
// has ended it; its stderr is logged when the test fails.
func startServe(t *testing.T, bin string, env []string) *serveProc {
	t.Helper()
	p := &serveProc{done: make(chan struct{}), stderr: filepath.Join(t.TempDir(), "serve.stderr")}
	errFile, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	p.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	p.cmd.Env = env
	p.cmd.Stderr = errFile
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	banner := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		banner <- line
		io.Copy(io.Discard, r) //nolint:errcheck // draining until exit
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill() //nolint:errcheck // it may have just exited
			<-p.done
		}
		if t.Failed() {
			if b, err := os.ReadFile(p.stderr); err == nil {
				t.Logf("toolport serve stderr:\n%s", b)
			}
		}
	})

	select {
	case line := <-banner:
		_, u, ok := strings.Cut(strings.TrimSpace(line), "serving on ")
		if !ok {
			p.cmd.Process.Kill() //nolint:errcheck // it may have exited already
			<-p.done
			b, _ := os.ReadFile(p.stderr)
			t.Fatalf("toolport serve did not start (%v): stdout %q\nstderr:\n%s", p.err, line, b)
		}
		p.url = strings.TrimSuffix(u, "/")
	case <-time.After(time.Minute):
		t.Fatal("toolport serve printed no address within a minute")
	}
	waitHealthy(t, p.url)
	return p
}

// waitHealthy polls /healthz until it answers 200, for at most 30 s.
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/healthz: not healthy (%v)", base, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and checks that the server exits with status 0 (with a
// race-enabled build, a data race makes the status 66).
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("toolport serve did not exit within 30 s of SIGTERM")
	}
	if p.err != nil {
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			t.Errorf("toolport serve exited with status %d after SIGTERM, want 0", ee.ExitCode())
		} else {
			t.Errorf("toolport serve: %v", p.err)
		}
	}
	if b, err := os.ReadFile(p.stderr); err == nil && (bytes.Contains(b, []byte("panic")) || bytes.Contains(b, []byte("DATA RACE"))) {
		t.Errorf("toolport serve stderr reports a panic or a race:\n%s", b)
	}
}

// buildToolport builds the binary under test into the test's temporary
// directory, with the race detector when the tests run with it.
func buildToolport(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolport")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "../cmd/toolport")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// flakyServer is a web server whose every answer is 503 Service Unavailable.
type flakyServer struct {
	URL  string
	hits atomic.Int64
}

func newFlakyServer(t *testing.T) *flakyServer {
	f := &flakyServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" { // none (404): web_fetch may fetch, and meets the 503
			http.NotFound(w, r)
			return
		}
		f.hits.Add(1)
		http.Error(w, "temporarily down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}
