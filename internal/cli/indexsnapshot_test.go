package cli_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/cli"
)

// snapshotKey returns the key of the engine snapshot the store at dbPath
// holds, "" when it holds none.
func snapshotKey(t *testing.T, dbPath string) string {
	t.Helper()
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var key string
	var size int
	err = db.QueryRow(`SELECT key, length(data) FROM index_snapshots WHERE name = 'engine'`).Scan(&key, &size)
	if err == sql.ErrNoRows {
		return ""
	}
	if err != nil || size == 0 {
		t.Fatalf("snapshot: %d bytes, %v", size, err)
	}
	return key
}

// tracksFile writes n valid tracks numbered from first, each with words of
// its own so that a search can find it.
func tracksFile(t *testing.T, dir string, first, n int) string {
	t.Helper()
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, `{"isrc":"USRC1%07d","title":"Track %d","artist":"A","interpretation":"quiet piano number %d"}`+"\n", i, i, i)
	}
	file := filepath.Join(dir, fmt.Sprintf("tracks-%d.jsonl", first))
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestIndexAddLeavesTheSnapshotToTheFirstSearch: `index add` of N tracks
// into a store of M does not build the engine of M+N (its memory would grow
// with the index): the snapshot it leaves is the old one, stale. The first
// search builds the engine from the records, answers with the new tracks
// and saves the snapshot, which the next search reads unchanged.
// `--snapshot` builds it in `index add` instead.
func TestIndexAddLeavesTheSnapshotToTheFirstSearch(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "toolport.db")
	env := map[string]string{"TOOLPORT_DATABASE_URL": dbPath}
	if code, out, errOut := runMusic(t, env, "", "index", "add", tracksFile(t, dir, 0, 40)); code != cli.ExitOK {
		t.Fatalf("index add: %d %s %s", code, out, errOut)
	}
	code, out, errOut := runMusic(t, env, "", "call", "semanticSearch", `{"query":"quiet piano number 7"}`)
	if code != cli.ExitOK || !strings.Contains(out, "USRC10000007") {
		t.Fatalf("search: %d %s %s", code, out, errOut)
	}
	built := snapshotKey(t, dbPath)
	if built == "" {
		t.Fatal("no snapshot after index add and a search")
	}

	if code, out, errOut := runMusic(t, env, "", "index", "add", tracksFile(t, dir, 1000, 5)); code != cli.ExitOK {
		t.Fatalf("index add: %d %s %s", code, out, errOut)
	}
	if got := snapshotKey(t, dbPath); got != built {
		t.Fatalf("index add rebuilt the snapshot (%q, was %q): it loaded the whole index", got, built)
	}

	code, out, errOut = runMusic(t, env, "", "call", "semanticSearch", `{"query":"quiet piano number 1003"}`)
	if code != cli.ExitOK || !strings.Contains(out, "USRC10001003") {
		t.Fatalf("first search after index add: %d %s %s", code, out, errOut)
	}
	saved := snapshotKey(t, dbPath)
	if saved == "" || saved == built {
		t.Fatalf("the first search saved no new snapshot (%q, was %q)", saved, built)
	}
	code, out, errOut = runMusic(t, env, "", "call", "semanticSearch", `{"query":"quiet piano number 1003"}`)
	if code != cli.ExitOK || !strings.Contains(out, "USRC10001003") || snapshotKey(t, dbPath) != saved {
		t.Errorf("second search: %d %s %s (snapshot %q, want %q)", code, out, errOut, snapshotKey(t, dbPath), saved)
	}

	code, out, errOut = runMusic(t, env, "", "index", "add", "--snapshot", tracksFile(t, dir, 2000, 5))
	if code != cli.ExitOK || !strings.Contains(out, "snapshot: 50 tracks, built") {
		t.Fatalf("index add --snapshot: %d %s %s", code, out, errOut)
	}
	if got := snapshotKey(t, dbPath); got == "" || got == saved {
		t.Fatalf("index add --snapshot saved no new snapshot (%q, was %q)", got, saved)
	}
}
