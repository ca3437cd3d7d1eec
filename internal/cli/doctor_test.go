package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/doctor"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// runEnv runs the command line against a configuration of vars alone.
func runEnv(t *testing.T, vars map[string]string, stdin string, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cfg, err := config.New(func(k string) string { return vars[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry,
		StdinIsTerminal: terminal}
	code = cli.Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func closedURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// keyless points the keyless upstreams (CKAN, LRCLIB, ReccoBeats) at url
// and sets no key: the machine of someone who has configured nothing.
func keyless(url string) map[string]string {
	return map[string]string{"CKAN_BASE_URL": url, "LRCLIB_BASE_URL": url, "RECCOBEATS_BASE_URL": url}
}

func TestDoctorLinesAndExitStatus(t *testing.T) {
	code, out, _ := runEnv(t, keyless(closedURL(t)), "", false, "doctor", "--timeout", "2s")
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d: the keyless defaults fail", code, cli.ExitFailure)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 16 {
		t.Fatalf("want one line per upstream and a summary, got:\n%s", out)
	}
	for _, want := range []string{"brave", "not configured", "no API key — fix: set BRAVE_API_KEY"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("brave line %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(out, "ckan") || !strings.Contains(out, "failing") || !strings.Contains(out, "unreachable: cannot connect") {
		t.Errorf("output:\n%s", out)
	}
	if lines[15] != "3 configured upstreams are failing" {
		t.Errorf("summary %q", lines[15])
	}
}

func TestDoctorJSON(t *testing.T) {
	ok := tooltest.NewServer(t, tooltest.Reply{}) // answers 200 with nothing: wrong shape for the clients
	code, out, _ := runEnv(t, map[string]string{"TOOLPORT_VECTOR_URL": ok.URL, "CKAN_BASE_URL": closedURL(t),
		"LRCLIB_BASE_URL": closedURL(t), "RECCOBEATS_BASE_URL": closedURL(t)}, "", false, "doctor", "--json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if code != cli.ExitFailure || rep.OK || len(rep.Results) != 15 {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
	for _, r := range rep.Results {
		if r.Name == "weaviate" && (r.Status != doctor.OK || r.Detail != "ready" || r.Requests != 1) {
			t.Errorf("weaviate: %+v", r)
		}
	}
}

// TestDoctorAsksBeforeSpendingQuota: with a key configured, the quota
// check is announced; without a terminal and --yes it is skipped and no
// request reaches Brave, with a terminal the answer decides, and --yes
// runs it.
func TestDoctorAsksBeforeSpendingQuota(t *testing.T) {
	body := tooltest.Fixture(t, "brave", "web_search_what_is_semantic_kernel.json")
	tests := []struct {
		name     string
		stdin    string
		terminal bool
		args     []string
		requests int
		stderr   string
	}{
		{"no terminal", "", false, nil, 0, "stdin is not a terminal: skipping them (run with --yes to include them)"},
		{"terminal, no", "n\n", true, nil, 0, "Run them? [y/N] skipping them"},
		{"terminal, yes", "y\n", true, nil, 1, "Run them? [y/N]"},
		{"--yes", "", false, []string{"--yes"}, 1, "These checks cost quota on your accounts:\n  brave       one web search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			brave := tooltest.NewServer(t, tooltest.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: body})
			vars := keyless(closedURL(t))
			vars["BRAVE_API_KEY"], vars["BRAVE_API_BASE_URL"] = "brave-key-0123456789", brave.URL
			_, out, stderr := runEnv(t, vars, tt.stdin, tt.terminal, append([]string{"doctor", "--timeout", "2s"}, tt.args...)...)
			if got := len(brave.Requests()); got != tt.requests {
				t.Errorf("brave got %d requests, want %d", got, tt.requests)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			want := "skipped"
			if tt.requests == 1 {
				want = "web_search_brave: "
			}
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// TestRecordThenReplay records `toolport doctor --record` against local
// fakes with planted keys, checks that no byte of the recording holds a
// key, then replays the recording through the real Brave client and tool.
func TestRecordThenReplay(t *testing.T) {
	const key = "BSA-planted-brave-key-5f1e9d3c"
	body := tooltest.Fixture(t, "brave", "web_search_what_is_semantic_kernel.json")
	limits := tooltest.HeaderFixture(t, "brave", "rate_limit_headers_measured.txt")
	limits.Set("Content-Type", "application/json")
	brave := tooltest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for k, v := range limits {
			w.Header()[k] = v
		}
		w.Write(body)
	}))
	dir := filepath.Join(t.TempDir(), "rec")
	vars := keyless(closedURL(t))
	vars["BRAVE_API_KEY"], vars["BRAVE_API_BASE_URL"] = key, brave.URL
	_, out, stderr := runEnv(t, vars, "", false, "doctor", "--yes", "--record", dir)
	if !strings.Contains(out, "web_search_brave: ") || !strings.Contains(stderr, "recording upstream exchanges to "+dir) {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}

	// No file holds the key.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte(key[8:])) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})

	rec, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var braveEx *record.Exchange
	for i, ex := range rec.Manifest.Exchanges {
		if ex.Upstream == "brave" {
			braveEx = &rec.Manifest.Exchanges[i]
			if !bytes.Equal(rec.Responses[i].Body, body) {
				t.Error("the recorded body is not the upstream's, byte for byte")
			}
			if rec.Responses[i].Header.Get("X-Ratelimit-Remaining") != "0, 1977" {
				t.Errorf("headers %v", rec.Responses[i].Header)
			}
		}
	}
	if braveEx == nil || braveEx.Path != "/res/v1/web/search" || !strings.Contains(braveEx.Query, "q=toolport") || rec.Manifest.Version == "" {
		t.Fatalf("manifest %+v", rec.Manifest)
	}

	// Replay through the real client and tool, with another key: the
	// recording answers as Brave did.
	replay := tooltest.ReplayRecording(t, dir, "brave")
	cfg := websearch.Config{BraveAPIKey: "another-key", BraveBaseURL: replay.URL, BraveTools: []string{"web"}}
	reg := tool.NewRegistry()
	if err := reg.Register(websearch.Tools(cfg)...); err != nil {
		t.Fatal(err)
	}
	res := reg.Call(context.Background(), "web_search_brave", json.RawMessage(`{"query":"toolport","count":1}`))
	if res.Err != nil {
		t.Fatalf("replay: %v", res.Err)
	}
	if !strings.Contains(string(res.JSON), "semantic") {
		t.Errorf("replayed result %s", res.JSON)
	}
}

// TestRecordDirForAnyCommand: TOOLPORT_RECORD_DIR records a tool call.
func TestRecordDirForAnyCommand(t *testing.T) {
	ckan := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	dir := filepath.Join(t.TempDir(), "rec")
	vars := map[string]string{"CKAN_BASE_URL": ckan.URL, "TOOLPORT_RECORD_DIR": dir, "TOOLPORT_DATABASE_URL": ":memory:"}
	code, out, stderr := runEnv(t, vars, "", false, "call", "searchDatasets", `{"rows":3}`)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	rec, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Manifest.Exchanges) != 1 || rec.Manifest.Exchanges[0].Upstream != "ckan" || rec.Manifest.Exchanges[0].Path != "/api/3/action/package_search" {
		t.Errorf("manifest %+v", rec.Manifest)
	}
}

// TestDoctorOfflineProcess runs the real binary on a fresh machine with no
// keys and no way out (every HTTPS request goes to a proxy on a closed
// port, so the real default addresses are used and nothing leaves the
// machine): the keyed upstreams are not configured, the keyless defaults
// data.gov.il, LRCLIB and ReccoBeats are unreachable, and it ends promptly
// with exit status 1.
func TestDoctorOfflineProcess(t *testing.T) {
	proxy, bin := closedURL(t), binary(t)
	start := time.Now()
	r := testexec.Run(t, bin, map[string]string{"HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "NO_PROXY": ""}, "", "doctor", "--timeout", "3s")
	if el := time.Since(start); el > 30*time.Second { // bound for a loaded machine; the checks run in parallel under 3s each
		t.Errorf("doctor took %v", el)
	}
	if r.Code != cli.ExitFailure {
		t.Errorf("exit %d, want 1\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = l
		}
	}
	for _, name := range []string{"brave", "google", "tidal", "model", "embeddings", "postgres", "weaviate", "redis", "traces"} {
		if !strings.Contains(lines[name], "not configured") {
			t.Errorf("%s: %q, want not configured", name, lines[name])
		}
	}
	for _, name := range []string{"ckan", "lrclib", "reccobeats"} {
		if !strings.Contains(lines[name], "failing") || !strings.Contains(lines[name], "unreachable") {
			t.Errorf("%s: %q, want failing: unreachable", name, lines[name])
		}
	}
	if !strings.Contains(lines["ckan"], "https://data.gov.il/api/3") || !strings.Contains(lines["lrclib"], "https://lrclib.net") {
		t.Errorf("the fixes should name the default addresses:\n%s", r.Stdout)
	}
}

// TestDoctorReportsStoreAndIndex: the doctor names the store and counts the
// track index by source, without creating a store that is not there yet.
func TestDoctorReportsStoreAndIndex(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "toolport.db")
	vars := keyless(closedURL(t))
	vars["TOOLPORT_DATABASE_URL"] = dbPath
	results := func() map[string]doctor.Result {
		t.Helper()
		_, out, _ := runEnv(t, vars, "", false, "doctor", "--json", "--timeout", "2s")
		var rep doctor.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		got := map[string]doctor.Result{}
		for _, r := range rep.Results {
			got[r.Name] = r
		}
		return got
	}
	got := results()
	if r := got["store"]; r.Status != doctor.OK || !strings.Contains(r.Detail, "not created yet") || r.Endpoint != dbPath {
		t.Errorf("store before any command: %+v", r)
	}
	if r := got["index"]; r.Status != doctor.OK || !strings.HasPrefix(r.Detail, "empty: ") || !strings.Contains(r.Detail, "toolport index add --demo") {
		t.Errorf("index before any command: %+v", r)
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the doctor created the store (%v)", err)
	}
	// One demo track (its ISRC is the demo set's) and one of the user's.
	tracks := filepath.Join(dir, "tracks.jsonl")
	if err := os.WriteFile(tracks, []byte(`{"isrc":"QZMCP2300001","title":"MusicCaps clip","artist":"MusicCaps","interpretation":"a sad ballad"}`+"\n"+
		`{"isrc":"USRC17607839","title":"Own song","artist":"Someone","interpretation":"a happy song"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runEnv(t, vars, "", false, "index", "add", "--quiet", tracks); code != cli.ExitOK {
		t.Fatalf("index add: %d %s %s", code, out, errOut)
	}
	got = results()
	if r := got["store"]; r.Status != doctor.OK || r.Detail != "sqlite answers" {
		t.Errorf("store: %+v", r)
	}
	if r := got["index"]; r.Status != doctor.OK || !strings.HasPrefix(r.Detail, "2 tracks: 1 MusicCaps demo tracks and 1 of your own; embedded by ") {
		t.Errorf("index: %+v", r)
	}
}
