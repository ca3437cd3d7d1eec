package cli_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/tooltest"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestTidalLoginSaveAndSync logs in through the loopback redirect (a forged
// redirect first, which is refused), then saves a suggested playlist to
// TIDAL and syncs the favourites, all against tooltest's TIDAL user fake.
func TestTidalLoginSaveAndSync(t *testing.T) {
	f := tooltest.NewTIDALUser(t, "cli-app")
	dir := t.TempDir()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	env := map[string]string{
		"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db"), "TIDAL_CLIENT_ID": "cli-app",
		"TIDAL_API_BASE_URL": f.Srv.URL, "TIDAL_AUTH_URL": f.Srv.URL, "TIDAL_REDIRECT_URI": redirect,
		"TIDAL_TOKEN_FILE": filepath.Join(dir, "conf", "tidal-login.json"),
	}

	cfg, err := config.New(func(k string) string { return env[k] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb testexec.Buffer
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
	exit := make(chan int, 1)
	go func() { exit <- cli.Run(context.Background(), e, []string{"tidal", "login", "--timeout", "20s"}) }()

	re := regexp.MustCompile(`https://login\.tidal\.com/authorize\?\S+`)
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a hang guard, not a timing
	defer cancel()
	printed, err := errb.Await(wctx, re.MatchString)
	if err != nil {
		t.Fatalf("no login address printed: %s", printed)
	}
	authURL := re.FindString(printed)
	q := f.Authorize(t, authURL)
	get := func(q url.Values) (int, string) {
		res, err := http.Get(redirect + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(url.Values{"code": q["code"], "state": {"forged"}}); code != 400 {
		t.Errorf("forged redirect: %d %s", code, body)
	}
	if code, body := get(q); code != 200 || !strings.Contains(body, "Logged in") {
		t.Errorf("redirect: %d %s", code, body)
	}
	if code := <-exit; code != cli.ExitOK {
		t.Fatalf("login exit %d: %s", code, errb.String())
	}
	st, err := os.Stat(env["TIDAL_TOKEN_FILE"])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("login file: %v %v", st, err)
	}
	if !strings.Contains(out.String(), "Logged in to TIDAL as user 192837465") || strings.Contains(out.String()+errb.String(), "user-access-") {
		t.Errorf("output %q %q", out.String(), errb.String())
	}

	code, stdout, stderr := runMusic(t, env, "", "tidal", "status")
	if code != cli.ExitOK || !strings.Contains(stdout, "user 192837465") || strings.Contains(stdout, "user-access-") {
		t.Errorf("status: %d %s %s", code, stdout, stderr)
	}

	// A suggested playlist, saved to TIDAL.
	code, stdout, stderr = runMusic(t, env, "", "call", "suggestPlaylist",
		`{"title":"Dossier","tracks":[{"isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","reasoning":"opener"}]}`)
	if code != cli.ExitOK {
		t.Fatalf("suggest: %d %s %s", code, stdout, stderr)
	}
	id := regexp.MustCompile(`"playlistId":"([^"]+)"`).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("no playlistId in %s", stdout)
	}
	code, stdout, stderr = runMusic(t, env, "", "call", "savePlaylistToTidal", `{"playlistId":"`+id[1]+`"}`)
	if code != cli.ExitOK || !strings.Contains(stdout, `"added":1`) || strings.Contains(stdout, "user-access-") {
		t.Errorf("save: %d %s %s", code, stdout, stderr)
	}
	if ps := f.Playlists(); len(ps) != 1 || ps[0].Name != "Dossier" || len(ps[0].Items) != 1 {
		t.Errorf("TIDAL playlists %+v", ps)
	}

	f.SetFavorites([]string{"396698919", "396698920", "396698921"}, []string{tooltest.TIDALAlbumID}, 2)
	code, stdout, stderr = runMusic(t, env, "", "library", "sync")
	if code != cli.ExitOK || !strings.Contains(stdout, "3 favourite tracks: 3 added") || !strings.Contains(stdout, "1 favourite albums: 1 added") {
		t.Errorf("sync: %d %s %s", code, stdout, stderr)
	}
}

func TestTidalLoginWithoutApp(t *testing.T) {
	code, _, stderr := runMusic(t, map[string]string{"HOME": t.TempDir()}, "", "tidal", "login")
	if code != cli.ExitFailure || !strings.Contains(stderr, "TIDAL_CLIENT_ID") {
		t.Errorf("%d %s", code, stderr)
	}
	code, _, stderr = runMusic(t, map[string]string{"HOME": t.TempDir()}, "", "library", "sync")
	if code != cli.ExitFailure || !strings.Contains(stderr, "tidal login") {
		t.Errorf("sync without login: %d %s", code, stderr)
	}
}
