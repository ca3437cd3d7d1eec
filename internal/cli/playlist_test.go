package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/cli"
)

// TestPlaylistCommands suggests a playlist with `toolport call`, then lists
// and exports it.
func TestPlaylistCommands(t *testing.T) {
	f := newTidalTracksServer(t)
	dir := t.TempDir()
	env := f.env(filepath.Join(dir, "toolport.db"))

	code, out, errOut := runMusic(t, env, "", "call", "suggestPlaylist", `{"title":"Dossier","tracks":[
		{"isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","reasoning":"opener"},
		{"isrc":"USRC17607839","title":"Missing","artist":"X","reasoning":"not there"}]}`)
	if code != cli.ExitOK {
		t.Fatalf("call suggestPlaylist: %d %s %s", code, out, errOut)
	}
	var res struct {
		PlaylistID string
		TrackCount int
		Unresolved []struct{ ISRC string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.PlaylistID == "" || res.TrackCount != 1 || len(res.Unresolved) != 1 {
		t.Fatalf("result %s (%v)", out, err)
	}

	steps := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"playlist"}, cli.ExitUsage, "", "Usage: toolport playlist"},
		{[]string{"playlist", "list"}, cli.ExitOK, "Dossier", "1 of 1 playlists"},
		{[]string{"playlist", "export", res.PlaylistID}, cli.ExitOK,
			"#EXTM3U\n#PLAYLIST:Dossier\n#EXTINF:180,Air Max '97 - 4M\n#EXTALB:PRODUCTION DOSSIER\nhttps://tidal.com/browse/track/396698919\n", ""},
		{[]string{"playlist", "export", res.PlaylistID, "--format", "json"}, cli.ExitOK, `"reasoning": "opener"`, ""},
		{[]string{"playlist", "export", res.PlaylistID, "--format", "pls"}, cli.ExitUsage, "", "unknown format"},
		{[]string{"playlist", "export", "nope"}, cli.ExitFailure, "", `no playlist "nope"`},
		{[]string{"playlist", "export"}, cli.ExitUsage, "", "give one playlist ID"},
	}
	for _, s := range steps {
		code, out, errOut := runMusic(t, env, "", s.args...)
		if code != s.code || !strings.Contains(out, s.stdout) || !strings.Contains(errOut, s.stderr) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout ⊇ %q, stderr ⊇ %q", s.args, code, out, errOut, s.code, s.stdout, s.stderr)
		}
	}

	file := filepath.Join(dir, "out.m3u8")
	if code, _, errOut := runMusic(t, env, "", "playlist", "export", res.PlaylistID, "--output", file); code != cli.ExitOK {
		t.Fatalf("export --output: %d %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(b), "#EXTM3U") {
		t.Errorf("exported file: %q %v", b, err)
	}
}
