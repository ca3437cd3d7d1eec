package music

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/tool"
)

func TestSuggestPlaylist(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		reg, _ := newRegistry(t, db)
		conv, err := db.CreateConversation(context.Background(), store.Conversation{Title: "mix"})
		if err != nil {
			t.Fatal(err)
		}
		args := `{"title":"Late\nnight","tracks":[
			{"isrc":"au-nmg-24-00011","title":"4M","artist":"Air Max '97","reasoning":"driving opener"},
			{"isrc":"AUNMG2400013","title":"BLADE WALKER","artist":"Air Max '97","reasoning":"cool down"},
			{"isrc":"AUNMG2400011","title":"4M again","artist":"Air Max '97","reasoning":"twice"},
			{"isrc":"GBAYE9700123","title":"Hunter","artist":"Björk","reasoning":"not on TIDAL here"},
			{"isrc":"nonsense","title":"Bad","artist":"Nobody","reasoning":"x"}]}`
		ctx := store.WithOrigin(context.Background(), store.Origin{ConversationID: conv.ID, MessageID: "msg-1", ToolCallID: "tc-1"})
		res := reg.Call(ctx, "suggestPlaylist", json.RawMessage(args))
		if !res.OK() {
			t.Fatalf("failed: %s", res.JSON)
		}
		var out struct {
			Success       bool
			Summary       string
			DurationMs    *int64
			PlaylistID    string
			Title         string
			Tracks        []PlaylistTrack
			Unresolved    []UnresolvedTrack
			TrackCount    int
			TotalDuration float64
			ExportURL     string
		}
		if err := json.Unmarshal(res.JSON, &out); err != nil {
			t.Fatal(err)
		}
		if out.Title != "Late night" || out.TrackCount != 2 || len(out.Tracks) != 2 || out.DurationMs == nil {
			t.Fatalf("output: %s", res.JSON)
		}
		first, second := out.Tracks[0], out.Tracks[1]
		if first.TidalID != "396698919" || first.Album == "" || first.ArtworkURL == "" || first.Duration != 180 ||
			first.Reasoning != "driving opener" || !first.InLibrary || !first.IsIndexed {
			t.Errorf("first track: %+v", first)
		}
		if second.TidalID != "396698921" || second.InLibrary || !second.IsIndexed || second.Duration != 193 {
			t.Errorf("second track: %+v", second)
		}
		if out.TotalDuration != 373 {
			t.Errorf("total duration %v", out.TotalDuration)
		}
		reasons := map[string]string{}
		for _, u := range out.Unresolved {
			reasons[u.Title] = u.Reason
		}
		if len(out.Unresolved) != 3 || !strings.Contains(reasons["4M again"], "earlier") ||
			!strings.Contains(reasons["Hunter"], "no track") || !strings.Contains(reasons["Bad"], "ISRC") {
			t.Errorf("unresolved: %+v", out.Unresolved)
		}
		if out.Summary != "Playlist 'Late night': 2 tracks, 6 min (3 not found on TIDAL)" {
			t.Errorf("summary %q", out.Summary)
		}
		if out.ExportURL != "/api/playlists/"+out.PlaylistID+"/export" {
			t.Errorf("export url %q", out.ExportURL)
		}

		p, err := db.GetPlaylist(context.Background(), out.PlaylistID)
		if err != nil {
			t.Fatal(err)
		}
		if p.ConversationID != conv.ID || p.MessageID != "msg-1" || p.ToolCallID != "tc-1" || len(p.Items) != 2 ||
			p.Items[1].Reasoning != "cool down" || len(p.Unresolved) != 3 || p.Description != out.Summary {
			t.Errorf("stored: %+v", p)
		}
	})
}

func TestSuggestPlaylistValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		reg, _ := newRegistry(t, db)
		many := `{"isrc":"AUNMG2400011","title":"a","artist":"b","reasoning":"c"}` + strings.Repeat(`,{"isrc":"AUNMG2400011","title":"a","artist":"b","reasoning":"c"}`, MaxPlaylistTracks)
		for name, args := range map[string]string{
			"no tracks":       `{"title":"t","tracks":[]}`,
			"too many tracks": `{"title":"t","tracks":[` + many + `]}`,
			"blank title":     `{"title":"  ","tracks":[{"isrc":"AUNMG2400011","title":"a","artist":"b","reasoning":"c"}]}`,
			"missing artist":  `{"title":"t","tracks":[{"isrc":"AUNMG2400011","title":"a","reasoning":"c"}]}`,
			"long reasoning":  `{"title":"t","tracks":[{"isrc":"AUNMG2400011","title":"a","artist":"b","reasoning":"` + strings.Repeat("x", 1001) + `"}]}`,
		} {
			res := call(t, reg, "suggestPlaylist", args, nil)
			if res.OK() || res.Err.Code != "VALIDATION" {
				t.Errorf("%s: %s", name, res.JSON)
			}
		}
		page, err := db.ListPlaylists(context.Background(), store.ListOptions{})
		if err != nil || page.Total != 0 {
			t.Errorf("a refused call stored a playlist: %+v %v", page, err)
		}
	})
}

func TestSuggestPlaylistWithoutTidal(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		svc := seed(t, db) // no TIDAL client
		out, err := svc.suggestPlaylist(context.Background(), SuggestPlaylistInput{Title: "t",
			Tracks: []SuggestedTrack{{ISRC: "AUNMG2400011", Title: "4M", Artist: "A"}}})
		if err == nil {
			t.Fatalf("resolved without TIDAL: %+v", out)
		}
	})
}

