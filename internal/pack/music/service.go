package music

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// Store is what the music tools keep: the user's library, the track index
// and the playlists suggestPlaylist makes. *sqlstore.DB implements it; the
// pack depends on this interface, not on a database driver.
type Store interface {
	store.Library
	store.Index
	store.Playlists
}

// Config configures a [Service] opened with [Open]. The store is not part of
// it: the caller opens the one store of the process and hands it over.
type Config struct {
	Tidal tidal.Config
	// TidalUser is where the user's TIDAL login is kept (savePlaylistToTidal,
	// library sync).
	TidalUser TidalUserConfig
	// Embeddings configures an OpenAI-compatible embeddings endpoint; with
	// an empty BaseURL the offline default embedder is used.
	Embeddings embedding.Config
	// RefreshInterval is how often, at most, a search checks the store for
	// index records another process wrote (DefaultRefreshInterval when 0;
	// never when negative). See [WithRefreshInterval].
	RefreshInterval time.Duration
	// Weaviate, when its URL is set, keeps the track index in Weaviate
	// instead of in memory (see [WithWeaviate]).
	Weaviate weaviate.Config
	// weaviateErr is why the Weaviate settings could not be read; the music
	// tools that need the index report it.
	weaviateErr error
}

// DefaultRefreshInterval is how often, at most, semanticSearch checks the
// store for records written by another process: a check is one cheap query,
// and a few seconds is as fresh as someone running `toolport index add`
// next to a server notices. On PostgreSQL the store's notifications bring
// changes at once and the check runs only every [WatchFallbackInterval].
const DefaultRefreshInterval = 5 * time.Second

// Option tunes a [Service] made by [New] or [Open].
type Option func(*Service)

// WithRefreshInterval sets how often, at most, a search checks the store
// for index changes made by other processes: d == 0 keeps the default, a
// negative d turns checking off (the engine is then loaded once and follows
// only this service's own ingestion).
func WithRefreshInterval(d time.Duration) Option {
	return func(s *Service) {
		if d != 0 {
			s.refreshEvery = d
		}
	}
}

// WithNotifications turns following the store's change notifications
// (PostgreSQL) on or off; it is on by default. Off, the service polls every
// RefreshInterval as on SQLite (tests of polling use it).
func WithNotifications(on bool) Option {
	return func(s *Service) { s.noWatch = !on }
}

// WithClock replaces time.Now for refresh scheduling, so that tests can move
// time instead of sleeping.
func WithClock(now func() time.Time) Option {
	return func(s *Service) {
		if now != nil {
			s.now = now
		}
	}
}

// ConfigFromEnv reads the TIDAL settings ([TidalConfigFromEnv]) and the
// embeddings settings ([embedding.ConfigFromEnv]).
func ConfigFromEnv(c *config.Config) Config {
	cfg := Config{Tidal: TidalConfigFromEnv(c), TidalUser: TidalUserConfigFromEnv(c), Embeddings: embedding.ConfigFromEnv(c)}
	cfg.Weaviate, cfg.weaviateErr = weaviate.ConfigFromEnv(c)
	return cfg
}

// Service is what the music tools run against: the store, the embedder, the
// in-memory search engine and the TIDAL client. It is safe for concurrent
// use. The store is opened (by the function [Open] is given), the embedder
// made and the engine loaded on first use, each at most once (a failure is
// retried by the next call), so that a Service can be built for `toolport
// list` on a machine with no database.
//
// Searches never write to the store: records whose stored embedding is
// missing or another embedder's are embedded in memory when a search loads
// them, and written back only by [Service.Load] and ingestion.
type Service struct {
	openDB   func(ctx context.Context) (Store, error)
	newEmb   func(ctx context.Context) (embedding.Embedder, error)
	tidal    *tidal.Client
	tidalErr error
	tidalCfg tidal.Config    // for the user login's token endpoint
	user     TidalUserConfig // where the user login is kept

	mu  sync.Mutex // guards db and emb while they are being set up
	db  Store
	emb embedding.Embedder

	// loadMu serialises what changes the engine's content: the first load,
	// refreshes and this service's own ingestion. Searches never take it,
	// so they run on the current engine while a refresh loads.
	loadMu       sync.Mutex
	seen         store.IndexVersion // the store version the engine reflects; guarded by loadMu
	nextCheck    time.Time          // guarded by loadMu
	refreshEvery time.Duration
	now          func() time.Time
	// watchOnce starts listening for the store's change notifications
	// (PostgreSQL) after the first load; watching is set while they arrive.
	watchOnce sync.Once
	watching  atomic.Bool
	noWatch   bool
	// watchRefreshed, when set (by tests, before the first load), is
	// called after each refresh a notification started, so that a test
	// waits for it instead of polling.
	watchRefreshed func()

	// engineMu guards the engine pointer, which a full reload replaces.
	engineMu sync.Mutex
	engine   *index.Engine

	// ingestMu serialises ingestion, so that two runs cannot interleave
	// their batches' state checks and writes.
	ingestMu sync.Mutex

	fmu      sync.RWMutex
	features map[string]featureVec // ISRC → audio features, for search filters

	// The Weaviate index, when configured (vectors.go).
	vecCfg    weaviate.Config
	vecCfgErr error
	vecMu     sync.Mutex // guards vec and vecReady
	vec       *weaviate.Backend
	vecReady  bool
}

