package music

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// Pack is the pack name of the music tools.
const Pack = "music"

// Tools returns the music tools over s: semanticSearch, tidalSearch,
// albumTracks, batchMetadata, suggestPlaylist and savePlaylistToTidal.
func Tools(s *Service) []*tool.Tool {
	return []*tool.Tool{
		tool.Must(tool.New(tool.Spec{
			Name: "semanticSearch", Title: "Semantic track search", Pack: Pack,
			Description: "Search the indexed track collection by mood, theme, sound or lyrics description " +
				"(e.g. 'melancholic piano', 'upbeat summer songs about friendship'). Returns tracks with lyrics, " +
				"interpretation and audio features, each with a relevance score and whether it is in the user's library. " +
				"Optional filters narrow by audio features (0-1 scales; tempo in BPM) or to library tracks.",
			Annotations: tool.Annotations{ReadOnly: true},
		}, s.semanticSearch)),
		tool.Must(tool.New(tool.Spec{
			Name: "tidalSearch", Title: "Tidal catalogue search", Pack: Pack,
			Description: "Search the Tidal catalogue for tracks, albums, or both. Returns results with library membership " +
				"and indexing status. Use this to discover new music or find specific artists/albums.",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
			Available:   s.appAvailable,
		}, s.tidalSearch)),
		tool.Must(tool.New(tool.Spec{
			Name: "albumTracks", Title: "Tidal album tracks", Pack: Pack,
			Description: "Get all tracks from a specific album by Tidal album ID (the tidalId of an album from tidalSearch), " +
				"with library membership and indexing status.",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
			Available:   s.appAvailable,
		}, s.albumTracks)),
		tool.Must(tool.New(tool.Spec{
			Name: "batchMetadata", Title: "Track metadata by ISRC", Pack: Pack,
			Description: "Get full metadata (lyrics, interpretation, audio features) of up to 100 tracks from the index by ISRC. " +
				"ISRCs may be given in lower case or with hyphens. Lists which were found and which are not indexed.",
			Annotations: tool.Annotations{ReadOnly: true},
		}, s.batchMetadata)),
		tool.Must(tool.New(tool.Spec{
			Name: "suggestPlaylist", Title: "Suggest a playlist", Pack: Pack,
			Description: "Present a playlist to the user: a title and 1-50 tracks in playing order, each with its ISRC, title, " +
				"artist and one or two sentences of reasoning. Each track is resolved on Tidal (id, album, artwork, duration) " +
				"and flagged inLibrary/isIndexed; tracks that cannot be resolved are listed. The playlist is stored: its " +
				"playlistId can be exported or saved to the user's Tidal account with savePlaylistToTidal.",
			Annotations: tool.Annotations{OpenWorld: true},
			Available:   s.catalogAvailable,
		}, s.suggestPlaylist)),
		tool.Must(tool.New(tool.Spec{
			Name: "savePlaylistToTidal", Title: "Save a playlist to Tidal", Pack: Pack,
			Description: "Save a playlist made by suggestPlaylist (its playlistId) to the user's Tidal account: creates the " +
				"playlist (unlisted unless public is set) and adds its tracks. Needs the user to have run 'toolport tidal login'. " +
				"Only call it when the user asks to save the playlist.",
			Annotations: tool.Annotations{OpenWorld: true, Idempotent: true, UserAccount: true},
			Available:   s.userAvailable,
		}, s.savePlaylistToTidal)),
	}
}

// appAvailable is the [tool.Spec.Available] of the tools that call TIDAL
// as the app (see [Service.tidalClient]): they need its client id and secret.
func (s *Service) appAvailable() error {
	switch {
	case s.tidalErr != nil:
		return s.tidalErr
	case s.tidal == nil || !s.tidal.Configured():
		return errors.New("TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET are not set")
	}
	return nil
}

// catalogAvailable is suggestPlaylist's [tool.Spec.Available]: it reads the
// catalogue with the app's credentials or else as the logged-in user (see
// [Service.catalogClient]).
func (s *Service) catalogAvailable() error {
	err := s.appAvailable()
	if err == nil || s.tidalErr != nil {
		return err
	}
	if s.userAvailable() == nil {
		return nil
	}
	return errors.New("TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET are not set, and no one is logged in to TIDAL ('toolport tidal login')")
}

