package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
)

func TestLibraryTracks(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)
		tracks := []store.Track{
			{TidalID: "1001", ISRC: "USRC17607839", Title: "Someone Like You", Artist: "Adele", Album: "21",
				AlbumID: "500", Duration: 285, ArtworkURL: "https://img/1.jpg", AddedAt: t0},
			{TidalID: "1002", ISRC: "ILA123456789", Title: "שיר לשלום 🕊️", Artist: "להקת הנח\"ל", Album: "Hebrew", AddedAt: t0.Add(time.Second)},
			{ISRC: "GBAYE0000001", Title: "100% Pure_Love", Artist: "Crystal Waters", AddedAt: t0.Add(2 * time.Second)},
		}
		added, err := db.AddTracks(ctx, tracks)
		if err != nil || added != 3 {
			t.Fatalf("AddTracks = %d, %v; want 3", added, err)
		}

		page, err := db.ListTracks(ctx, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Track{tracks[2], tracks[1], tracks[0]} // newest first
		if page.Total != 3 || !reflect.DeepEqual(page.Tracks, want) {
			t.Errorf("ListTracks =\n%+v (total %d)\nwant\n%+v", page.Tracks, page.Total, want)
		}

		// Adding again updates metadata and keeps AddedAt; nothing is new.
		again := tracks[0]
		again.Title, again.AddedAt = "Someone Like You (Live)", time.Time{}
		added, err = db.AddTracks(ctx, []store.Track{again})
		if err != nil || added != 0 {
			t.Fatalf("AddTracks(existing) = %d, %v; want 0", added, err)
		}
		got, err := db.GetTrack(ctx, "1001")
		if err != nil || got.Title != again.Title || !got.AddedAt.Equal(t0) {
			t.Errorf("GetTrack after update = %+v, %v; want new title, AddedAt %v", got, err, t0)
		}

		// An ISRC-only track whose ISRC is present changes nothing; a
		// Tidal-identified one replaces an ISRC-only entry and keeps its date.
		added, err = db.AddTracks(ctx, []store.Track{{ISRC: "USRC17607839", Title: "dup"}, {TidalID: "1003", ISRC: "GBAYE0000001", Title: "100% Pure Love"}})
		if err != nil || added != 0 {
			t.Fatalf("AddTracks(merge) = %d, %v; want 0", added, err)
		}
		got, err = db.GetTrack(ctx, "1003")
		if err != nil || !got.AddedAt.Equal(t0.Add(2*time.Second)) {
			t.Errorf("replaced placeholder = %+v, %v; want AddedAt of the placeholder", got, err)
		}
		if page, _ := db.ListTracks(ctx, store.ListOptions{}); page.Total != 3 {
			t.Errorf("after merges the library has %d tracks, want 3", page.Total)
		}

		// Filter and paging.
		filters := []struct {
			query string
			want  []string // tidal ids, newest first
		}{
			{"adele", []string{"1001"}},
			{"ADELE", []string{"1001"}},
			{"לשלום", []string{"1002"}},
			{"🕊", []string{"1002"}},
			{"100%", []string{"1003"}},
			{"%", []string{"1003"}}, // a literal percent sign, not a wildcard
			{"_", nil},              // likewise: no title has an underscore any more
			{"hebrew", []string{"1002"}},
			{"nothing like it", nil},
		}
		for _, f := range filters {
			page, err := db.ListTracks(ctx, store.ListOptions{Query: f.query})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tr := range page.Tracks {
				ids = append(ids, tr.TidalID)
			}
			if !reflect.DeepEqual(ids, f.want) || page.Total != len(f.want) {
				t.Errorf("ListTracks(%q) = %v (total %d), want %v", f.query, ids, page.Total, f.want)
			}
		}
		p1, _ := db.ListTracks(ctx, store.ListOptions{Limit: 2})
		p2, _ := db.ListTracks(ctx, store.ListOptions{Limit: 2, Offset: 2})
		if len(p1.Tracks) != 2 || len(p2.Tracks) != 1 || p1.Total != 3 || p2.Tracks[0].TidalID != "1001" {
			t.Errorf("paging: %+v then %+v", p1, p2)
		}

		// Status lookups.
		in, err := db.LibraryStatus(ctx, []string{"USRC17607839", "GBAYE0000001", "NOTINLIBRARY", ""}, []string{"1002", "9999"})
		if err != nil {
			t.Fatal(err)
		}
		wantIn := store.InLibrary{
			ISRCs:    map[string]bool{"USRC17607839": true, "GBAYE0000001": true},
			TidalIDs: map[string]bool{"1002": true},
		}
		if !reflect.DeepEqual(in, wantIn) {
			t.Errorf("LibraryStatus = %+v, want %+v", in, wantIn)
		}
		if !in.Track("", "1002") || !in.Track("USRC17607839", "") || in.Track("NOTINLIBRARY", "9999") || in.Track("", "") {
			t.Errorf("InLibrary.Track answers wrong: %+v", in)
		}

		// Remove by Tidal id and by ISRC.
		n, err := db.RemoveTracks(ctx, []string{"1001", "ILA123456789", "missing"})
		if err != nil || n != 2 {
			t.Errorf("RemoveTracks = %d, %v; want 2", n, err)
		}
		if _, err := db.GetTrack(ctx, "1001"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTrack(removed) error = %v, want ErrNotFound", err)
		}
		if page, _ := db.ListTracks(ctx, store.ListOptions{}); page.Total != 1 || page.Tracks[0].TidalID != "1003" {
			t.Errorf("after removal: %+v", page)
		}
	})
}

