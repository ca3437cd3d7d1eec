package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/version"
)

// credentialsOnly is a configuration whose database is named only by the
// credentials file (no TOOLPORT_DATABASE_URL), with HOME and XDG_DATA_HOME
// pointing at an empty directory, in the configuration and in the process
// (so that a command resolving the default path from either lands there).
// It returns the file's database and the default one.
func credentialsOnly(t *testing.T) (cfg *config.Config, dbPath, defaultPath string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("TOOLPORT_DATABASE_URL", "")
	dbPath = filepath.Join(t.TempDir(), "from-credentials.db")
	creds := filepath.Join(home, "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"database":{"url":"sqlite://`+dbPath+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "TOOLPORT_CREDENTIALS": creds}
	cfg, err := config.New(func(k string) string { return env[k] }, home)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, dbPath, store.DefaultPath(func(k string) string { return env[k] }, home)
}

func openFile(t *testing.T, path string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// database.url in the credentials file is honoured like TOOLPORT_DATABASE_URL
// by every command that opens the store: one resolution, one store.
func TestCommandsUseTheCredentialsFileDatabase(t *testing.T) {
	cfg, dbPath, defaultPath := credentialsOnly(t)
	ctx := context.Background()
	runIn := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		e := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
		return cli.Run(ctx, e, args), out.String(), errb.String()
	}

	if code, _, errOut := runIn("", "library", "add", "--isrc", "AUNMG2400011", "--title", "4M", "--artist", "Air Max '97"); code != cli.ExitOK {
		t.Fatalf("library add: %d %s", code, errOut)
	}
	jsonl := `{"isrc":"GBAYE9700123","title":"Hunter","artist":"Björk","interpretation":"icy strings"}` + "\n"
	if code, _, errOut := runIn(jsonl, "index", "add", "--quiet", "-"); code != cli.ExitOK {
		t.Fatalf("index add: %d %s", code, errOut)
	}

	// serve, in process, until a conversation is created through its API.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out, errb testexec.Buffer
	done := make(chan int, 1)
	go func() {
		e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
		done <- cli.Run(sctx, e, []string{"serve", "--addr", "127.0.0.1:0"})
	}()
	var base string
	for deadline := time.After(60 * time.Second); base == ""; { // a hang guard, not a timing
		printed, changed := out.Next()
		if _, rest, ok := strings.Cut(printed, "serving on "); ok {
			base = strings.TrimSpace(rest)
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, errb.String())
		case <-deadline:
			t.Fatalf("serve did not start: %s", errb.String())
		case <-changed:
		}
	}
	resp, err := http.Post(strings.TrimSuffix(base, "/")+"/api/conversations", "application/json", strings.NewReader(`{"title":"where am I stored"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST /api/conversations: %s", resp.Status)
	}
	// The page's footer shows the build /api/info reports.
	resp, err = http.Get(strings.TrimSuffix(base, "/") + "/api/info")
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Version string }
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if want := version.Get().Short(); err != nil || info.Version != want || want == "" {
		t.Errorf("/api/info version = %q (%v), want %q", info.Version, err, want)
	}
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Errorf("serve exited %d: %s", code, errb.String())
	}

	db := openFile(t, dbPath)
	if page, err := db.ListTracks(ctx, store.ListOptions{}); err != nil || page.Total != 1 {
		t.Errorf("library add: the credentials file's database holds %+v, %v; want the track", page, err)
	}
	if st, err := db.IndexStatus(ctx); err != nil || st.Total != 1 {
		t.Errorf("index add: the credentials file's database holds %+v, %v; want the record", st, err)
	}
	if page, err := db.ListConversations(ctx, store.ListOptions{}); err != nil || page.Total != 1 {
		t.Errorf("serve: the credentials file's database holds %+v, %v; want the conversation", page, err)
	}
	if _, err := os.Stat(defaultPath); err == nil {
		t.Errorf("a database was created at the default path %s too", defaultPath)
	}
}

// A taken port is one line naming the address and --addr, exit 1.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	env := map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(t.TempDir(), "toolport.db")}
	cfg, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
	code := cli.Run(context.Background(), e, []string{"serve", "--addr", addr})
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", code, cli.ExitFailure)
	}
	var lines []string
	for l := range strings.Lines(errb.String()) {
		if !strings.Contains(l, "warning:") { // no model configured: a warning of its own
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], addr+" is already in use") || !strings.Contains(lines[0], "--addr") {
		t.Errorf("stderr %q: want one line saying %s is in use and naming --addr", errb.String(), addr)
	}
}
