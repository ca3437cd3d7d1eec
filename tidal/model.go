package tidal

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Artist is a TIDAL artist as it appears on tracks and albums.
type Artist struct {
	ID         string
	Name       string
	Popularity float64 // 0..1
}

// Artwork is one rendition of a cover image.
type Artwork struct {
	URL    string
	Width  int
	Height int
}

// AlbumRef is the album a track belongs to, as far as the response told.
type AlbumRef struct {
	ID         string
	Title      string
	ArtworkURL string
}

// Track is a TIDAL track. Fields the response did not carry are zero: for
// example Artists is empty when the request did not include artists.
type Track struct {
	ID         string
	Title      string
	Version    string // e.g. "Remastered"; "" when none
	ISRC       string
	Duration   time.Duration // 0 when absent or unreadable
	Explicit   bool
	Popularity float64 // 0..1
	MediaTags  []string
	BPM        float64
	Key        string // e.g. "C"; "UNKNOWN" upstream when not analysed
	KeyScale   string // e.g. "MAJOR"

	// TrackNumber and VolumeNumber are set for album items.
	TrackNumber  int
	VolumeNumber int

	Artists []Artist
	Album   *AlbumRef // nil when the response had no album for the track
}

// ArtistName joins the track's artist names with ", ", the way a listing shows
// them.
func (t Track) ArtistName() string { return joinArtists(t.Artists) }

// ArtworkURL is the cover of the track's album, or "".
func (t Track) ArtworkURL() string {
	if t.Album == nil {
		return ""
	}
	return t.Album.ArtworkURL
}

// Album is a TIDAL album.
type Album struct {
	ID              string
	Title           string
	Type            string // ALBUM, EP, SINGLE
	Version         string
	BarcodeID       string
	ReleaseDate     string // YYYY-MM-DD as TIDAL gives it
	NumberOfItems   int
	NumberOfVolumes int
	Duration        time.Duration
	Explicit        bool
	Popularity      float64
	MediaTags       []string
	Artists         []Artist

	// ArtworkURL is the cover rendition closest to preferredArtworkSize;
	// Artwork lists every rendition, largest first as TIDAL sends them.
	ArtworkURL string
	Artwork    []Artwork
}

// ArtistName joins the album's artist names with ", ".
func (a Album) ArtistName() string { return joinArtists(a.Artists) }

func joinArtists(as []Artist) string {
	names := make([]string, 0, len(as))
	for _, a := range as {
		if a.Name != "" {
			names = append(names, a.Name)
		}
	}
	return strings.Join(names, ", ")
}

// preferredArtworkSize is the cover width picked for ArtworkURL: large enough
// for a chat card, small enough to load fast. TIDAL serves 1280 down to 80.
const preferredArtworkSize = 640

type trackAttributes struct {
	Title      string   `json:"title"`
	Version    *string  `json:"version"`
	ISRC       string   `json:"isrc"`
	Duration   string   `json:"duration"`
	Explicit   bool     `json:"explicit"`
	Popularity float64  `json:"popularity"`
	MediaTags  []string `json:"mediaTags"`
	BPM        float64  `json:"bpm"`
	Key        string   `json:"key"`
	KeyScale   string   `json:"keyScale"`
}

type albumAttributes struct {
	Title           string   `json:"title"`
	Type            string   `json:"type"`
	AlbumType       string   `json:"albumType"`
	Version         *string  `json:"version"`
	BarcodeID       string   `json:"barcodeId"`
	ReleaseDate     string   `json:"releaseDate"`
	NumberOfItems   int      `json:"numberOfItems"`
	NumberOfVolumes int      `json:"numberOfVolumes"`
	Duration        string   `json:"duration"`
	Explicit        bool     `json:"explicit"`
	Popularity      float64  `json:"popularity"`
	MediaTags       []string `json:"mediaTags"`
}

type artistAttributes struct {
	Name       string  `json:"name"`
	Popularity float64 `json:"popularity"`
}

type artworkAttributes struct {
	Files []struct {
		Href string `json:"href"`
		Meta struct {
			Width  int `json:"width"`
			Height int `json:"height"`
		} `json:"meta"`
	} `json:"files"`
}

// attributes decodes a resource's attributes; absent attributes leave v zero.
func attributes(r *resource, v any) error {
	if len(r.Attributes) == 0 || string(r.Attributes) == "null" {
		return nil
	}
	if err := json.Unmarshal(r.Attributes, v); err != nil {
		return fmt.Errorf("%s %s: attributes: %w", r.Type, r.ID, err)
	}
	return nil
}

