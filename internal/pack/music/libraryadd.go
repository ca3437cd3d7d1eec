package music

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tidal"
)

// MaxAddIDs bounds the track ids one [Service.AddToLibrary] takes (50 TIDAL
// requests of 20).
const MaxAddIDs = 1000

// LibraryAdd says what to add to the library: tracks by Tidal id, one track
// by ISRC alone (no TrackIDs), or one album (AlbumID, no TrackIDs or ISRC).
// The metadata fields that are set (non-nil) override what TIDAL says; when
// TIDAL is not available, tracks by Tidal id need Title and Artist.
type LibraryAdd struct {
	TrackIDs []string
	AlbumID  string

	ISRC     *string
	Title    *string
	Artist   *string
	Album    *string
	Duration *float64
}

// LibraryNote is what became of one requested track id.
type LibraryNote struct {
	ID string
	// Track is what is added for the id; zero when it is not added.
	Track store.Track
	// FromTidal says the metadata came from TIDAL (what was given
	// overrides it).
	FromTidal bool
	// NotOnTidal says TIDAL was asked and has no such track: the track is
	// added with the metadata given, if any, else not at all.
	NotOnTidal bool
}

// Added reports whether the id's track was added.
func (n LibraryNote) Added() bool { return n.Track.TidalID != "" || n.Track.ISRC != "" }

// LibraryAddResult says what [Service.AddToLibrary] did.
type LibraryAddResult struct {
	// Album is the album saved for an AlbumID request; AlbumAdded says it
	// was new (false: it was there and its metadata was updated).
	Album      *store.Album
	AlbumAdded bool
	// Notes holds one entry per distinct requested track id, in order.
	Notes []LibraryNote
	// Tracks are the tracks saved; Added of them were new.
	Tracks []store.Track
	Added  int
}

// Missing reports whether some requested ids were not added.
func (r LibraryAddResult) Missing() bool {
	for _, n := range r.Notes {
		if !n.Added() {
			return true
		}
	}
	return false
}

// ErrNeedMetadata is returned (wrapped, with why TIDAL cannot be used) when
// tracks by Tidal id must be added without TIDAL and Title or Artist is
// missing: the caller should ask for them.
var ErrNeedMetadata = errors.New("give the metadata: a title and an artist are needed")

// ErrBadAdd reports a LibraryAdd that asks for nothing, or for an album and
// tracks at once, or has malformed ids.
var ErrBadAdd = errors.New("music: invalid library add")

// AddToLibrary adds tracks or an album to the library, fetching their
// metadata from TIDAL when it is configured. Duplicate ids are added once.
// A TIDAL failure is returned as is (a *tidal error), wrapped with "TIDAL".
func (s *Service) AddToLibrary(ctx context.Context, req LibraryAdd) (LibraryAddResult, error) {
	var res LibraryAddResult
	if err := req.validate(); err != nil {
		return res, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return res, err
	}
	tc, tidalErr := s.Tidal()
	useTidal := tidalErr == nil && tc != nil && tc.Configured()

	if req.AlbumID != "" {
		a := store.Album{TidalID: req.AlbumID, Title: deref(req.Title), Artist: deref(req.Artist)}
		if deref(req.Title) == "" && useTidal {
			ta, err := tc.Album(ctx, req.AlbumID)
			if err != nil {
				return res, fmt.Errorf("TIDAL: %w", err)
			}
			a = store.Album{TidalID: ta.ID, Title: ta.Title, Artist: ta.ArtistName(), ReleaseDate: ta.ReleaseDate,
				ArtworkURL: ta.ArtworkURL, TrackCount: ta.NumberOfItems}
		}
		n, err := db.AddAlbums(ctx, []store.Album{a})
		if err != nil {
			return res, err
		}
		res.Album, res.AlbumAdded = &a, n > 0
		return res, nil
	}

	given := req.override(store.Track{})
	haveMeta := req.Title != nil && *req.Title != "" && req.Artist != nil && *req.Artist != ""
	switch {
	case len(req.TrackIDs) == 0: // by ISRC alone
		t := given
		if deref(req.Title) == "" && useTidal {
			found, err := tc.TracksByISRC(ctx, []string{t.ISRC})
			if err != nil {
				return res, fmt.Errorf("TIDAL: %w", err)
			}
			if len(found) > 0 {
				t = req.override(TrackFromTidal(found[0]))
			}
		}
		res.Tracks = append(res.Tracks, t)
	case useTidal:
		ids := dedupe(req.TrackIDs)
		found, err := tc.TracksByID(ctx, ids)
		if err != nil {
			return res, fmt.Errorf("TIDAL: %w", err)
		}
		byID := make(map[string]tidal.Track, len(found))
		for _, t := range found {
			byID[t.ID] = t
		}
		for _, id := range ids {
			tt, ok := byID[id]
			note := LibraryNote{ID: id, NotOnTidal: !ok}
			if ok {
				note.Track, note.FromTidal = req.override(TrackFromTidal(tt)), true
			} else if haveMeta {
				note.Track = given
				note.Track.TidalID = id
			}
			res.Notes = append(res.Notes, note)
			if note.Added() {
				res.Tracks = append(res.Tracks, note.Track)
			}
		}
	default:
		if !haveMeta {
			why := "TIDAL is not configured (set TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET, or tidal.client_id and\n" +
				"tidal.client_secret in the credentials file, to fetch track metadata from TIDAL)"
			if tidalErr != nil {
				why = fmt.Sprintf("TIDAL cannot be used (%v)", tidalErr)
			}
			return res, fmt.Errorf("%s: %w", why, ErrNeedMetadata)
		}
		for _, id := range dedupe(req.TrackIDs) {
			t := given
			t.TidalID = id
			res.Notes = append(res.Notes, LibraryNote{ID: id, Track: t})
			res.Tracks = append(res.Tracks, t)
		}
	}
	if len(res.Tracks) > 0 {
		n, err := db.AddTracks(ctx, res.Tracks)
		if err != nil {
			return res, err
		}
		res.Added = n
	}
	return res, nil
}