// Open returns a service for cfg over the store openStore returns. Nothing is
// opened yet: the store and the embedder are set up on first use, and a bad
// TIDAL base URL is reported by the TIDAL tools. The service never closes the
// store: whoever opens it does.
func Open(cfg Config, openStore func(ctx context.Context) (Store, error), opts ...Option) *Service {
	s := &Service{
		openDB:   openStore,
		newEmb:   func(ctx context.Context) (embedding.Embedder, error) { return NewEmbedder(ctx, cfg.Embeddings) },
		tidalCfg: cfg.Tidal,
		user:     cfg.TidalUser,
	}
	if cfg.Tidal.Progress == nil {
		cfg.Tidal.Progress = reportTidalProgress
	}
	if tc, err := tidal.NewClient(cfg.Tidal); err != nil {
		s.tidalErr = tidalError(err)
	} else {
		s.tidal = tc
	}
	s.setOptions(append([]Option{WithRefreshInterval(cfg.RefreshInterval), WithWeaviate(cfg.Weaviate)}, opts...))
	if cfg.weaviateErr != nil {
		s.vecCfgErr = &tool.Error{Code: tool.CodeConfig, Message: "the Weaviate settings are invalid: " + cfg.weaviateErr.Error(), Err: cfg.weaviateErr}
	}
	return s
}

func (s *Service) setOptions(opts []Option) {
	s.refreshEvery, s.now = DefaultRefreshInterval, time.Now
	for _, o := range opts {
		o(s)
	}
}

// New returns a service over an open store, an embedder and a TIDAL client
// (nil when TIDAL is not available: its tools then fail with CONFIG_ERROR).
// The caller owns db.
func New(db Store, emb embedding.Embedder, tc *tidal.Client, opts ...Option) *Service {
	s := &Service{db: db, emb: emb, tidal: tc}
	if tc == nil {
		s.tidalErr = tool.Errorf(tool.CodeConfig, "the TIDAL client is not configured")
	}
	s.setOptions(opts)
	return s
}

// NewEmbedder returns the OpenAI-compatible embedder when cfg has a base URL
// and the offline default otherwise. A remote embedder whose vector size is
// not configured is asked once, with a probe text, so that the engine can be
// sized.
func NewEmbedder(ctx context.Context, cfg embedding.Config) (embedding.Embedder, error) {
	if cfg.BaseURL == "" {
		e, err := embedding.NewDefault()
		if err != nil {
			return nil, fmt.Errorf("music: offline embedder: %w", err)
		}
		return e, nil
	}
	e, err := embedding.NewOpenAI(cfg)
	if err != nil {
		return nil, err
	}
	if e.Dimensions() == 0 {
		if _, err := e.Embed(ctx, []string{"dimension probe"}); err != nil {
			return nil, fmt.Errorf("music: embeddings endpoint: %w", err)
		}
	}
	return e, nil
}

// Store returns the store, opening it on first use.
func (s *Service) Store(ctx context.Context) (Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeLocked(ctx)
}

func (s *Service) storeLocked(ctx context.Context) (Store, error) {
	if s.db != nil {
		return s.db, nil
	}
	if s.openDB == nil {
		return nil, tool.Errorf(tool.CodeConfig, "no music store is configured")
	}
	db, err := s.openDB(ctx)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeConfig,
			Message: "the music database could not be opened (check TOOLPORT_DATABASE_URL): " + err.Error(), Err: err}
	}
	s.db = db
	return db, nil
}