// userAvailable is savePlaylistToTidal's [tool.Spec.Available]: it acts as
// the logged-in user (see [Service.tidalUser]).
func (s *Service) userAvailable() error {
	switch {
	case s.tidalErr != nil:
		return s.tidalErr
	case s.tidalCfg.ClientID == "":
		return errors.New("TIDAL_CLIENT_ID is not set")
	case s.user.TokenFile == "":
		return errors.New("no place for the TIDAL login: set TIDAL_TOKEN_FILE or HOME")
	}
	if _, err := tidal.LoadUserToken(s.user.TokenFile); errors.Is(err, tidal.ErrNoLogin) {
		return errors.New("no one is logged in to TIDAL ('toolport tidal login')")
	} else if err != nil {
		return fmt.Errorf("the TIDAL login cannot be read: %w", err)
	}
	return nil
}

// storeError hides a store failure's details from the agent (they may name
// tables or hosts) but keeps cancellation recognisable.
func storeError(what string, err error) error {
	var te *tool.Error
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &te) {
		return err
	}
	return &tool.Error{Code: tool.CodeInternal, Message: "music store: " + what + " failed", Err: err}
}

// quote clips a query for a summary line.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return "'" + s + "'"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ---- semanticSearch

// SemanticSearchInput is the input of semanticSearch.
type SemanticSearchInput struct {
	Query string `json:"query" jsonschema:"Natural language description of the music: mood, theme, sound, instruments or lyrics" schema:"minLength=1,maxLength=2000"`
	Limit int    `json:"limit,omitempty" jsonschema:"Maximum number of tracks to return" schema:"minimum=1,maximum=50,default=20"`
	// InLibraryOnly keeps only tracks in the user's library.
	InLibraryOnly bool `json:"inLibraryOnly,omitempty" jsonschema:"Only return tracks that are in the user's library"`

	MinEnergy           *float64 `json:"minEnergy,omitempty" schema:"minimum=0,maximum=1"`
	MaxEnergy           *float64 `json:"maxEnergy,omitempty" jsonschema:"Maximum energy (0-1), e.g. 0.3 for calm tracks" schema:"minimum=0,maximum=1"`
	MinValence          *float64 `json:"minValence,omitempty" jsonschema:"Minimum valence (0-1, musical positiveness)" schema:"minimum=0,maximum=1"`
	MaxValence          *float64 `json:"maxValence,omitempty" jsonschema:"Maximum valence (0-1), e.g. 0.3 for sad tracks" schema:"minimum=0,maximum=1"`
	MinDanceability     *float64 `json:"minDanceability,omitempty" schema:"minimum=0,maximum=1"`
	MaxDanceability     *float64 `json:"maxDanceability,omitempty" schema:"minimum=0,maximum=1"`
	MinAcousticness     *float64 `json:"minAcousticness,omitempty" schema:"minimum=0,maximum=1"`
	MaxAcousticness     *float64 `json:"maxAcousticness,omitempty" schema:"minimum=0,maximum=1"`
	MinInstrumentalness *float64 `json:"minInstrumentalness,omitempty" jsonschema:"Minimum instrumentalness (0-1); 0.5 and above is mostly instrumental" schema:"minimum=0,maximum=1"`
	MaxInstrumentalness *float64 `json:"maxInstrumentalness,omitempty" schema:"minimum=0,maximum=1"`
	MinTempo            *float64 `json:"minTempo,omitempty" schema:"minimum=0,maximum=400"`
	MaxTempo            *float64 `json:"maxTempo,omitempty" schema:"minimum=0,maximum=400"`
}

