package music

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// MaxPlaylistTracks bounds the tracks suggestPlaylist takes, as algojuke does.
const MaxPlaylistTracks = 50

// SuggestPlaylistInput is the input of suggestPlaylist.
type SuggestPlaylistInput struct {
	Title  string           `json:"title" jsonschema:"Playlist title, e.g. 'Rainy Sunday morning'" schema:"minLength=1,maxLength=200"`
	Tracks []SuggestedTrack `json:"tracks" jsonschema:"The tracks in playing order" schema:"minItems=1,maxItems=50"`
}

// SuggestedTrack is one track the agent suggests, with why.
type SuggestedTrack struct {
	ISRC      string `json:"isrc" jsonschema:"ISRC of the track (from semanticSearch, tidalSearch, albumTracks or batchMetadata)" schema:"minLength=1,maxLength=64"`
	Title     string `json:"title" jsonschema:"Track title" schema:"minLength=1,maxLength=500"`
	Artist    string `json:"artist" jsonschema:"Artist name" schema:"minLength=1,maxLength=500"`
	Reasoning string `json:"reasoning" jsonschema:"One or two sentences on why the track belongs in this playlist" schema:"maxLength=1000"`
}

// PlaylistTrack is a resolved track of a suggested playlist.
type PlaylistTrack struct {
	TrackResult
	Reasoning string `json:"reasoning,omitempty" jsonschema:"Why the agent chose the track"`
}

// UnresolvedTrack is a suggested track that is not in the playlist.
type UnresolvedTrack struct {
	ISRC      string `json:"isrc"`
	Title     string `json:"title"`
	Artist    string `json:"artist"`
	Reasoning string `json:"reasoning,omitempty"`
	Reason    string `json:"reason" jsonschema:"Why it could not be resolved"`
}

// SuggestPlaylistOutput is the output of suggestPlaylist.
type SuggestPlaylistOutput struct {
	PlaylistID string `json:"playlistId" jsonschema:"Id of the stored playlist (for export and savePlaylistToTidal)"`
	Title      string `json:"title"`
	// Tracks are the resolved tracks, in the order suggested.
	Tracks     []PlaylistTrack   `json:"tracks"`
	Unresolved []UnresolvedTrack `json:"unresolved" jsonschema:"Suggested tracks that could not be resolved on TIDAL"`
	TrackCount int               `json:"trackCount"`
	// TotalDuration is in seconds.
	TotalDuration float64 `json:"totalDuration" jsonschema:"Total duration in seconds"`
	ExportURL     string  `json:"exportUrl" jsonschema:"Path of the playlist's download on the chat server (add ?format=m3u8 or json)"`
}

// Summary is "Playlist 'Rainy day': 12 tracks, 48 min (2 not found on TIDAL)".
func (o SuggestPlaylistOutput) Summary() string {
	s := fmt.Sprintf("Playlist %s: %s, %s", quote(o.Title), plural(o.TrackCount, "track", "tracks"), minutes(o.TotalDuration))
	if n := len(o.Unresolved); n > 0 {
		s += fmt.Sprintf(" (%d not found on TIDAL)", n)
	}
	return s
}

// minutes renders seconds as "48 min" or "1 h 02 min".
func minutes(secs float64) string {
	m := int(secs+30) / 60
	if m < 60 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d h %02d min", m/60, m%60)
}

// ExportPath is where the chat server serves a stored playlist's export.
func ExportPath(id string) string { return "/api/playlists/" + id + "/export" }