// Embedder returns the embedder, making it on first use.
func (s *Service) Embedder(ctx context.Context) (embedding.Embedder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedderLocked(ctx)
}

func (s *Service) embedderLocked(ctx context.Context) (embedding.Embedder, error) {
	if s.emb != nil {
		return s.emb, nil
	}
	emb, err := s.newEmb(ctx)
	if err != nil {
		var te *tool.Error
		if errors.As(err, &te) {
			return nil, err
		}
		return nil, &tool.Error{Code: tool.CodeConfig, Message: "the embedder could not be set up: " + err.Error(), Err: err}
	}
	s.emb = emb
	return emb, nil
}

// Engine returns the search engine, loading it from the store on first use
// without writing records to the store (see [Service.Load] for the load that
// does); a load from the records saves the snapshot for the next process.
// It does not check the store for changes: see [Service.Refresh].
func (s *Service) Engine(ctx context.Context) (*index.Engine, error) {
	if eng := s.loadedEngine(); eng != nil {
		return eng, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if eng := s.loadedEngine(); eng != nil {
		return eng, nil
	}
	if _, err := s.reloadLocked(ctx, false); err != nil {
		return nil, err
	}
	return s.loadedEngine(), nil
}

// Load loads the engine from the whole store now, in place of any loaded
// one, and writes back the embeddings it had to make: for records stored
// without one, or with another embedder's (after the embedder was changed).
// It is the step that keeps searches from writing; `toolport serve` runs it
// at startup and `toolport index add` after ingesting.
func (s *Service) Load(ctx context.Context) (LoadStats, error) {
	if s.usesWeaviate() {
		// Nothing to hold in memory: bring Weaviate up to date instead.
		n, _, err := s.SyncVectors(ctx)
		return LoadStats{Reembedded: n}, err
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	st, err := s.reloadLocked(ctx, true)
	if err == nil && st.Reembedded > 0 {
		// Every record has its vector stored now: load once more so that a
		// snapshot is saved under the version the write-back made.
		_, err = s.reloadLocked(ctx, true)
	}
	return st, err
}

// loadedEngine returns the engine if it is loaded, else nil.
func (s *Service) loadedEngine() *index.Engine {
	s.engineMu.Lock()
	defer s.engineMu.Unlock()
	return s.engine
}

// reloadLocked loads a new engine from the whole store and puts it in place
// of the current one, which searches keep using until then. The version is
// read before the scan: whatever is written after it is picked up by the
// next refresh. With persist, the embeddings made while loading are written
// back to the store; without it, nothing is written. s.loadMu must be held.
func (s *Service) reloadLocked(ctx context.Context, persist bool) (LoadStats, error) {
	db, err := s.Store(ctx)
	if err != nil {
		return LoadStats{}, err
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return LoadStats{}, err
	}
	v, err := db.IndexVersion(ctx)
	if err != nil {
		return LoadStats{}, storeError("reading the index version", err)
	}
	eng, feats, ok := loadSnapshot(ctx, db, emb, v)
	var st LoadStats
	if ok {
		st = LoadStats{Records: eng.Len(), Reused: eng.Len(), Snapshot: true}
	} else {
		eng, feats, st, err = load(ctx, db, emb, persist, v.Count)
		if err != nil {
			return st, err
		}
		// Whoever builds the engine from the records saves it for the next
		// process: `index add` leaves the snapshot stale rather than build an
		// engine it does not search, so the first search after it (or serve's
		// Load) pays for the build once. Only when no embedding was made:
		// a Load's write-back moved the version past v (what else moved it
		// cannot be told apart), and a search's vectors are not in the store.
		if st.Reembedded == 0 {
			// A snapshot is a cache: failing to save one costs later
			// processes time, not correctness, so it does not fail the load.
			_ = saveSnapshot(ctx, db, emb, v, eng, feats)
		}
	}
	s.fmu.Lock()
	s.features = feats
	s.fmu.Unlock()
	s.engineMu.Lock()
	s.engine = eng
	s.engineMu.Unlock()
	s.seen = v
	s.nextCheck = s.now().Add(s.pollInterval())
	if s.refreshEvery >= 0 && !s.noWatch {
		s.watchOnce.Do(func() { s.startWatch(db) })
	}
	return st, nil
}

// WatchFallbackInterval is how often, at most, a search checks the store for
// changes while the store notifies them (PostgreSQL): notifications do the
// work and the check only catches one lost with a dropped connection.
const WatchFallbackInterval = time.Minute

// indexWatcher is a store that announces track index changes
// (*sqlstore.DB on PostgreSQL).
type indexWatcher interface {
	WatchIndex(ctx context.Context, changed func()) error
}

// startWatch follows the store's change notifications, if it sends them, for
// as long as the store is open: each one refreshes the engine in the
// background with the records written since, so that a change made through
// another process is in the next search without waiting for a poll.
func (s *Service) startWatch(db Store) {
	w, ok := db.(indexWatcher)
	if !ok {
		return
	}
	kick := make(chan struct{}, 1) // coalesces notifications that arrive during a refresh
	go func() {
		for range kick {
			_, _ = s.Refresh(context.Background()) // a failure is retried by the next notification or poll
			if s.watchRefreshed != nil {
				s.watchRefreshed()
			}
		}
	}()
	go func() {
		defer close(kick)
		defer s.watching.Store(false)
		_ = w.WatchIndex(context.Background(), func() {
			s.watching.Store(true)
			select {
			case kick <- struct{}{}:
			default:
			}
		})
	}()
}

// pollInterval is how long a search waits between checks of the store.
func (s *Service) pollInterval() time.Duration {
	if s.watching.Load() && s.refreshEvery >= 0 {
		return max(s.refreshEvery, WatchFallbackInterval)
	}
	return s.refreshEvery
}

// refreshIfDue brings the engine up to date with the store when the refresh
// interval has passed since the last check. When another caller is already
// loading, it returns at once: the search then runs on the engine as it is.
func (s *Service) refreshIfDue(ctx context.Context) error {
	if s.refreshEvery < 0 || !s.loadMu.TryLock() {
		return nil
	}
	defer s.loadMu.Unlock()
	if s.loadedEngine() == nil || s.now().Before(s.nextCheck) {
		return nil
	}
	_, err := s.refreshLocked(ctx)
	return err
}

// RefreshStats says what a refresh did.
type RefreshStats struct {
	Changed  bool // the store had changed since the engine was loaded or last refreshed
	Delta    int  // records loaded as a delta
	Reloaded bool // the engine was rebuilt from the whole store (records were deleted)
}

// Refresh brings the engine up to date with the store now, whatever the
// refresh interval, loading the engine if it is not loaded yet. Searches
// call it on their own every RefreshInterval; it is exported for callers
// that know the store changed. Like a search, it writes nothing.
func (s *Service) Refresh(ctx context.Context) (RefreshStats, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if s.loadedEngine() == nil {
		if _, err := s.reloadLocked(ctx, false); err != nil {
			return RefreshStats{}, err
		}
		return RefreshStats{Changed: true, Reloaded: true}, nil
	}
	return s.refreshLocked(ctx)
}

// refreshLocked compares the store's version with the one the engine
// reflects. Records written since are loaded into the live engine (searches
// meanwhile see the old state plus part of the delta, never a broken one);
// records written after the version read are left for the next refresh, so
// that the engine then matches that version exactly. If the engine's size
// does not match the version's count afterwards, records were deleted, and
// the engine is rebuilt from the whole store: deletions are rare, and a
// rebuild is simple and correct. s.loadMu must be held.
func (s *Service) refreshLocked(ctx context.Context) (RefreshStats, error) {
	s.nextCheck = s.now().Add(s.pollInterval())
	db, err := s.Store(ctx)
	if err != nil {
		return RefreshStats{}, err
	}
	v, err := db.IndexVersion(ctx)
	if err != nil {
		return RefreshStats{}, storeError("checking the index for changes", err)
	}
	if v == s.seen {
		return RefreshStats{}, nil
	}
	st := RefreshStats{Changed: true}
	eng := s.loadedEngine()
	if v.Count >= s.seen.Count && !v.Updated.Before(s.seen.Updated) {
		emb, err := s.Embedder(ctx)
		if err != nil {
			return st, err
		}
		scan := func(fn func(store.IndexRecord) error) error {
			return db.EachIndexRecordSince(ctx, s.seen.Updated, func(r store.IndexRecord) error {
				if r.UpdatedAt.After(v.Updated) {
					return nil // written after v: the next refresh loads it
				}
				return fn(r)
			})
		}
		ls, err := loadInto(ctx, nil, emb, eng, scan, s.setFeatures)
		if err != nil {
			return st, err
		}
		st.Delta = ls.Records
		if eng.Len() == v.Count {
			s.seen = v
			return st, nil
		}
	}
	// Fewer records than the engine holds (or a store that went back in
	// time, such as one restored from a backup): start again.
	st.Reloaded = true
	_, err = s.reloadLocked(ctx, false)
	return st, err
}

// LoadStats says how the engine was loaded.
type LoadStats struct {
	Records    int  // documents in the engine
	Reused     int  // stored embeddings of the current embedder used as they are
	Reembedded int  // records embedded at load (none stored, or another embedder's)
	Snapshot   bool // loaded from the snapshot the last Load saved (see snapshot.go)
}

// loadBatch is how many records are embedded at once while loading.
const loadBatch = 256

// maxReserve bounds what a load reserves up front from the store's count.
const maxReserve = 10_000_000

// load builds an engine from the store in one streaming pass. Stored vectors
// made by emb are used as they are; records without one, or with another
// embedder's, are embedded now, and with persist their new vectors are
// written back after the scan (the scan may hold the store's only
// connection). expect, the store's count, sizes the engine's arrays once
// (a hint: records written meanwhile are loaded all the same).
func load(ctx context.Context, db Store, emb embedding.Embedder, persist bool, expect int) (*index.Engine, map[string]featureVec, LoadStats, error) {
	eng := index.NewEngine(emb)
	eng.Reserve(min(max(expect, 0), maxReserve))
	feats := map[string]featureVec{}
	scan := func(fn func(store.IndexRecord) error) error { return db.EachIndexRecord(ctx, fn) }
	var w store.Index
	if persist {
		w = db
	}
	st, err := loadInto(ctx, w, emb, eng, scan, func(isrc string, f *AudioFeatures) {
		if fv, ok := newFeatureVec(f); ok {
			feats[isrc] = fv
		}
	})
	if err != nil {
		return nil, nil, st, err
	}
	return eng, feats, st, nil
}

// loadInto adds the records scan yields to eng in batches, as load does,
// calling feature for each record's audio features (eng may be nil: then
// nothing is loaded). The embeddings it makes are written to persist when it
// is not nil.
func loadInto(ctx context.Context, persist store.Index, emb embedding.Embedder, eng *index.Engine,
	scan func(func(store.IndexRecord) error) error, feature func(isrc string, f *AudioFeatures)) (LoadStats, error) {
	var st LoadStats
	var pending []index.Document
	var fresh []store.Embedding
	flush := func() error {
		var texts []string
		var at []int
		for i, d := range pending {
			if d.Vector == nil {
				texts = append(texts, index.EmbeddingText(d.Fields))
				at = append(at, i)
			}
		}
		if len(texts) > 0 {
			vecs, err := emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("music: embedding the index: %w", err)
			}
			if len(vecs) != len(texts) {
				return fmt.Errorf("music: embedder returned %d vectors for %d texts", len(vecs), len(texts))
			}
			for j, i := range at {
				pending[i].Vector = vecs[j]
				fresh = append(fresh, store.Embedding{ISRC: pending[i].ID, Vector: vecs[j], Embedder: emb.Name()})
			}
			st.Reembedded += len(texts)
		}
		if eng != nil {
			if err := eng.Add(ctx, pending); err != nil {
				return fmt.Errorf("music: loading the index: %w", err)
			}
		}
		st.Records += len(pending)
		pending = pending[:0]
		return nil
	}
	err := scan(func(r store.IndexRecord) error {
		d := index.Document{ID: r.ISRC, Fields: fields(r)}
		if r.Embedder == emb.Name() && len(r.Embedding) == emb.Dimensions() {
			d.Vector = r.Embedding
			st.Reused++
		}
		pending = append(pending, d)
		feature(r.ISRC, r.AudioFeatures)
		if len(pending) == loadBatch {
			return flush()
		}
		return nil
	})
	if err == nil && len(pending) > 0 {
		err = flush()
	}
	if err != nil {
		return st, err
	}
	if persist == nil {
		return st, nil
	}
	for start := 0; start < len(fresh); start += loadBatch {
		if _, err := persist.SetEmbeddings(ctx, fresh[start:min(start+loadBatch, len(fresh))]); err != nil {
			return st, err
		}
	}
	return st, nil
}

func fields(r store.IndexRecord) index.Fields {
	return index.Fields{Title: r.Title, Artist: r.Artist, Album: r.Album, Interpretation: r.Interpretation, Lyrics: r.Lyrics}
}

// AfterWrite is what a command that wrote records (`toolport index add`)
// runs instead of a [Service.Load]: with Weaviate, the Load (it brings
// Weaviate up to date and holds nothing in memory); with the embedded
// engine, only the write-back of [Service.Reembed], skipped when the store's
// counts show every record embedded by the current embedder, so that its
// memory is bounded by a batch and not by the index. The engine is not built:
// the snapshot the write left stale is rebuilt by whoever next needs the
// engine. It reports how many records it embedded.
func (s *Service) AfterWrite(ctx context.Context) (int, error) {
	if s.usesWeaviate() {
		st, err := s.Load(ctx)
		return st.Reembedded, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return 0, err
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return 0, err
	}
	st, err := db.IndexStatus(ctx)
	if err != nil {
		return 0, storeError("reading the index status", err)
	}
	current := 0
	for _, e := range st.Embedders {
		if e.Name == emb.Name() && e.Dims == emb.Dimensions() {
			current += e.Count
		}
	}
	if current == st.Total {
		return 0, nil
	}
	return s.Reembed(ctx)
}

// Reembed embeds the records whose stored embedding is missing or another
// embedder's with the current embedder and writes the vectors back, without
// loading the engine: the write-back step of [Service.Load] for commands that
// do not search (`toolport index add`). It reports how many it embedded.
func (s *Service) Reembed(ctx context.Context) (int, error) {
	if s.usesWeaviate() {
		n, _, err := s.SyncVectors(ctx)
		return n, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return 0, err
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return 0, err
	}
	scan := func(fn func(store.IndexRecord) error) error { return db.EachIndexRecord(ctx, fn) }
	st, err := loadInto(ctx, db, emb, nil, scan, func(string, *AudioFeatures) {})
	return st.Reembedded, err
}

// Tidal returns the TIDAL client, or why there is none (a malformed base
// URL). Missing credentials are reported by each call as AUTH_MISSING.
func (s *Service) Tidal() (*tidal.Client, error) { return s.tidalClient() }

// tidalClient returns the TIDAL client or why there is none.
func (s *Service) tidalClient() (*tidal.Client, error) {
	if s.tidalErr != nil {
		return nil, s.tidalErr
	}
	return s.tidal, nil
}

// featureVec holds the audio features search filters use; NaN is unknown.
type featureVec [numFeatures]float32

const (
	fAcousticness = iota
	fDanceability
	fEnergy
	fInstrumentalness
	fSpeechiness
	fValence
	fTempo
	numFeatures
)

func newFeatureVec(f *AudioFeatures) (featureVec, bool) {
	var v featureVec
	if f == nil {
		return v, false
	}
	for i, p := range featurePointers(f) {
		v[i] = float32(math.NaN())
		if p != nil {
			v[i] = float32(*p)
		}
	}
	return v, true
}

// featurePointers lists f's features in featureVec order.
func featurePointers(f *AudioFeatures) [numFeatures]*float64 {
	return [numFeatures]*float64{
		fAcousticness: f.Acousticness, fDanceability: f.Danceability, fEnergy: f.Energy,
		fInstrumentalness: f.Instrumentalness, fSpeechiness: f.Speechiness, fValence: f.Valence, fTempo: f.Tempo,
	}
}

// moodSlot is the featureVec slot of a feature index.MoodFit asks for by
// name (the mood features, not tempo), or -1.
func moodSlot(name string) int {
	if i := slices.Index(featureNames[:], name); i != fTempo {
		return i
	}
	return -1
}

// value is index.FeatureValue over the vector: the mood features it holds.
func (v featureVec) value(name string) (float64, bool) {
	i := moodSlot(name)
	if i < 0 || math.IsNaN(float64(v[i])) {
		return 0, false
	}
	return float64(v[i]), true
}

func (s *Service) setFeatures(isrc string, f *AudioFeatures) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.features == nil {
		s.features = map[string]featureVec{}
	}
	if fv, ok := newFeatureVec(f); ok {
		s.features[isrc] = fv
	} else {
		delete(s.features, isrc)
	}
}
