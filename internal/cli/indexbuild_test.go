package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/ingest/ingesttest"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// libraryJSONL writes tracks as a library import file.
func libraryJSONL(t *testing.T, dir string, tracks []store.Track) string {
	t.Helper()
	var b strings.Builder
	for _, tr := range tracks {
		line, _ := json.Marshal(map[string]any{"isrc": tr.ISRC, "title": tr.Title, "artist": tr.Artist, "album": tr.Album, "duration": tr.Duration})
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(dir, "library.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIndexBuildCommand(t *testing.T) {
	up := ingesttest.New(t, 0)
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "Title:", Events: []servertest.Event{
		servertest.Text("A defiant, hopeful song about wanting to live.")}, InputTokens: 100, OutputTokens: 20})
	dir := t.TempDir()
	env := up.Env()
	env["TOOLPORT_DATABASE_URL"] = filepath.Join(dir, "toolport.db")
	lib := libraryJSONL(t, dir, ingesttest.Library())

	if code, _, errOut := runMusic(t, env, "", "index", "build", "--help"); code != cli.ExitOK || !strings.Contains(errOut, "-dry-run") ||
		!strings.Contains(errOut, "LRCLIB_BASE_URL") {
		t.Errorf("--help: %d %s", code, errOut)
	}
	for _, args := range [][]string{{"index", "build", "not-an-isrc"}, {"index", "build", "--workers", "0"},
		{"index", "build", "--library", lib, "QZES72300001"}} {
		if code, _, _ := runMusic(t, env, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}

	// Dry run: what would be done, no upstream call.
	code, out, errOut := runMusic(t, env, "", "index", "build", "--dry-run", "--library", lib)
	if code != cli.ExitOK || !strings.Contains(out, "dry run: 4 tracks") || !strings.Contains(out, "lyrics          would run for 4") || up.Total() != 0 {
		t.Fatalf("dry run: %d, %d upstream calls\n%s\n%s", code, up.Total(), out, errOut)
	}

	// Without a model: built, and the report says interpretations were
	// skipped. Stderr is not a terminal: progress comes as plain lines.
	code, out, errOut = runMusic(t, env, "", "index", "build", "--library", lib)
	if code != cli.ExitOK || !strings.Contains(out, "4 tracks: 4 indexed, 0 unchanged, 0 failed") ||
		!strings.Contains(out, "no lyrics: 3 (1 instrumental) · no audio features: 2") ||
		!strings.Contains(out, "interpretation: no model configured") || !strings.Contains(errOut, "interpretation step is skipped") ||
		!strings.Contains(errOut, "index build: 0/4 tracks · lyrics 0 · features 0") {
		t.Fatalf("build: %d\n%s\n%s", code, out, errOut)
	}

	// With a model (the OpenAI protocol, scripted): only interpretations run.
	for _, kv := range ms.Env("openai") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	before := up.Total()
	code, out, errOut = runMusic(t, env, "", "index", "build", "--json")
	var rep ingest.Report
	if err := json.Unmarshal([]byte(out), &rep); code != cli.ExitOK || err != nil {
		t.Fatalf("build --json: %d %v\n%s\n%s", code, err, out, errOut)
	}
	if rep.Indexed != 4 || rep.Stages[ingest.StageInterpretation].Done != 4 || rep.Tokens != (ingest.Tokens{Input: 400, Output: 80}) ||
		rep.Stages[ingest.StageLyrics].Cached != 4 || up.Total() != before {
		t.Errorf("report with a model: %+v (%d upstream calls)", rep, up.Total()-before)
	}

	// A failing upstream: exit 1, the failure and its reason reported.
	env["TOOLPORT_DATABASE_URL"] = filepath.Join(dir, "second.db")
	up.Fail(ingesttest.LRCLIBGet, ingesttest.Fault{Status: 500, Body: `{"message":"boom","name":"UnknownError","statusCode":500}`})
	code, out, _ = runMusic(t, env, "", "index", "build", "--workers", "1", "--library", lib)
	if code != cli.ExitFailure || !strings.Contains(out, "1 failed") || !strings.Contains(out, "at lyrics: lrclib: HTTP 500 UnknownError: boom") {
		t.Errorf("a failed track: %d\n%s", code, out)
	}
}

// TestIndexBuildSurvivesSIGKILL kills the real binary in the middle of a
// build against slow local upstreams, then runs it again: the second run
// calls upstreams only for the stages the first did not finish, and the
// index ends complete.
func TestIndexBuildSurvivesSIGKILL(t *testing.T) {
	const total = 40
	up := ingesttest.New(t, 40*time.Millisecond)
	env, home := freshEnv(t)
	dbPath := filepath.Join(home, "index.db")
	env = append(env, "TOOLPORT_DATABASE_URL="+dbPath, "LRCLIB_BASE_URL="+up.LRCLIB.URL, "RECCOBEATS_BASE_URL="+up.ReccoBeats.URL)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tracks []store.Track
	var isrcs []string
	for i := range total {
		tr := ingesttest.SyntheticTrack(i)
		tr.AddedAt = time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
		tracks = append(tracks, tr)
		isrcs = append(isrcs, tr.ISRC)
	}
	if _, err := db.AddTracks(ctx, tracks); err != nil {
		t.Fatal(err)
	}

	args := []string{"index", "build", "--workers", "2", "--concurrency", "2", "--rate", "0"}
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	awaitProcess(t, cmd, "the build to index 5 tracks", 30*time.Second, func() (bool, error) {
		st, err := db.IndexStatus(ctx)
		return st.Total >= 5, err
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	st, _ := db.IndexStatus(ctx)
	states, err := db.StageStates(ctx, isrcs)
	if err != nil {
		t.Fatal(err)
	}
	lyricsKept, featuresKept := 0, 0
	for _, s := range states {
		if l, ok := s[ingest.StageLyrics]; ok && l.Status != store.StageFailed {
			lyricsKept++
		}
		if f, ok := s[ingest.StageFeatures]; ok && f.Status != store.StageFailed {
			featuresKept++
		}
	}
	if st.Total >= total {
		t.Fatalf("the build finished (%d records) before the kill; the test needs slower upstreams", st.Total)
	}
	t.Logf("killed with %d tracks indexed, %d lyrics and %d features stages saved", st.Total, lyricsKept, featuresKept)
	gets, searches := up.Calls(ingesttest.LRCLIBGet), up.Calls(ingesttest.ReccoSearch)

	code, out, errOut := runBinary(t, env, append(args, "--json")...)
	var rep ingest.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("re-run: %d %v\n%s\n%s", code, err, out, errOut)
	}
	if rep.Unchanged != st.Total || rep.Indexed+rep.Unchanged != total || len(rep.Failed) != 0 {
		t.Errorf("re-run: %d unchanged (want %d), %d indexed (want %d)", rep.Unchanged, st.Total, rep.Indexed, total-st.Total)
	}
	if got, want := up.Calls(ingesttest.LRCLIBGet)-gets, total-lyricsKept; got != want {
		t.Errorf("re-run asked LRCLIB for %d tracks, want %d (the ones without saved lyrics)", got, want)
	}
	if got, want := up.Calls(ingesttest.ReccoSearch)-searches, total-featuresKept; got != want {
		t.Errorf("re-run searched ReccoBeats for %d tracks, want %d (the ones without saved features)", got, want)
	}
	if rep.Stages[ingest.StageLyrics].Cached != lyricsKept {
		t.Errorf("re-run reused %d lyrics, want %d", rep.Stages[ingest.StageLyrics].Cached, lyricsKept)
	}
	if st, _ = db.IndexStatus(ctx); st.Total != total || st.Embedded != total {
		t.Errorf("after the re-run: %+v", st)
	}
}
