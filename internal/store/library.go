package store

import "time"

// Track is a track in the user's library. A track needs a Tidal id or an ISRC
// (files imported from elsewhere may only have the ISRC).
type Track struct {
	TidalID    string  `json:"tidalId,omitempty"`
	ISRC       string  `json:"isrc,omitempty"`
	Title      string  `json:"title"`
	Artist     string  `json:"artist"`
	Album      string  `json:"album,omitempty"`
	AlbumID    string  `json:"albumId,omitempty"`
	Duration   float64 `json:"duration,omitempty"` // seconds
	ArtworkURL string  `json:"artworkUrl,omitempty"`
	// AddedAt is set by the store when zero.
	AddedAt time.Time `json:"addedAt"`
}

// Album is an album in the user's library, keyed by its Tidal id.
type Album struct {
	TidalID     string `json:"tidalId"`
	Title       string `json:"title"`
	Artist      string `json:"artist"`
	ReleaseDate string `json:"releaseDate,omitempty"` // as Tidal gives it, usually YYYY-MM-DD
	ArtworkURL  string `json:"artworkUrl,omitempty"`
	TrackCount  int    `json:"trackCount"`
	// AddedAt is set by the store when zero.
	AddedAt time.Time `json:"addedAt"`
}

// ListOptions pages and filters a listing.
type ListOptions struct {
	// Query keeps items whose title, artist or album contains it
	// (case-insensitive for ASCII on SQLite, for all scripts on PostgreSQL).
	Query string
	// Limit is the page size: DefaultLimit when ≤ 0, at most MaxLimit.
	Limit int
	// Offset skips that many items.
	Offset int
}

// Page sizes for listings.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Bounds returns the page size and offset to use: Limit clamped to
// 1..MaxLimit (DefaultLimit when not set) and Offset no less than 0.
func (o ListOptions) Bounds() (limit, offset int) {
	limit, offset = o.Limit, o.Offset
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	return limit, max(offset, 0)
}

// TrackPage is one page of library tracks, newest first.
type TrackPage struct {
	Tracks []Track `json:"tracks"`
	Total  int     `json:"total"` // matching tracks across all pages
}

// InLibrary says which of the looked-up tracks are in the library.
type InLibrary struct {
	ISRCs    map[string]bool // ISRCs of library tracks, among those asked
	TidalIDs map[string]bool // Tidal track ids of library tracks, among those asked
}

// Track reports whether a track is in the library, by its Tidal id or its
// ISRC (either may be empty).
func (in InLibrary) Track(isrc, tidalID string) bool {
	return (isrc != "" && in.ISRCs[isrc]) || (tidalID != "" && in.TidalIDs[tidalID])
}

// AlbumPage is one page of library albums, newest first.
type AlbumPage struct {
	Albums []Album `json:"albums"`
	Total  int     `json:"total"` // matching albums across all pages
}