func TestLibraryRejectsBadTracks(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		bad := [][]store.Track{
			{{TidalID: "1", Title: "ok"}, {Title: "no ids"}},
			{{TidalID: "1", Title: "nul\x00byte"}},
			{{TidalID: "1", Title: "bad utf-8 \xff"}},
		}
		for _, batch := range bad {
			if _, err := db.AddTracks(ctx, batch); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("AddTracks(%+v) error = %v, want ErrInvalid", batch, err)
			}
		}
		if page, _ := db.ListTracks(ctx, store.ListOptions{}); page.Total != 0 {
			t.Errorf("a rejected batch left %d tracks", page.Total)
		}
	})
}

func TestLibraryImportManyInOneTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		tracks := make([]store.Track, 1200) // more than one lookup chunk
		ids := make([]string, len(tracks))
		for i := range tracks {
			ids[i] = fmt.Sprint(100000 + i)
			tracks[i] = store.Track{TidalID: ids[i], ISRC: fmt.Sprintf("QZTST%07d", i), Title: fmt.Sprint("Track ", i), Artist: "A"}
		}
		added, err := db.AddTracks(ctx, tracks)
		if err != nil || added != len(tracks) {
			t.Fatalf("AddTracks = %d, %v", added, err)
		}
		in, err := db.LibraryStatus(ctx, nil, ids)
		if err != nil || len(in.TidalIDs) != len(ids) {
			t.Fatalf("LibraryStatus found %d of %d (%v)", len(in.TidalIDs), len(ids), err)
		}

	})
}

func TestLibraryAlbums(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		t0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
		albums := []store.Album{
			{TidalID: "500", Title: "21", Artist: "Adele", ReleaseDate: "2011-01-24", ArtworkURL: "https://img/a.jpg", TrackCount: 11, AddedAt: t0},
			{TidalID: "501", Title: "אלבום", Artist: "אמן", TrackCount: 9, AddedAt: t0.Add(time.Minute)},
		}
		added, err := db.AddAlbums(ctx, albums)
		if err != nil || added != 2 {
			t.Fatalf("AddAlbums = %d, %v", added, err)
		}
		if added, err := db.AddAlbums(ctx, albums[:1]); err != nil || added != 0 {
			t.Errorf("AddAlbums(again) = %d, %v; want 0", added, err)
		}
		page, err := db.ListAlbums(ctx, store.ListOptions{})
		if err != nil || page.Total != 2 || !reflect.DeepEqual(page.Albums, []store.Album{albums[1], albums[0]}) {
			t.Errorf("ListAlbums = %+v, %v", page, err)
		}
		if page, _ := db.ListAlbums(ctx, store.ListOptions{Query: "אמן"}); page.Total != 1 || page.Albums[0].TidalID != "501" {
			t.Errorf("ListAlbums(query) = %+v", page)
		}
		in, err := db.AlbumsInLibrary(ctx, []string{"500", "999"})
		if err != nil || !reflect.DeepEqual(in, map[string]bool{"500": true}) {
			t.Errorf("AlbumsInLibrary = %v, %v", in, err)
		}
		if _, err := db.AddAlbums(ctx, []store.Album{{Title: "no id"}}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddAlbums(no id) error = %v, want ErrInvalid", err)
		}
		if n, err := db.RemoveAlbums(ctx, []string{"500", "500", "999"}); err != nil || n != 1 {
			t.Errorf("RemoveAlbums = %d, %v; want 1", n, err)
		}
	})
}