// SemanticSearchOutput is the output of semanticSearch.
type SemanticSearchOutput struct {
	Tracks     []IndexedTrackResult `json:"tracks"`
	Query      string               `json:"query"`
	TotalFound int                  `json:"totalFound" jsonschema:"Number of tracks returned"`
	// Note says what the index could not read of the query: words in a
	// script its embedder does not cover (index.ReadQuery).
	Note       string `json:"note,omitempty" jsonschema:"What the search could not read of the query, such as words in a language the index does not cover"`
	indexEmpty bool
}

// Summary is "Found 12 tracks matching 'melancholic love songs'".
func (o SemanticSearchOutput) Summary() string {
	s := fmt.Sprintf("Found %s matching %s", plural(o.TotalFound, "track", "tracks"), quote(o.Query))
	if o.indexEmpty {
		s += " (the index is empty: run 'toolport index add FILE.jsonl')"
	}
	if o.Note != "" {
		s += ". " + o.Note
	}
	return s
}

type bound struct {
	feature  int
	min, max float64
}

// bounds lists the feature filters set in the input.
func (in SemanticSearchInput) bounds() []bound {
	var out []bound
	add := func(f int, lo, hi *float64) {
		if lo == nil && hi == nil {
			return
		}
		b := bound{f, math.Inf(-1), math.Inf(1)}
		if lo != nil {
			b.min = *lo
		}
		if hi != nil {
			b.max = *hi
		}
		out = append(out, b)
	}
	add(fEnergy, in.MinEnergy, in.MaxEnergy)
	add(fValence, in.MinValence, in.MaxValence)
	add(fDanceability, in.MinDanceability, in.MaxDanceability)
	add(fAcousticness, in.MinAcousticness, in.MaxAcousticness)
	add(fInstrumentalness, in.MinInstrumentalness, in.MaxInstrumentalness)
	add(fTempo, in.MinTempo, in.MaxTempo)
	return out
}

// moodPool is how many of the best text matches a query naming a mood
// reorders by audio features; the adjustment is too small to lift a track
// from further down.
const moodPool = 100

// moodFeatures gives index.MoodFit a track's audio features; nil when it
// has none.
func moodFeatures(f *AudioFeatures) index.FeatureValue {
	if f == nil {
		return nil
	}
	ps := featurePointers(f)
	return func(name string) (float64, bool) {
		i := moodSlot(name)
		if i < 0 || ps[i] == nil {
			return 0, false
		}
		return *ps[i], true
	}
}

// libraryPool is how many hits a library-only search ranks before keeping
// the library's: the library check is one query over these.
const libraryPool = 1000