// durationOrZero is lenient on purpose: one odd duration should not cost the
// caller a whole search result.
func durationOrZero(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

func (idx index) artists(r *resource) ([]Artist, error) {
	rel := idx.related(r, "artists")
	out := make([]Artist, 0, len(rel))
	for _, a := range rel {
		var at artistAttributes
		if err := attributes(a, &at); err != nil {
			return nil, err
		}
		out = append(out, Artist{ID: a.ID, Name: at.Name, Popularity: at.Popularity})
	}
	return out, nil
}

// artwork resolves an album's coverArt to its renditions.
func (idx index) artwork(r *resource) ([]Artwork, error) {
	var out []Artwork
	for _, aw := range idx.related(r, "coverArt") {
		var at artworkAttributes
		if err := attributes(aw, &at); err != nil {
			return nil, err
		}
		for _, f := range at.Files {
			if f.Href != "" {
				out = append(out, Artwork{URL: f.Href, Width: f.Meta.Width, Height: f.Meta.Height})
			}
		}
		if len(out) > 0 {
			break // the first artwork with files is the cover
		}
	}
	return out, nil
}

// pickArtwork returns the smallest rendition at least preferredArtworkSize
// wide, or the largest one when all are smaller.
func pickArtwork(files []Artwork) string {
	best := -1
	for i, f := range files {
		if best < 0 {
			best = i
			continue
		}
		b := files[best]
		switch {
		case f.Width >= preferredArtworkSize && (b.Width < preferredArtworkSize || f.Width < b.Width):
			best = i
		case b.Width < preferredArtworkSize && f.Width > b.Width:
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return files[best].URL
}

func (idx index) album(r *resource) (Album, error) {
	var at albumAttributes
	if err := attributes(r, &at); err != nil {
		return Album{}, err
	}
	artists, err := idx.artists(r)
	if err != nil {
		return Album{}, err
	}
	art, err := idx.artwork(r)
	if err != nil {
		return Album{}, err
	}
	typ := at.AlbumType
	if typ == "" {
		typ = at.Type
	}
	a := Album{
		ID: r.ID, Title: at.Title, Type: typ, BarcodeID: at.BarcodeID,
		ReleaseDate: at.ReleaseDate, NumberOfItems: at.NumberOfItems, NumberOfVolumes: at.NumberOfVolumes,
		Duration: durationOrZero(at.Duration), Explicit: at.Explicit, Popularity: at.Popularity,
		MediaTags: at.MediaTags, Artists: artists, Artwork: art, ArtworkURL: pickArtwork(art),
	}
	if at.Version != nil {
		a.Version = *at.Version
	}
	return a, nil
}

func (idx index) track(r *resource) (Track, error) {
	var at trackAttributes
	if err := attributes(r, &at); err != nil {
		return Track{}, err
	}
	artists, err := idx.artists(r)
	if err != nil {
		return Track{}, err
	}
	t := Track{
		ID: r.ID, Title: at.Title, ISRC: at.ISRC, Duration: durationOrZero(at.Duration),
		Explicit: at.Explicit, Popularity: at.Popularity, MediaTags: at.MediaTags,
		BPM: at.BPM, Key: at.Key, KeyScale: at.KeyScale, Artists: artists,
	}
	if at.Version != nil {
		t.Version = *at.Version
	}
	if albums := idx.related(r, "albums"); len(albums) > 0 {
		al, err := idx.album(albums[0])
		if err != nil {
			return Track{}, err
		}
		t.Album = &AlbumRef{ID: al.ID, Title: al.Title, ArtworkURL: al.ArtworkURL}
	}
	return t, nil
}

// linkedTracks resolves a list of track identifiers (search hits, album
// items) in order. An identifier whose resource is not included still yields
// a Track with its ID, so that positions and counts stay right.
func (idx index) linkedTracks(ids []resource) ([]Track, error) {
	out := make([]Track, 0, len(ids))
	for i := range ids {
		id := &ids[i]
		if id.Type != "tracks" {
			continue // videos share album items
		}
		t := Track{ID: id.ID}
		if r, ok := idx[key{id.Type, id.ID}]; ok {
			var err error
			if t, err = idx.track(r); err != nil {
				return nil, err
			}
		}
		if id.Meta != nil {
			t.TrackNumber, t.VolumeNumber = id.Meta.TrackNumber, id.Meta.VolumeNumber
		}
		out = append(out, t)
	}
	return out, nil
}

func (idx index) linkedAlbums(ids []resource) ([]Album, error) {
	out := make([]Album, 0, len(ids))
	for i := range ids {
		id := &ids[i]
		if id.Type != "albums" {
			continue
		}
		a := Album{ID: id.ID}
		if r, ok := idx[key{id.Type, id.ID}]; ok {
			var err error
			if a, err = idx.album(r); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}
