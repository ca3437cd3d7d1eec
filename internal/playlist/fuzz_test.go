package playlist

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
)

// FuzzM3U8 feeds M3U8 and JSON export text from the model (titles, artists,
// albums, ids): every M3U8 line must stay a directive or a track address,
// one #EXTINF and one address per item, and the JSON must parse back.
func FuzzM3U8(f *testing.F) {
	f.Add("Rainy day", "Hunter", "Björk", "Homogenic", "251380837", 255.4)
	f.Add("a\nb", "x\r\n#EXTINF:1,evil\nhttp://evil", "", "\u2028", "1", -3.0)
	f.Fuzz(func(t *testing.T, title, track, artist, album, id string, dur float64) {
		p := store.Playlist{ID: "p", Title: title, Items: []store.PlaylistItem{
			{TidalID: id, Title: track, Artist: artist, Album: album, Duration: dur},
			{TidalID: "2", Title: "second"},
		}}
		out := string(M3U8(p))
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != "#EXTM3U" || !strings.HasPrefix(lines[1], "#PLAYLIST:") {
			t.Fatalf("header: %q", out)
		}
		extinf, urls := 0, 0
		for _, l := range lines[2:] {
			switch {
			case strings.HasPrefix(l, "#EXTINF:"):
				extinf++
			case strings.HasPrefix(l, "#EXTALB:"):
			case strings.HasPrefix(l, "https://tidal.com/browse/track/"):
				urls++
			default:
				t.Fatalf("stray line %q in\n%s", l, out)
			}
		}
		if extinf != 2 || urls != 2 {
			t.Fatalf("%d #EXTINF and %d addresses for 2 items:\n%s", extinf, urls, out)
		}
		if utf8.ValidString(title+track+artist+album+id) && !math.IsNaN(dur) && !math.IsInf(dur, 0) { // the store refuses the others
			b, err := JSON(p)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("JSON export does not parse: %v", err)
			}
		}
	})
}