func (req *LibraryAdd) validate() error {
	if req.AlbumID != "" && (len(req.TrackIDs) > 0 || req.ISRC != nil) ||
		req.AlbumID == "" && len(req.TrackIDs) == 0 && deref(req.ISRC) == "" {
		return fmt.Errorf("%w: give Tidal track ids, an ISRC, or an album id (alone)", ErrBadAdd)
	}
	if len(req.TrackIDs) > MaxAddIDs {
		return fmt.Errorf("%w: at most %d track ids at once", ErrBadAdd, MaxAddIDs)
	}
	if req.AlbumID != "" && !ValidTidalID(req.AlbumID) {
		return fmt.Errorf("%w: %q is not a Tidal album id", ErrBadAdd, req.AlbumID)
	}
	for _, id := range req.TrackIDs {
		if !ValidTidalID(id) {
			return fmt.Errorf("%w: %q is not a Tidal track id", ErrBadAdd, id)
		}
	}
	if req.ISRC != nil {
		n, err := NormalizeISRC(*req.ISRC)
		if err != nil {
			return fmt.Errorf("%w: ISRC: %v", ErrBadAdd, err)
		}
		req.ISRC = &n
	}
	if d := req.Duration; d != nil && (*d < 0 || *d > 86400) {
		return fmt.Errorf("%w: the duration must be 0 to 86400 seconds", ErrBadAdd)
	}
	return nil
}

// override applies the metadata that was given over t.
func (req LibraryAdd) override(t store.Track) store.Track {
	if req.ISRC != nil {
		t.ISRC = *req.ISRC
	}
	if req.Title != nil {
		t.Title = *req.Title
	}
	if req.Artist != nil {
		t.Artist = *req.Artist
	}
	if req.Album != nil {
		t.Album = *req.Album
	}
	if req.Duration != nil {
		t.Duration = *req.Duration
	}
	return t
}

// TrackFromTidal is a library track with the metadata TIDAL gave.
func TrackFromTidal(t tidal.Track) store.Track {
	lt := store.Track{TidalID: t.ID, ISRC: t.ISRC, Title: t.Title, Artist: t.ArtistName(),
		ArtworkURL: t.ArtworkURL(), Duration: t.Duration.Seconds()}
	if t.Album != nil {
		lt.Album, lt.AlbumID = t.Album.Title, t.Album.ID
	}
	if n, err := NormalizeISRC(lt.ISRC); err == nil {
		lt.ISRC = n
	}
	return lt
}

// ValidTidalID reports whether id looks like a Tidal id: 1 to 64 letters,
// digits, '-' or '_'.
func ValidTidalID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
	}) < 0
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