func (s *Service) semanticSearch(ctx context.Context, in SemanticSearchInput) (SemanticSearchOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return SemanticSearchOutput{}, &tool.Error{Code: tool.CodeValidation, Message: "query: must not be blank"}
	}
	bounds := in.bounds()
	for _, b := range bounds {
		if b.min > b.max {
			return SemanticSearchOutput{}, &tool.Error{Code: tool.CodeValidation, Message: "a minimum filter is above its maximum"}
		}
	}
	// A query that names a mood or energy reorders a pool of the best text
	// matches by their audio features (index.RerankByMood).
	moods := index.MoodTargets(q)
	pool := in.Limit
	if len(moods) > 0 {
		pool = max(pool, moodPool)
	}
	k := pool
	if in.InLibraryOnly {
		k = max(k, libraryPool)
	}
	out := SemanticSearchOutput{Tracks: []IndexedTrackResult{}, Query: in.Query}
	reading, err := s.readQuery(ctx, q)
	if err != nil {
		return SemanticSearchOutput{}, err
	}
	out.Note = reading.Note()
	if reading.Nothing {
		// Neither side of the index read a word: any ranking would be noise.
		return out, nil
	}
	if negated, only := index.OnlyNegation(q); only {
		// Searching for the negated words would find just what was not
		// wanted, and there is nothing else to rank by.
		out.Note = "The query only says what to leave out (" + textclip.PrefixRunes(negated, 80) +
			"): say what the music should be as well, e.g. 'calm piano without vocals'."
		return out, nil
	}
	var hits []index.Hit
	// terms are what the ranking searched for, to say why each track matched.
	terms := index.PlainQueryTerms(q)
	if s.usesWeaviate() {
		// Weaviate is shared by every replica: nothing to refresh.
		h, empty, err := s.searchWeaviate(ctx, q, k, bounds)
		if err != nil {
			return SemanticSearchOutput{}, err
		}
		hits, out.indexEmpty = h, empty
	} else {
		h, empty, err := s.searchEngine(ctx, q, k, bounds)
		if err != nil {
			return SemanticSearchOutput{}, err
		}
		hits, out.indexEmpty = h, empty
		if eng := s.loadedEngine(); eng != nil {
			terms = eng.QueryTerms(q)
		}
	}
	db, err := s.Store(ctx)
	if err != nil {
		return SemanticSearchOutput{}, err
	}
	var lib store.InLibrary
	checkLibrary := func(isrcs []string) error {
		start := time.Now()
		var err error
		lib, err = db.LibraryStatus(ctx, isrcs, nil)
		tm.library = time.Since(start)
		if err != nil {
			return storeError("checking the library", err)
		}
		return nil
	}
	if in.InLibraryOnly {
		if err := checkLibrary(hitIDs(hits)); err != nil {
			return SemanticSearchOutput{}, err
		}
		hits = slices.DeleteFunc(hits, func(h index.Hit) bool { return !lib.ISRCs[h.ID] })
	}
	hits = hits[:min(len(hits), pool)]

	start := time.Now()
	if len(moods) > 0 {
		// The pool is reordered by its features alone (held in memory
		// beside the embedded engine, read from the store with Weaviate);
		// only the hits shown are read whole.
		features, err := s.poolFeatures(ctx, db, hitIDs(hits))
		if err != nil {
			tm.index = time.Since(start)
			return SemanticSearchOutput{}, storeError("reading the index", err)
		}
		hits = index.RerankByMood(hits, moods, func(id string) index.FeatureValue {
			return features[id]
		})
	}
	hits = hits[:min(len(hits), in.Limit)]
	shown := hitIDs(hits)
	recs, err := db.GetIndexContent(ctx, shown)
	tm.index = time.Since(start)
	if err != nil {
		return SemanticSearchOutput{}, storeError("reading the index", err)
	}
	if !in.InLibraryOnly {
		// Only the hits shown are checked against the library.
		if err := checkLibrary(shown); err != nil {
			return SemanticSearchOutput{}, err
		}
	}
	byISRC := make(map[string]store.IndexRecord, len(recs))
	for _, r := range recs {
		byISRC[r.ISRC] = r
	}
	for _, h := range hits {
		r, ok := byISRC[h.ID]
		if !ok {
			continue // deleted since the engine was loaded
		}
		t := indexedResult(r)
		// The mood adjustment may take a score a little outside 0–1.
		score := math.Round(min(max(h.Score, 0), 1)*1e4) / 1e4
		t.Score = &score
		t.InLibrary = lib.ISRCs[h.ID]
		t.Matched = matchedLine(terms, r)
		if len(moods) > 0 {
			_, t.MatchedFeatures = index.MoodFit(moods, moodFeatures(r.AudioFeatures))
		}
		out.Tracks = append(out.Tracks, t)
	}
	out.TotalFound = len(out.Tracks)
	return out, nil
}

// readQuery is what the index can read of q (index.ReadQuery): the loaded
// engine's embedder and terms, or the embedder alone with Weaviate.
func (s *Service) readQuery(ctx context.Context, q string) (index.Reading, error) {
	if !s.usesWeaviate() {
		eng, err := s.Engine(ctx)
		if err != nil {
			return index.Reading{}, err
		}
		return eng.ReadQuery(q), nil
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return index.Reading{}, err
	}
	return index.ReadQuery(emb, nil, q), nil
}

// matchedMaxRunes bounds the matched line shown for a result.
const matchedMaxRunes = 240