// TestSuggestPlaylistSearchFallback: a track whose ISRC is malformed or
// unknown to TIDAL is searched by "title artist" on the local TIDAL fake
// (the 20 tracks of album 396698918 by Air Max '97 for any query but
// "nothing"), and a hit is taken only when title and artist match after
// normalisation.
func TestSuggestPlaylistSearchFallback(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		reg, _ := newRegistry(t, db)
		args := `{"title":"Fallback","tracks":[
			{"isrc":"AUNMG2400013","title":"BLADE WALKER","artist":"Air Max '97","reasoning":"by ISRC"},
			{"isrc":"GBAYE9700999","title":"Caliente (feat. Somebody)","artist":"AIR MAX 97","reasoning":"unknown ISRC"},
			{"isrc":"n/a","title":"cordura","artist":"Áir Max ’97","reasoning":"malformed ISRC"},
			{"isrc":"GBAYE9700998","title":"Blade Walker","artist":"Air Max '97","reasoning":"the same track again"},
			{"isrc":"GBAYE9700997","title":"Doom","artist":"Another Artist","reasoning":"title matches, artist does not"},
			{"isrc":"GBAYE9700996","title":"nothing like it","artist":"Air Max '97","reasoning":"no hit at all"}]}`
		out := suggest(t, reg, args)
		var ids []string
		for _, tr := range out.Tracks {
			ids = append(ids, tr.TidalID+" "+tr.Reasoning)
		}
		want := []string{"396698921 by ISRC", "396698923 unknown ISRC", "396698930 malformed ISRC"}
		if strings.Join(ids, "|") != strings.Join(want, "|") {
			t.Errorf("resolved %q, want %q", ids, want)
		}
		reasons := unresolvedReasons(out)
		for reasoning, wantReason := range map[string]string{
			"the same track again":           "the same track is earlier",
			"title matches, artist does not": "no track with that title and artist",
			"no hit at all":                  "TIDAL has no track with this ISRC",
		} {
			if !strings.Contains(reasons[reasoning], wantReason) {
				t.Errorf("%s: reason %q, want it to say %q", reasoning, reasons[reasoning], wantReason)
			}
		}
		if len(out.Unresolved) != 3 {
			t.Errorf("unresolved: %+v", out.Unresolved)
		}
	})
}

// TestSuggestPlaylistSearchFailureKeepsTheRest: a fallback search that
// fails (TIDAL's 404, a refused query) leaves that track unresolved with
// why, and the playlist keeps the tracks already resolved.
func TestSuggestPlaylistSearchFailureKeepsTheRest(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		reg, _ := newRegistry(t, db)
		args := `{"title":"Partial","tracks":[
			{"isrc":"AUNMG2400013","title":"BLADE WALKER","artist":"Air Max '97","reasoning":"by ISRC"},
			{"isrc":"GBAYE9700995","title":"search-404 song","artist":"X","reasoning":"search 404"},
			{"isrc":"GBAYE9700994","title":"search-400 song","artist":"X","reasoning":"search refused"}]}`
		out := suggest(t, reg, args)
		if out.PlaylistID == "" || len(out.Tracks) != 1 || out.Tracks[0].TidalID != "396698921" {
			t.Fatalf("playlist %q, tracks %+v", out.PlaylistID, out.Tracks)
		}
		reasons := unresolvedReasons(out)
		for reasoning, want := range map[string]string{
			"search 404":     "found nothing",
			"search refused": "failed: TIDAL API: HTTP 400",
		} {
			if !strings.Contains(reasons[reasoning], want) {
				t.Errorf("%s: reason %q, want it to say %q", reasoning, reasons[reasoning], want)
			}
		}
	})
}

// suggest calls suggestPlaylist, which must succeed, and decodes its answer.
func suggest(t *testing.T, reg *tool.Registry, args string) SuggestPlaylistOutput {
	t.Helper()
	res := reg.Call(context.Background(), "suggestPlaylist", json.RawMessage(args))
	if !res.OK() {
		t.Fatalf("failed: %s", res.JSON)
	}
	var out SuggestPlaylistOutput
	if err := json.Unmarshal(res.JSON, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// unresolvedReasons maps each unresolved track's reasoning to its reason.
func unresolvedReasons(out SuggestPlaylistOutput) map[string]string {
	reasons := map[string]string{}
	for _, u := range out.Unresolved {
		reasons[u.Reasoning] = u.Reason
	}
	return reasons
}

func TestMatchKey(t *testing.T) {
	tests := []struct{ a, b string }{
		{"BLADE WALKER", "Blade Walker"},
		{"Caliente (feat. Somebody)", "CALIENTE"},
		{"Caliente feat. Somebody", "caliente"},
		{"Caliente ft. Somebody", "caliente"},
		{"Caliente [Remastered 2011]", "Caliente"},
		{"Björk", "Bjork"},
		{"Air Max '97", "AIR MAX 97"},
		{"Beyoncé", "BEYONCE"},
		{"Simon & Garfunkel", "Simon  Garfunkel"},
	}
	for _, tt := range tests {
		if ka, kb := matchKey(tt.a), matchKey(tt.b); ka != kb || ka == "" {
			t.Errorf("matchKey(%q) = %q, matchKey(%q) = %q: want equal", tt.a, ka, tt.b, kb)
		}
	}
	for _, pair := range [][2]string{{"Blade Walker", "Blade Runner"}, {"Air Max '97", "Air Max '98"}, {"Featherweight", "Feather"}} {
		if matchKey(pair[0]) == matchKey(pair[1]) {
			t.Errorf("matchKey makes %q and %q equal", pair[0], pair[1])
		}
	}
}
