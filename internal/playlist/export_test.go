package playlist

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

var sample = store.Playlist{
	ID: "p1", Title: "Rainy\nday #EXTINF:1,evil",
	Items: []store.PlaylistItem{
		{TidalID: "251380837", ISRC: "USRC17607839", Title: "Hunter", Artist: "Björk", Album: "Homogenic", Duration: 255.4, Reasoning: "cold strings"},
		{TidalID: "77", Title: "Line\r\nbreak", Artist: ""},
	},
}

func TestM3U8(t *testing.T) {
	got := string(M3U8(sample))
	want := "#EXTM3U\n" +
		"#PLAYLIST:Rainy day #EXTINF:1,evil\n" +
		"#EXTINF:255,Björk - Hunter\n#EXTALB:Homogenic\nhttps://tidal.com/browse/track/251380837\n" +
		"#EXTINF:-1,Line  break\nhttps://tidal.com/browse/track/77\n"
	if got != want {
		t.Errorf("M3U8:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "https://tidal.com/browse/track/") {
			t.Errorf("a line is neither a directive nor a track address: %q", line)
		}
	}
}

func TestJSON(t *testing.T) {
	b, err := Export(sample, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		ID              string  `json:"id"`
		DurationSeconds float64 `json:"durationSeconds"`
		Items           []struct {
			TidalID   string `json:"tidalId"`
			URL       string `json:"url"`
			Reasoning string `json:"reasoning"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if back.ID != "p1" || back.DurationSeconds != 255.4 || len(back.Items) != 2 ||
		back.Items[0].URL != "https://tidal.com/browse/track/251380837" || back.Items[0].Reasoning != "cold strings" {
		t.Errorf("JSON export: %s", b)
	}
}

func TestExportUnknownFormat(t *testing.T) {
	if _, err := Export(sample, "xspf"); err == nil {
		t.Error("xspf exported")
	}
	if ContentType("xspf") != "" || ContentType(FormatM3U8) == "" {
		t.Error("content types")
	}
}

func TestFilename(t *testing.T) {
	for title, want := range map[string]string{
		"Rainy day":          "Rainy-day.m3u8",
		"../../etc/passwd":   "etcpasswd.m3u8",
		"שירים":              "playlist.m3u8",
		"":                   "playlist.m3u8",
		"a\"b\r\nContent: x": "abContent-x.m3u8",
	} {
		if got := Filename(store.Playlist{Title: title}, FormatM3U8); got != want {
			t.Errorf("Filename(%q) = %q, want %q", title, got, want)
		}
	}
}