// matchedLine is the sentence of the track's interpretation, else the line
// of its lyrics, that holds most of what the query searched for; else the
// interpretation's first sentence (a match by vector similarity alone).
func matchedLine(terms map[string]float64, r store.IndexRecord) string {
	if s := index.Explain(terms, r.Interpretation, matchedMaxRunes); s != "" {
		return s
	}
	if s := index.Explain(terms, r.Lyrics, matchedMaxRunes); s != "" {
		return s
	}
	return index.FirstSentence(r.Interpretation, matchedMaxRunes)
}

// searchEngine ranks with the in-memory engine, first picking up what other
// processes wrote meanwhile. It also reports whether the index is empty.
func (s *Service) searchEngine(ctx context.Context, q string, k int, bounds []bound) ([]index.Hit, bool, error) {
	if _, err := s.Engine(ctx); err != nil {
		return nil, false, err
	}
	// A refresh may replace the engine, so it is fetched again after.
	if err := s.refreshIfDue(ctx); err != nil {
		return nil, false, err
	}
	eng, err := s.Engine(ctx)
	if err != nil {
		return nil, false, err
	}
	var filter func(string) bool
	if len(bounds) > 0 {
		filter = s.featureFilter(bounds)
	}
	hits, err := eng.Search(ctx, q, k, filter)
	if err != nil {
		return nil, false, fmt.Errorf("semantic search: %w", err)
	}
	return hits, eng.Len() == 0, nil
}

// poolFeatures returns the mood features of isrcs that have them: from the
// features the embedded engine keeps in memory, or from the store when
// Weaviate holds the index.
func (s *Service) poolFeatures(ctx context.Context, db Store, isrcs []string) (map[string]index.FeatureValue, error) {
	out := make(map[string]index.FeatureValue, len(isrcs))
	if s.usesWeaviate() {
		stored, err := db.IndexFeatures(ctx, isrcs)
		if err != nil {
			return nil, err
		}
		for id, f := range stored {
			out[id] = moodFeatures(f)
		}
		return out, nil
	}
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	for _, id := range isrcs {
		if fv, ok := s.features[id]; ok {
			out[id] = fv.value
		}
	}
	return out, nil
}

