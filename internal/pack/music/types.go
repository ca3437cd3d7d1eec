package music

import (
	"math"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tidal"
)

// AudioFeatures are a track's audio descriptors (acousticness … valence);
// nil fields are unknown.
type AudioFeatures = store.AudioFeatures

// TrackResult is a TIDAL track as the tools return it: the tool contract's
// TrackResult, with its library and index flags.
type TrackResult struct {
	TidalID     string  `json:"tidalId" jsonschema:"Tidal track id"`
	ISRC        string  `json:"isrc" jsonschema:"ISO 3901 ISRC; empty when Tidal has none for the track"`
	Title       string  `json:"title"`
	Artist      string  `json:"artist"`
	Album       string  `json:"album"`
	ArtworkURL  string  `json:"artworkUrl,omitempty" jsonschema:"Album cover URL"`
	Duration    float64 `json:"duration,omitempty" jsonschema:"Duration in seconds"`
	Explicit    bool    `json:"explicit,omitempty" jsonschema:"Explicit content"`
	Popularity  float64 `json:"popularity,omitempty" jsonschema:"Tidal popularity, 0 to 1"`
	TrackNumber int     `json:"trackNumber,omitempty" jsonschema:"Position on the album (album tracks only)"`
	InLibrary   bool    `json:"inLibrary" jsonschema:"The track is in the user's library (by Tidal id or ISRC)"`
	IsIndexed   bool    `json:"isIndexed" jsonschema:"The track is in the semantic index (by ISRC)"`
}

// IndexedTrackResult is a track from the semantic index with its full
// metadata: the data model's IndexedTrackResult.
type IndexedTrackResult struct {
	ISRC           string         `json:"isrc"`
	Title          string         `json:"title"`
	Artist         string         `json:"artist"`
	Album          string         `json:"album"`
	ArtworkURL     string         `json:"artworkUrl,omitempty"`
	Duration       float64        `json:"duration,omitempty" jsonschema:"Duration in seconds"`
	InLibrary      bool           `json:"inLibrary" jsonschema:"The track is in the user's library"`
	IsIndexed      bool           `json:"isIndexed" jsonschema:"The track is in the semantic index (always true here)"`
	Score          *float64       `json:"score,omitempty" jsonschema:"Relevance score, 0 to 1 (semantic search only)"`
	Lyrics         string         `json:"lyrics,omitempty"`
	Interpretation string         `json:"interpretation,omitempty" jsonschema:"What the track is about and how it sounds"`
	AudioFeatures  *AudioFeatures `json:"audioFeatures,omitempty"`
	Matched        string         `json:"matched,omitempty" jsonschema:"Why the track matched: the sentence of its interpretation (or line of its lyrics) closest to the query (semantic search only)"`
	// MatchedFeatures are the audio features a mood or energy word of the
	// query was weighed against.
	MatchedFeatures string `json:"matchedFeatures,omitempty" jsonschema:"The audio features the query's mood or energy words were weighed against, e.g. 'valence 0.84, energy 0.91' (semantic search only)"`
}

// AlbumResult is a TIDAL album with its library flag.
type AlbumResult struct {
	TidalID     string `json:"tidalId" jsonschema:"Tidal album id (use it with albumTracks)"`
	Title       string `json:"title"`
	Artist      string `json:"artist"`
	ArtworkURL  string `json:"artworkUrl,omitempty" jsonschema:"Album cover URL"`
	ReleaseDate string `json:"releaseDate,omitempty" jsonschema:"Release date, YYYY-MM-DD"`
	TrackCount  int    `json:"trackCount" jsonschema:"Number of tracks on the album"`
	InLibrary   bool   `json:"inLibrary" jsonschema:"The album is in the user's library"`
}

// seconds turns a TIDAL duration into whole seconds.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()) }

func trackResult(t tidal.Track) TrackResult {
	r := TrackResult{
		TidalID: t.ID, ISRC: t.ISRC, Title: t.Title, Artist: t.ArtistName(),
		ArtworkURL: t.ArtworkURL(), Duration: seconds(t.Duration), Explicit: t.Explicit,
		Popularity: t.Popularity, TrackNumber: t.TrackNumber,
	}
	if t.Version != "" {
		r.Title += " (" + t.Version + ")"
	}
	if t.Album != nil {
		r.Album = t.Album.Title
	}
	return r
}

func albumResult(a tidal.Album) AlbumResult {
	return AlbumResult{
		TidalID: a.ID, Title: a.Title, Artist: a.ArtistName(), ArtworkURL: a.ArtworkURL,
		ReleaseDate: a.ReleaseDate, TrackCount: a.NumberOfItems,
	}
}

func indexedResult(r store.IndexRecord) IndexedTrackResult {
	return IndexedTrackResult{
		ISRC: r.ISRC, Title: r.Title, Artist: r.Artist, Album: r.Album, ArtworkURL: r.ArtworkURL,
		Duration: r.Duration, IsIndexed: true, Lyrics: r.Lyrics, Interpretation: r.Interpretation,
		AudioFeatures: r.AudioFeatures,
	}
}
