package cli_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/cli"
)

// TestIndexAddSavesASnapshot: after `index add` the store holds the loaded
// index for the next process, and a search in a new process answers from
// it like one that loads the records.
func TestIndexAddSavesASnapshot(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "toolport.db")
	env := map[string]string{"TOOLPORT_DATABASE_URL": dbPath}
	file := filepath.Join(dir, "tracks.jsonl")
	os.WriteFile(file, []byte(`{"isrc":"USRC17607839","title":"One","artist":"A","interpretation":"quiet piano"}
{"isrc":"USRC17607840","title":"Two","artist":"A","interpretation":"loud brass band"}
`), 0o600)
	if code, out, errOut := runMusic(t, env, "", "index", "add", file); code != cli.ExitOK {
		t.Fatalf("index add: %d %s %s", code, out, errOut)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, size int
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(length(data)), 0) FROM index_snapshots WHERE name = 'engine'`).Scan(&n, &size); err != nil || n != 1 || size == 0 {
		t.Fatalf("snapshots after index add: %d of %d bytes, %v", n, size, err)
	}
	code, out, errOut := runMusic(t, env, "", "call", "semanticSearch", `{"query":"brass band"}`)
	if code != cli.ExitOK || !strings.Contains(out, "USRC17607840") {
		t.Errorf("search from the snapshot: %d %s %s", code, out, errOut)
	}
}