// hitIDs lists the hits' ISRCs in order.
func hitIDs(hits []index.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// featureFilter keeps tracks whose known features are within every bound; a
// track without a feature a bound is on does not pass.
func (s *Service) featureFilter(bounds []bound) func(string) bool {
	return func(id string) bool {
		s.fmu.RLock()
		fv, ok := s.features[id]
		s.fmu.RUnlock()
		if !ok {
			return false
		}
		for _, b := range bounds {
			v := float64(fv[b.feature])
			if math.IsNaN(v) || v < b.min || v > b.max {
				return false
			}
		}
		return true
	}
}

// ---- tidalSearch

// TidalSearchInput is the input of tidalSearch.
type TidalSearchInput struct {
	Query      string `json:"query" jsonschema:"Search query text: artist name, album title, track title, or a combination (e.g. 'Karma Police Radiohead')" schema:"minLength=1,maxLength=500"`
	SearchType string `json:"searchType" jsonschema:"What to search for: tracks, albums, or both" schema:"enum=tracks|albums|both"`
	Limit      int    `json:"limit,omitempty" jsonschema:"Maximum number of results per type" schema:"minimum=1,maximum=100,default=20"`
}

// TotalFound counts results per type.
type TotalFound struct {
	Tracks int `json:"tracks"`
	Albums int `json:"albums"`
}

// TidalSearchOutput is the output of tidalSearch. Tracks and Albums are
// present when their type was searched.
type TidalSearchOutput struct {
	Tracks     *[]TrackResult `json:"tracks,omitempty" jsonschema:"Matching tracks (searchType tracks or both)"`
	Albums     *[]AlbumResult `json:"albums,omitempty" jsonschema:"Matching albums (searchType albums or both)"`
	Query      string         `json:"query"`
	TotalFound TotalFound     `json:"totalFound"`
	searchType string
}

// Summary is "Found 10 tracks and 5 albums for 'Radiohead'".
func (o TidalSearchOutput) Summary() string {
	var what string
	switch o.searchType {
	case "tracks":
		what = plural(o.TotalFound.Tracks, "track", "tracks")
	case "albums":
		what = plural(o.TotalFound.Albums, "album", "albums")
	default:
		what = plural(o.TotalFound.Tracks, "track", "tracks") + " and " + plural(o.TotalFound.Albums, "album", "albums")
	}
	return "Found " + what + " for " + quote(o.Query)
}

func (s *Service) tidalSearch(ctx context.Context, in TidalSearchInput) (TidalSearchOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	if strings.TrimSpace(in.Query) == "" {
		return TidalSearchOutput{}, &tool.Error{Code: tool.CodeValidation, Message: "query: must not be blank"}
	}
	tc, err := s.tidalClient()
	if err != nil {
		return TidalSearchOutput{}, err
	}
	types := map[string]tidal.SearchTypes{"tracks": tidal.SearchTracks, "albums": tidal.SearchAlbums, "both": tidal.SearchAll}[in.SearchType]
	start := time.Now()
	res, err := tidalCacheUse(ctx, tc).Search(ctx, in.Query, types, in.Limit)
	err = tidalError(err)
	tm.tidal = time.Since(start)
	if err != nil {
		return TidalSearchOutput{}, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return TidalSearchOutput{}, err
	}
	tracks := make([]TrackResult, 0, len(res.Tracks))
	for _, t := range res.Tracks {
		tracks = append(tracks, trackResult(t))
	}
	albums := make([]AlbumResult, 0, len(res.Albums))
	for _, a := range res.Albums {
		albums = append(albums, albumResult(a))
	}
	if err := enrich(ctx, db, tracks, albums, &tm); err != nil {
		return TidalSearchOutput{}, err
	}
	out := TidalSearchOutput{Query: in.Query, searchType: in.SearchType,
		TotalFound: TotalFound{Tracks: len(tracks), Albums: len(albums)}}
	if types&tidal.SearchTracks != 0 {
		out.Tracks = &tracks
	}
	if types&tidal.SearchAlbums != 0 {
		out.Albums = &albums
	}
	return out, nil
}

// tidalCacheUse passes the call's cache arguments ("fresh", "maxAgeSeconds")
// to the TIDAL client's cache of catalogue answers, and reports the answers it
// reused in the result ("cached", "cachedAgeSeconds"). The registry does not
// cache these tools' results whole: the library and index marks in them must
// be read on every call.
func tidalCacheUse(ctx context.Context, tc *tidal.Client) *tidal.Client {
	maxAge, ok := tool.CacheMaxAge(ctx)
	if !ok {
		return tc
	}
	return tc.WithCacheUse(maxAge, func(age time.Duration) { tool.ReportCached(ctx, age) })
}

// ---- albumTracks

// AlbumTracksInput is the input of albumTracks.
type AlbumTracksInput struct {
	AlbumID string `json:"albumId" jsonschema:"Tidal album ID from a previous search result" schema:"minLength=1,maxLength=64"`
}

// AlbumTracksOutput is the output of albumTracks.
type AlbumTracksOutput struct {
	AlbumID     string        `json:"albumId"`
	AlbumTitle  string        `json:"albumTitle"`
	Artist      string        `json:"artist"`
	ArtworkURL  string        `json:"artworkUrl,omitempty"`
	ReleaseDate string        `json:"releaseDate,omitempty"`
	TrackCount  int           `json:"trackCount" jsonschema:"Number of tracks returned"`
	InLibrary   bool          `json:"inLibrary" jsonschema:"The album is in the user's library"`
	Tracks      []TrackResult `json:"tracks"`
}

// Summary is "Homogenic has 10 tracks".
func (o AlbumTracksOutput) Summary() string {
	return fmt.Sprintf("%s has %s", o.AlbumTitle, plural(len(o.Tracks), "track", "tracks"))
}

func (s *Service) albumTracks(ctx context.Context, in AlbumTracksInput) (AlbumTracksOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	tc, err := s.tidalClient()
	if err != nil {
		return AlbumTracksOutput{}, err
	}
	start := time.Now()
	album, tts, err := tidalCacheUse(ctx, tc).AlbumWithTracks(ctx, strings.TrimSpace(in.AlbumID))
	err = tidalError(err)
	tm.tidal = time.Since(start)
	if err != nil {
		return AlbumTracksOutput{}, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return AlbumTracksOutput{}, err
	}
	tracks := make([]TrackResult, 0, len(tts))
	for _, t := range tts {
		tracks = append(tracks, trackResult(t))
	}
	albums := []AlbumResult{albumResult(*album)}
	if err := enrich(ctx, db, tracks, albums, &tm); err != nil {
		return AlbumTracksOutput{}, err
	}
	return AlbumTracksOutput{
		AlbumID: album.ID, AlbumTitle: album.Title, Artist: album.ArtistName(), ArtworkURL: album.ArtworkURL,
		ReleaseDate: album.ReleaseDate, TrackCount: len(tracks), InLibrary: albums[0].InLibrary, Tracks: tracks,
	}, nil
}

// ---- batchMetadata

// BatchMetadataInput is the input of batchMetadata.
type BatchMetadataInput struct {
	ISRCs []string `json:"isrcs" jsonschema:"ISRCs to look up, e.g. USRC17607839 (lower case and hyphens are accepted)" schema:"minItems=1,maxItems=100,items.minLength=1,items.maxLength=64"`
}

// BatchMetadataOutput is the output of batchMetadata.
type BatchMetadataOutput struct {
	Tracks   []IndexedTrackResult `json:"tracks" jsonschema:"Full metadata of the indexed tracks, in the order asked"`
	Found    []string             `json:"found" jsonschema:"ISRCs (normalised) that are in the index"`
	NotFound []string             `json:"notFound" jsonschema:"ISRCs (normalised) that are not in the index"`
}

// Summary is "Found 8 of 10 tracks (2 not indexed)".
func (o BatchMetadataOutput) Summary() string {
	s := fmt.Sprintf("Found %d of %s", len(o.Found), plural(len(o.Found)+len(o.NotFound), "track", "tracks"))
	if len(o.NotFound) > 0 {
		s += fmt.Sprintf(" (%d not indexed)", len(o.NotFound))
	}
	return s
}

func (s *Service) batchMetadata(ctx context.Context, in BatchMetadataInput) (BatchMetadataOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	isrcs := make([]string, 0, len(in.ISRCs))
	var bad []string
	for _, raw := range in.ISRCs {
		n, err := NormalizeISRC(raw)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%q", textclip.Bytes(raw, 20)))
			continue
		}
		if !slices.Contains(isrcs, n) {
			isrcs = append(isrcs, n)
		}
	}
	if len(bad) > 0 {
		return BatchMetadataOutput{}, &tool.Error{Code: tool.CodeValidation, Message: fmt.Sprintf(
			"isrcs: not valid ISRCs (want 12 characters: 2 letters, 3 letters or digits, 7 digits): %s", strings.Join(bad, ", "))}
	}
	db, err := s.Store(ctx)
	if err != nil {
		return BatchMetadataOutput{}, err
	}
	start := time.Now()
	recs, err := db.GetIndexContent(ctx, isrcs)
	tm.index = time.Since(start)
	if err != nil {
		return BatchMetadataOutput{}, storeError("reading the index", err)
	}
	start = time.Now()
	lib, err := db.LibraryStatus(ctx, isrcs, nil)
	tm.library = time.Since(start)
	if err != nil {
		return BatchMetadataOutput{}, storeError("checking the library", err)
	}
	out := BatchMetadataOutput{Tracks: []IndexedTrackResult{}, Found: []string{}, NotFound: []string{}}
	found := make(map[string]bool, len(recs))
	for _, r := range recs { // GetIndexContent keeps the order asked
		t := indexedResult(r)
		t.InLibrary = lib.ISRCs[r.ISRC]
		out.Tracks = append(out.Tracks, t)
		found[r.ISRC] = true
	}
	for _, isrc := range isrcs {
		if found[isrc] {
			out.Found = append(out.Found, isrc)
		} else {
			out.NotFound = append(out.NotFound, isrc)
		}
	}
	return out, nil
}