func (s *Service) suggestPlaylist(ctx context.Context, in SuggestPlaylistInput) (SuggestPlaylistOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	title := strings.TrimSpace(oneLine(in.Title))
	if title == "" {
		return SuggestPlaylistOutput{}, &tool.Error{Code: tool.CodeValidation, Message: "title: must not be blank"}
	}
	if len(in.Tracks) == 0 || len(in.Tracks) > MaxPlaylistTracks {
		return SuggestPlaylistOutput{}, &tool.Error{Code: tool.CodeValidation,
			Message: fmt.Sprintf("tracks: give 1 to %d tracks", MaxPlaylistTracks)}
	}

	// Normalise the ISRCs; a repeated one is reported, not fatal, and a
	// malformed one leaves the track to the search by title and artist.
	type want struct {
		in   SuggestedTrack
		isrc string // "" when malformed
		why  string // why the ISRC did not resolve it
	}
	var wants []want
	var unresolved []UnresolvedTrack
	seen := map[string]bool{}
	for _, t := range in.Tracks {
		t.Title, t.Artist, t.Reasoning = strings.TrimSpace(t.Title), strings.TrimSpace(t.Artist), strings.TrimSpace(t.Reasoning)
		isrc, err := NormalizeISRC(t.ISRC)
		switch {
		case err != nil:
			wants = append(wants, want{in: t, why: "not a valid ISRC"})
		case seen[isrc]:
			unresolved = append(unresolved, unresolvedTrack(t, isrc, "the same ISRC is earlier in the playlist"))
		default:
			seen[isrc] = true
			wants = append(wants, want{in: t, isrc: isrc})
		}
	}

	tc, err := s.catalogClient()
	if err != nil {
		return SuggestPlaylistOutput{}, err
	}
	var isrcs []string
	for _, w := range wants {
		if w.isrc != "" {
			isrcs = append(isrcs, w.isrc)
		}
	}
	start := time.Now()
	var found []tidal.Track
	if len(isrcs) > 0 {
		found, err = tc.TracksByISRC(ctx, isrcs)
	}
	tm.tidal = time.Since(start)
	if err != nil {
		return SuggestPlaylistOutput{}, tidalError(err)
	}
	byISRC := map[string][]tidal.Track{}
	for _, t := range found {
		k := strings.ToUpper(t.ISRC)
		byISRC[k] = append(byISRC[k], t)
	}

	tracks := make([]PlaylistTrack, 0, len(wants))
	inPlaylist := map[string]bool{} // TIDAL ids
	for _, w := range wants {
		var tr tidal.Track
		if cands := byISRC[w.isrc]; len(cands) > 0 {
			tr = pickRelease(cands, w.in.Artist)
		} else {
			// The ISRC is missing or unknown to TIDAL: search by title and
			// artist, and take a hit only when both match.
			why := w.why
			if why == "" {
				why = "TIDAL has no track with this ISRC in the configured country"
			}
			start := time.Now()
			hit, reason, err := searchTrack(ctx, tc, w.in.Title, w.in.Artist)
			tm.tidal += time.Since(start)
			if err != nil {
				if ctx.Err() != nil {
					return SuggestPlaylistOutput{}, tidalError(err)
				}
				// One track's search failing must not cost the tracks
				// already resolved: it is listed with why.
				reason = searchFailure(err)
			}
			if hit == nil {
				isrc := w.isrc
				if isrc == "" {
					isrc = textclip.Bytes(w.in.ISRC, 20)
				}
				unresolved = append(unresolved, unresolvedTrack(w.in, isrc, why+", and "+reason))
				continue
			}
			tr = *hit
		}
		if inPlaylist[tr.ID] {
			unresolved = append(unresolved, unresolvedTrack(w.in, tr.ISRC, "the same track is earlier in the playlist"))
			continue
		}
		inPlaylist[tr.ID] = true
		tracks = append(tracks, PlaylistTrack{TrackResult: trackResult(tr), Reasoning: w.in.Reasoning})
	}
	db, err := s.Store(ctx)
	if err != nil {
		return SuggestPlaylistOutput{}, err
	}
	plain := make([]TrackResult, len(tracks))
	for i := range tracks {
		plain[i] = tracks[i].TrackResult
	}
	if err := enrich(ctx, db, plain, nil, &tm); err != nil {
		return SuggestPlaylistOutput{}, err
	}
	out := SuggestPlaylistOutput{Title: title, Tracks: tracks, Unresolved: unresolved, TrackCount: len(tracks)}
	if out.Unresolved == nil {
		out.Unresolved = []UnresolvedTrack{}
	}
	items := make([]store.PlaylistItem, len(tracks))
	for i := range tracks {
		tracks[i].TrackResult = plain[i]
		t := plain[i]
		out.TotalDuration += t.Duration
		items[i] = store.PlaylistItem{TidalID: t.TidalID, ISRC: t.ISRC, Title: t.Title, Artist: t.Artist, Album: t.Album,
			ArtworkURL: t.ArtworkURL, Duration: t.Duration, Reasoning: tracks[i].Reasoning}
	}
	entries := make([]store.PlaylistEntry, len(unresolved))
	for i, u := range unresolved {
		entries[i] = store.PlaylistEntry{ISRC: u.ISRC, Title: u.Title, Artist: u.Artist, Reasoning: u.Reasoning, Reason: u.Reason}
	}
	origin := store.OriginFrom(ctx)
	p, err := db.CreatePlaylist(ctx, store.Playlist{
		Title: title, Description: out.Summary(), Items: items, Unresolved: entries,
		ConversationID: origin.ConversationID, MessageID: origin.MessageID, ToolCallID: origin.ToolCallID,
	})
	if err != nil {
		return SuggestPlaylistOutput{}, storeError("saving the playlist", err)
	}
	out.PlaylistID = p.ID
	out.ExportURL = ExportPath(p.ID)
	return out, nil
}

