package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/tooltest"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/store"
)

// runMusic runs a toolport command in process with the given environment.
func runMusic(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cfg, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
	code = cli.Run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestLibraryCommands(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db")}
	jsonl := filepath.Join(dir, "lib.jsonl")
	os.WriteFile(jsonl, []byte(`{"tidalId":"396698919","isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97"}
{"title":"no ids"}
{"type":"album","tidalId":"381265361","title":"Die With A Smile","artist":"Lady Gaga"}
`), 0o600)
	csvFile := filepath.Join(dir, "lib.csv")
	os.WriteFile(csvFile, []byte("isrc,title,artist\nUSRC17607839,Song,X\nbad,Bad,X\n"), 0o600)

	steps := []struct {
		args           []string
		code           int
		stdout, stderr string // substrings
	}{
		{[]string{"library"}, cli.ExitUsage, "", "Usage: toolport library"},
		{[]string{"library", "--help"}, cli.ExitOK, "", "toolport library import"},
		{[]string{"library", "add", "--help"}, cli.ExitOK, "", "--isrc"},
		{[]string{"library", "frobnicate"}, cli.ExitUsage, "", "unknown subcommand"},
		{[]string{"library", "add"}, cli.ExitUsage, "", "give Tidal track ids"},
		{[]string{"library", "add", "--isrc", "nope"}, cli.ExitUsage, "", "not an ISRC"},
		{[]string{"library", "import", jsonl}, cli.ExitOK, "1 tracks added, 0 updated; 1 albums added, 0 updated; 1 skipped (3 lines)", "lib.jsonl:2: a track needs a tidalId or an isrc"},
		{[]string{"library", "import", csvFile}, cli.ExitOK, "1 tracks added", "lib.csv:3: isrc"},
		{[]string{"library", "add", "--isrc", "gb-aye-97-00123", "--title", "Hunter", "--artist", "Björk"}, cli.ExitOK, "1 tracks added", ""},
		{[]string{"library", "add", "--title", "Karma Police", "--artist", "Radiohead", "12345"}, cli.ExitOK, "1 tracks added", ""},
		{[]string{"library", "list", "--limit", "2"}, cli.ExitOK, "Karma Police", "tracks 1-2 of 4"},
		{[]string{"library", "list", "--query", "björk"}, cli.ExitOK, "GBAYE9700123", ""},
		{[]string{"library", "list", "--albums"}, cli.ExitOK, "381265361", "albums 1-1 of 1"},
		{[]string{"library", "list", "--limit", "0"}, cli.ExitUsage, "", "Usage"},
		{[]string{"library", "remove", "GBAYE9700123", "12345"}, cli.ExitOK, "2 tracks removed", ""},
		{[]string{"library", "remove", "12345"}, cli.ExitFailure, "0 tracks removed", "none of the ids"},
		{[]string{"library", "remove", "--albums", "381265361"}, cli.ExitOK, "1 albums removed", ""},
		{[]string{"library", "import", filepath.Join(dir, "missing.csv")}, cli.ExitFailure, "", "no such file"},
	}
	for _, s := range steps {
		code, out, errOut := runMusic(t, env, "", s.args...)
		if code != s.code || !strings.Contains(out, s.stdout) || !strings.Contains(errOut, s.stderr) {
			t.Errorf("toolport %s: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout ∋ %q, stderr ∋ %q",
				strings.Join(s.args, " "), code, out, errOut, s.code, s.stdout, s.stderr)
		}
	}
	// --json prints lines that import reads back.
	_, out, _ := runMusic(t, env, "", "library", "list", "--json")
	var first map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil || first["title"] == nil {
		t.Errorf("list --json: %q (%v)", out, err)
	}
	if code, out, errOut := runMusic(t, env, out, "library", "import", "--format", "jsonl", "-"); code != 0 || !strings.Contains(out, "0 tracks added, 2 updated") {
		t.Errorf("re-import: %d %s %s", code, out, errOut)
	}
}

func TestIndexAddReportsBadLines(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"TOOLPORT_DATABASE_URL": "sqlite:" + filepath.Join(dir, "toolport.db")}
	file := filepath.Join(dir, "tracks.jsonl")
	os.WriteFile(file, []byte(`{"isrc":"USRC17607839","title":"One","artist":"A","interpretation":"quiet piano"}
{"isrc":"USRC1760783","title":"Short ISRC","artist":"A"}
{"isrc":"USRC17607840","title":"Two","artist":"A"}
{broken
`), 0o600)
	code, out, errOut := runMusic(t, env, "", "index", "add", file)
	if code != cli.ExitOK || !strings.Contains(out, "2 added, 0 updated, 0 unchanged, 2 skipped (4 lines)") ||
		!strings.Contains(errOut, "tracks.jsonl:2: isrc:") || !strings.Contains(errOut, "tracks.jsonl:4: not a valid JSON") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, _ = runMusic(t, env, "", "index", "status", "--json")
	var st struct {
		Total, Embedded, Dims, Stale int
		Embedder, ConfiguredEmbedder string
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Total != 2 || st.Embedded != 2 ||
		st.Dims == 0 || st.Embedder != st.ConfiguredEmbedder || st.Stale != 0 {
		t.Errorf("status: %d %s", code, out)
	}
	for _, args := range [][]string{{"index"}, {"index", "add"}, {"index", "add", "--batch", "0", file}, {"index", "drop"},
		{"index", "add", "--demo", file}} {
		if code, _, _ := runMusic(t, env, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
	if code, _, errOut := runMusic(t, env, "", "index", "add", filepath.Join(dir, "none.jsonl")); code != cli.ExitFailure || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: %d %s", code, errOut)
	}
	allBad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(allBad, []byte("{broken\n{\"isrc\":\"x\"}\n"), 0o600)
	if code, out, errOut := runMusic(t, env, "", "index", "add", allBad); code != cli.ExitFailure ||
		!strings.Contains(out, "0 added, 0 updated, 0 unchanged, 2 skipped (2 lines)") || !strings.Contains(errOut, "no line of bad.jsonl is a valid track") {
		t.Errorf("a file of bad lines: exit %d, want %d\nstdout: %s\nstderr: %s", code, cli.ExitFailure, out, errOut)
	}
}

// ---- process-level tests with the real binary

// bins holds the toolport binary the process-level tests build once;
// TestMain removes it.
var bins testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Cleanup()
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	return bins.Build(t, filepath.Join(tooltest.Root(t), "cmd", "toolport"))
}

// freshEnv is a process environment with an empty home and data dir, no
// database URL, no credentials and no embeddings endpoint: a fresh machine.
func freshEnv(t *testing.T) (env []string, home string) {
	home = t.TempDir()
	env = []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	return env, home
}

func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	cmd.Dir = t.TempDir() // the binary needs nothing from the working directory
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func TestFreshMachineIndexAndSearch(t *testing.T) {
	env, home := freshEnv(t)
	if code, out, errOut := runBinary(t, env, "list", "--pack", "music"); code != 0 || !strings.Contains(out, "semanticSearch") {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "data", "toolport")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("list created the data directory (err %v): it should not open the store", err)
	}
	code, out, errOut := runBinary(t, env, "index", "add", "--demo")
	if code != 0 || !strings.Contains(out, "musiccaps-demo: 5521 added, 0 updated, 0 unchanged, 0 skipped (5521 lines)") {
		t.Fatalf("index add: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "data", "toolport", "toolport.db")); err != nil {
		t.Errorf("database not at the default path: %v", err)
	}
	code, out, errOut = runBinary(t, env, "call", "semanticSearch", `{"query":"sad piano"}`)
	var res struct {
		Success    bool
		Summary    string
		TotalFound int
		Tracks     []struct {
			ISRC           string
			Interpretation string
			Score          float64
			IsIndexed      bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || !res.Success || res.TotalFound != 20 || len(res.Tracks) != 20 {
		t.Fatalf("call: %d %v\n%.500s\n%s", code, err, out, errOut)
	}
	if res.Summary != "Found 20 tracks matching 'sad piano'" || !res.Tracks[0].IsIndexed ||
		!strings.Contains(strings.ToLower(res.Tracks[0].Interpretation), "piano") {
		t.Errorf("first result: %q %+v", res.Summary, res.Tracks[0])
	}
	code, out, _ = runBinary(t, env, "index", "add", "--demo")
	if code != 0 || !strings.Contains(out, "0 added, 0 updated, 5521 unchanged") {
		t.Errorf("re-run: %d %s", code, out)
	}
}

var countsRE = regexp.MustCompile(`(\d+) added, (\d+) updated, (\d+) unchanged, (\d+) skipped`)

func TestIndexAddSurvivesSIGKILL(t *testing.T) {
	env, home := freshEnv(t)
	dbPath := filepath.Join(home, "index.db")
	env = append(env, "TOOLPORT_DATABASE_URL="+dbPath)
	const total, batch = 40000, 50
	var b strings.Builder
	for i := range total {
		fmt.Fprintf(&b, `{"isrc":"QZBBB%07d","title":"Track %d","artist":"Artist %d","interpretation":"a slow melancholic piano ballad with soft strings and a quiet voice, number %d"}`+"\n", i, i, i%97, i)
	}
	file := filepath.Join(home, "big.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dbPath) // migrated before the run starts
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	cmd := exec.Command(binary(t), "index", "add", "--batch", strconv.Itoa(batch), file)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var st store.IndexStatus
	awaitProcess(t, cmd, "the first batch to be committed", time.Minute, func() (bool, error) {
		st, err = db.IndexStatus(ctx)
		return st.Total > 0, err
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	st, err = db.IndexStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total >= total {
		t.Fatalf("the run finished (%d records) before it was killed; the test needs a bigger file", st.Total)
	}
	if st.Total%batch != 0 || st.Embedded != st.Total {
		t.Fatalf("after SIGKILL: %d records, %d embedded: want whole batches of %d, all embedded", st.Total, st.Embedded, batch)
	}
	killedAt := st.Total

	code, out, errOut := runBinary(t, env, "index", "add", "--batch", strconv.Itoa(batch), file)
	m := countsRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("re-run: %d\n%s\n%s", code, out, errOut)
	}
	added, _ := strconv.Atoi(m[1])
	unchanged, _ := strconv.Atoi(m[3])
	t.Logf("killed after %d of %d records; the re-run added %d", killedAt, total, added)
	if unchanged != killedAt || added+unchanged != total || m[2] != "0" || m[4] != "0" {
		t.Errorf("re-run after a kill at %d records: %s", killedAt, out)
	}
	if st, _ = db.IndexStatus(ctx); st.Total != total || st.Embedded != total {
		t.Errorf("after re-run: %+v", st)
	}
}