// searchLimit is how many search hits are compared with a suggested track.
const searchLimit = 20

// searchTrack looks a track up by "title artist" and returns the first hit
// whose title and artist match the suggested ones once normalised (see
// matchKey), or nil and why none was taken.
func searchTrack(ctx context.Context, tc *tidal.Client, title, artist string) (*tidal.Track, string, error) {
	query := title + " " + artist
	res, err := tc.Search(ctx, query, tidal.SearchTracks, searchLimit)
	if err != nil {
		return nil, "", err
	}
	wantTitle, wantArtist := matchKey(title), matchKey(artist)
	for i, t := range res.Tracks {
		if matchKey(t.Title) != wantTitle {
			continue
		}
		for _, a := range t.Artists {
			if matchKey(a.Name) == wantArtist {
				return &res.Tracks[i], "", nil
			}
		}
		if matchKey(t.ArtistName()) == wantArtist {
			return &res.Tracks[i], "", nil
		}
	}
	reason := fmt.Sprintf("a TIDAL search for %s found no track with that title and artist", quote(textclip.Bytes(query, 120)))
	return nil, reason, nil
}

// searchFailure says why a fallback search gave no track: TIDAL's 404 (some
// API versions answer it for a query with no hits) is "nothing found", any
// other failure is named with TIDAL's own message.
func searchFailure(err error) string {
	if errors.Is(err, tidal.ErrNotFound) {
		return "a TIDAL search by title and artist found nothing"
	}
	var te *tidal.Error
	if errors.As(err, &te) {
		return "the TIDAL search by title and artist failed: " + textclip.Bytes(te.Message, 200)
	}
	return "the TIDAL search by title and artist failed"
}

// matchKey normalises a title or an artist for comparison: accents and
// case folded, what is in parentheses or brackets dropped ("(Remastered)",
// "[feat. X]"), a trailing "feat. …" / "ft. …" / "featuring …" cut, and
// punctuation and spacing ignored; so "Blade Walker (feat. Y)" matches
// "BLADE WALKER".
func matchKey(s string) string {
	s, _, _ = transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
	s = strings.ToLower(s)
	s = bracketed().ReplaceAllString(s, " ")
	if loc := featuring().FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case unicode.IsSpace(r) || r == '-' || r == '/' || r == '&' || r == ',':
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Compiled on first use, not at the start of every command that links the
// pack.
var (
	bracketed = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\([^)]*\)|\[[^\]]*\]`) })
	featuring = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|\s)(feat\.?|ft\.|featuring)\s`) })
)

func unresolvedTrack(t SuggestedTrack, isrc, reason string) UnresolvedTrack {
	return UnresolvedTrack{ISRC: isrc, Title: textclip.Bytes(t.Title, 200), Artist: textclip.Bytes(t.Artist, 200), Reasoning: t.Reasoning, Reason: reason}
}

// pickRelease chooses among the releases of one ISRC: the first whose artist
// matches the suggested one, else the first with an album, else the first.
func pickRelease(cands []tidal.Track, artist string) tidal.Track {
	a := strings.ToLower(artist)
	for _, c := range cands {
		if a != "" && strings.Contains(strings.ToLower(c.ArtistName()), a) {
			return c
		}
	}
	for _, c := range cands {
		if c.Album != nil {
			return c
		}
	}
	return cands[0]
}

// oneLine replaces control characters (line breaks included) with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
