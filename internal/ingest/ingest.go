// Package ingest builds the semantic track index from the user's library:
// for each track, its TIDAL metadata → lyrics (LRCLIB) → audio features
// (ReccoBeats) → an interpretation written by the configured chat model →
// an embedding → an upsert into the index. It is `toolport index build` and
// the POST /api/index/build job.
//
// Every upstream call goes through one gate per upstream: bounded
// concurrency, a token bucket ([Limiter], pluggable) and one retry rule
// (the tool contract's: network errors, timeouts, 429, 502/503/504, with
// Retry-After honoured). A build is resumable and idempotent: each stage's
// outcome is stored per track with the hash of its inputs (and of the
// method's version: the prompt, the model, the embedder) as soon as it
// finishes, so a killed run loses only the stages in flight, and a re-run
// calls upstreams only for stages that are missing, stale or failed.
// Misses (no lyrics, an instrumental, a track ReccoBeats does not know) are
// normal outcomes, stored and reported, not failures.
//
// # How a build runs
//
// `internal/ingest` is `toolport index build` and the `POST /api/index/build` job: per library track,
// lyrics (`lrclib`) and audio features (`reccobeats`) at once, then the interpretation (`llm`, a
// versioned prompt embedded from `internal/ingest/prompts`), then embedding and upsert. Each
// upstream has a gate (concurrency, a token bucket behind a small `Limiter` interface, one retry
// rule); each stage's outcome is stored in `index_build_stages` with a hash of its inputs as soon as
// it finishes, and the index's own content hash and embedder tell whether a record must be written
// again. A re-run therefore calls upstreams only for missing, failed or stale stages.
package ingest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

// Stage names, as stored and reported.
const (
	StageMetadata       = "metadata" // TIDAL, for ISRCs not in the library
	StageLyrics         = "lyrics"
	StageFeatures       = "features"
	StageInterpretation = "interpretation"
	StageEmbedding      = "embedding" // embedding and upsert into the index
)

// Stages lists the stages in pipeline order.
var Stages = []string{StageMetadata, StageLyrics, StageFeatures, StageInterpretation, StageEmbedding}

// Upstream names, the keys of [Config.Limits] and of Report.Calls.
const (
	UpstreamLRCLIB     = "lrclib"
	UpstreamReccoBeats = "reccobeats"
	UpstreamModel      = "model"
	UpstreamTIDAL      = "tidal"
	UpstreamEmbedder   = "embedder"
	UpstreamMusixmatch = "musixmatch"
)

// PromptVersion names the interpretation prompt; it is part of the
// interpretation stage's input hash, so changing the prompt (and its
// version) makes every interpretation stale.
const PromptVersion = "interpretation-v1"

//go:embed prompts/interpretation-v1.txt
var interpretationPrompt string

// Bounds.
const (
	maxLyricsBytes         = 100_000 // kept per track; longer lyrics are cut
	maxInterpretationBytes = 4000
	interpretationTokens   = 400
	stateChunk             = 200 // tracks whose states are read at once
	// DefaultWorkers is how many tracks are in the pipeline at once.
	DefaultWorkers = 16
)

// Store is what a build reads and writes: the library, the index and the
// stage states. *sqlstore.DB implements it.
type Store interface {
	ListTracks(ctx context.Context, opt store.ListOptions) (store.TrackPage, error)
	AddTracks(ctx context.Context, tracks []store.Track) (int, error)
	IndexStates(ctx context.Context, isrcs []string) (map[string]store.IndexState, error)
	UpsertIndex(ctx context.Context, recs []store.IndexRecord) error
	store.BuildStages
}

// Catalog finds tracks by ISRC (TIDAL's metadata): tracks named on the
// command line that are not in the library.
type Catalog interface {
	TracksByISRC(ctx context.Context, isrcs []string) ([]store.Track, error)
}

// Config is what a [Builder] runs against.
type Config struct {
	Store    Store
	Embedder embedding.Embedder
	Lyrics   *lrclib.Client
	Features *reccobeats.Client
	// Model writes interpretations; nil skips the stage (and the report
	// says so). ModelName identifies it in the stage's input hash.
	Model     llm.Provider
	ModelName string
	// NoModelReason says why Model is nil, for the report.
	NoModelReason string
	// Musixmatch, when set (a key is configured), is asked for the lyrics
	// LRCLIB does not have.
	Musixmatch *Musixmatch
	// Catalog resolves ISRCs not in the library; nil reports them.
	Catalog Catalog
	// Limits bound each upstream by name (Upstream*); missing ones get
	// [DefaultLimits].
	Limits map[string]Limit
	Retry  Retry
	// Workers is how many tracks are processed at once (DefaultWorkers
	// when 0).
	Workers int
	// FeatureBatchDelay is how long a track's audio-features ids wait for
	// other tracks' to share a call (DefaultFeatureBatchDelay when 0).
	FeatureBatchDelay time.Duration
	// RecordHash is the content hash of an index record (music.RecordHash),
	// compared with the stored one to skip unchanged records.
	RecordHash func(store.IndexRecord) string
}

// DefaultLimits are the per-upstream bounds when Config.Limits has none.
// LRCLIB publishes no limit and ReccoBeats none either (it answers 429 with
// Retry-After): both are kept polite.
func DefaultLimits() map[string]Limit {
	return map[string]Limit{
		UpstreamLRCLIB:     {Concurrency: 4, Rate: 10, Burst: 4, Timeout: 30 * time.Second},
		UpstreamReccoBeats: {Concurrency: 4, Rate: 10, Burst: 4, Timeout: 20 * time.Second},
		UpstreamModel:      {Concurrency: 4, Timeout: 2 * time.Minute},
		UpstreamTIDAL:      {Concurrency: 2, Timeout: 30 * time.Second},
		UpstreamEmbedder:   {Concurrency: 2, Timeout: time.Minute},
		UpstreamMusixmatch: {Concurrency: 2, Rate: 2, Burst: 2, Timeout: 20 * time.Second},
	}
}

// Builder runs index builds. It is safe for concurrent use, but a build
// holds no lock against another: callers run one at a time (the server's
// job does).
type Builder struct {
	cfg   Config
	gates map[string]*gate
	mu    sync.Mutex
	calls map[string]int
}

// New returns a builder for cfg.
func New(cfg Config) (*Builder, error) {
	if cfg.Store == nil || cfg.Embedder == nil || cfg.Lyrics == nil || cfg.Features == nil || cfg.RecordHash == nil {
		return nil, errors.New("ingest: Config.Store, Embedder, Lyrics, Features and RecordHash are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	b := &Builder{cfg: cfg, gates: map[string]*gate{}, calls: map[string]int{}}
	defaults := DefaultLimits()
	for _, name := range []string{UpstreamLRCLIB, UpstreamReccoBeats, UpstreamModel, UpstreamTIDAL, UpstreamEmbedder, UpstreamMusixmatch} {
		l, ok := cfg.Limits[name]
		if !ok {
			l = defaults[name]
		}
		b.gates[name] = newGate(name, l, cfg.Retry, b.countCall)
	}
	return b, nil
}

func (b *Builder) countCall(name string) {
	b.mu.Lock()
	b.calls[name]++
	b.mu.Unlock()
}

// Request says what to build.
type Request struct {
	// ISRCs limits the build to these tracks: from the library, else from
	// the catalogue (TIDAL). Empty: every library track.
	ISRCs []string
	// Tracks are tracks to add to the library and build (a library import
	// file); they replace ISRCs and the whole library.
	Tracks []store.Track
	// DryRun reports what would be done and calls no upstream and writes
	// nothing.
	DryRun bool
}

// StageCounts counts one stage's outcomes in a build.
type StageCounts struct {
	Done    int `json:"done"`    // ran and produced output
	None    int `json:"none"`    // ran, the upstream has nothing (a normal outcome)
	Cached  int `json:"cached"`  // fresh from an earlier run: no call
	Skipped int `json:"skipped"` // not run (no model; an earlier stage failed)
	Failed  int `json:"failed"`
	Planned int `json:"planned,omitempty"` // dry run: would run
}

// Failure is a track the build could not index.
type Failure struct {
	ISRC   string `json:"isrc"`
	Title  string `json:"title,omitempty"`
	Artist string `json:"artist,omitempty"`
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
}

// Tokens counts model tokens.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Report is what a build did. It is also the progress snapshot.
type Report struct {
	DryRun bool `json:"dryRun,omitempty"`
	// Total is the number of tracks the build considers; Processed of them
	// are finished (whatever the outcome).
	Total     int `json:"total"`
	Processed int `json:"processed"`
	// Indexed tracks were written to the index (new or changed);
	// Unchanged ones were already indexed with the same content and
	// embedder.
	Indexed   int `json:"indexed"`
	Unchanged int `json:"unchanged"`
	// NoLyrics: LRCLIB has no lyrics (a miss, or an instrumental, counted
	// also in Instrumental). NoFeatures: ReccoBeats has no features.
	NoLyrics     int `json:"noLyrics"`
	Instrumental int `json:"instrumental"`
	NoFeatures   int `json:"noFeatures"`
	// NoInterpretation says why interpretations were skipped ("" when a
	// model wrote them).
	NoInterpretation string                  `json:"noInterpretation,omitempty"`
	Stages           map[string]*StageCounts `json:"stages"`
	Failed           []Failure               `json:"failed"`
	// NoISRC counts library tracks without an ISRC: the index is keyed by
	// ISRC, so they are left out.
	NoISRC int `json:"noIsrc,omitempty"`
	// Tokens are the model tokens this build spent.
	Tokens Tokens `json:"tokens"`
	// Calls counts the upstream calls (attempts) made, by upstream.
	Calls      map[string]int `json:"calls"`
	DurationMs int64          `json:"durationMs"`
}

func newReport(dry bool) *Report {
	r := &Report{DryRun: dry, Stages: map[string]*StageCounts{}, Failed: []Failure{}, Calls: map[string]int{}}
	for _, s := range Stages {
		r.Stages[s] = &StageCounts{}
	}
	return r
}

func (r *Report) clone() Report {
	c := *r
	c.Stages = make(map[string]*StageCounts, len(r.Stages))
	for k, v := range r.Stages {
		sc := *v
		c.Stages[k] = &sc
	}
	c.Failed = append([]Failure{}, r.Failed...)
	c.Calls = make(map[string]int, len(r.Calls))
	for k, v := range r.Calls {
		c.Calls[k] = v
	}
	return c
}

// run is one build in progress.
type run struct {
	b        *Builder
	features *featureBatcher
	dry      bool
	mu       sync.Mutex
	rep      *Report
	start    time.Time
	progress func(Report)
}

func (r *run) update(fn func(rep *Report)) {
	r.mu.Lock()
	fn(r.rep)
	r.b.mu.Lock()
	for k, v := range r.b.calls {
		r.rep.Calls[k] = v
	}
	r.b.mu.Unlock()
	r.rep.DurationMs = time.Since(r.start).Milliseconds()
	snap := r.rep.clone()
	r.mu.Unlock()
	if r.progress != nil {
		r.progress(snap)
	}
}

func (r *run) stage(name string, fn func(c *StageCounts)) {
	r.update(func(rep *Report) { fn(rep.Stages[name]) })
}

func (r *run) fail(t store.Track, stage string, err error) {
	r.update(func(rep *Report) {
		rep.Stages[stage].Failed++
		rep.Failed = append(rep.Failed, Failure{ISRC: t.ISRC, Title: t.Title, Artist: t.Artist, Stage: stage, Reason: reason(err)})
	})
}

// Build runs a build and returns its report. progress, when set, gets a
// snapshot after every stage of every track (it must be quick). On ctx's
// end it stops, keeping every finished stage, and returns the report so far
// with ctx's error.
func (b *Builder) Build(ctx context.Context, req Request, progress func(Report)) (Report, error) {
	b.mu.Lock()
	clear(b.calls)
	b.mu.Unlock()
	r := &run{b: b, dry: req.DryRun, rep: newReport(req.DryRun), start: time.Now(), progress: progress}
	if b.cfg.Model == nil {
		r.rep.NoInterpretation = b.noModelReason()
	}
	tracks, err := b.collect(ctx, r, req)
	if err != nil {
		r.update(func(*Report) {})
		return r.final(), err
	}
	r.update(func(rep *Report) { rep.Total = len(tracks) })
	r.features = newFeatureBatcher(ctx, b.gates[UpstreamReccoBeats], b.cfg.Features, b.cfg.FeatureBatchDelay, len(tracks), b.cfg.Workers)

	jobs := make(chan trackWork)
	var wg sync.WaitGroup
	for range b.cfg.Workers {
		wg.Go(func() {
			for t := range jobs {
				r.track(ctx, t)
			}
		})
	}
	var loopErr error
	for start := 0; start < len(tracks) && loopErr == nil; start += stateChunk {
		chunk := tracks[start:min(start+stateChunk, len(tracks))]
		isrcs := make([]string, len(chunk))
		for i, t := range chunk {
			isrcs[i] = t.ISRC
		}
		states, err := b.cfg.Store.StageStates(ctx, isrcs)
		if err != nil {
			loopErr = err
			break
		}
		idx, err := b.cfg.Store.IndexStates(ctx, isrcs)
		if err != nil {
			loopErr = err
			break
		}
		for _, t := range chunk {
			select {
			case jobs <- trackWork{Track: t, states: states[t.ISRC], index: idx[t.ISRC]}:
			case <-ctx.Done():
				loopErr = ctx.Err()
			}
			if loopErr != nil {
				break
			}
		}
	}
	close(jobs)
	wg.Wait()
	r.features.wait()
	if loopErr == nil {
		loopErr = ctx.Err()
	}
	r.update(func(*Report) {})
	return r.final(), loopErr
}

func (r *run) final() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.SliceStable(r.rep.Failed, func(i, j int) bool { return r.rep.Failed[i].ISRC < r.rep.Failed[j].ISRC })
	return r.rep.clone()
}

func (b *Builder) noModelReason() string {
	if b.cfg.NoModelReason != "" {
		return b.cfg.NoModelReason
	}
	return "no model configured (set TOOLPORT_MODEL): interpretations skipped"
}

// collect returns the tracks to build, each with an ISRC, once.
func (b *Builder) collect(ctx context.Context, r *run, req Request) ([]store.Track, error) {
	var tracks []store.Track
	seen := map[string]bool{}
	add := func(t store.Track) {
		if t.ISRC == "" {
			r.rep.NoISRC++
			return
		}
		if !seen[t.ISRC] {
			seen[t.ISRC] = true
			tracks = append(tracks, t)
		}
	}
	if len(req.Tracks) > 0 {
		if !r.dry {
			if _, err := b.cfg.Store.AddTracks(ctx, req.Tracks); err != nil {
				return nil, fmt.Errorf("ingest: adding the tracks to the library: %w", err)
			}
		}
		for _, t := range req.Tracks {
			add(t)
		}
		return tracks, nil
	}
	want := map[string]bool{}
	for _, isrc := range req.ISRCs {
		want[isrc] = true
	}
	for offset := 0; ; {
		page, err := b.cfg.Store.ListTracks(ctx, store.ListOptions{Limit: store.MaxLimit, Offset: offset})
		if err != nil {
			return nil, fmt.Errorf("ingest: reading the library: %w", err)
		}
		for _, t := range page.Tracks {
			if len(want) == 0 || want[t.ISRC] {
				add(t)
			}
		}
		offset += len(page.Tracks)
		if len(page.Tracks) == 0 || offset >= page.Total {
			break
		}
	}
	// Oldest first: the library lists newest first, and a build that is
	// interrupted and resumed should move through it in a stable order.
	for i, j := 0, len(tracks)-1; i < j; i, j = i+1, j-1 {
		tracks[i], tracks[j] = tracks[j], tracks[i]
	}
	var missing []string
	for _, isrc := range req.ISRCs {
		if !seen[isrc] {
			missing = append(missing, isrc)
		}
	}
	if len(missing) == 0 {
		return tracks, nil
	}
	fail := func(isrc string, err error) {
		r.rep.Stages[StageMetadata].Failed++
		r.rep.Failed = append(r.rep.Failed, Failure{ISRC: isrc, Stage: StageMetadata, Reason: reason(err)})
	}
	switch {
	case r.dry:
		r.rep.Stages[StageMetadata].Planned += len(missing)
		return tracks, nil
	case b.cfg.Catalog == nil:
		for _, isrc := range missing {
			fail(isrc, errors.New("not in the library, and TIDAL is not configured to look it up (TIDAL_CLIENT_ID, TIDAL_CLIENT_SECRET)"))
		}
		return tracks, nil
	}
	var found []store.Track
	_, err := b.gates[UpstreamTIDAL].do(ctx, func(ctx context.Context) error {
		var err error
		found, err = b.cfg.Catalog.TracksByISRC(ctx, missing)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, isrc := range missing {
			fail(isrc, fmt.Errorf("TIDAL lookup: %w", err))
		}
		return tracks, nil
	}
	byISRC := map[string]store.Track{}
	for _, t := range found {
		if _, ok := byISRC[t.ISRC]; !ok {
			byISRC[t.ISRC] = t
		}
	}
	for _, isrc := range missing {
		t, ok := byISRC[isrc]
		if !ok {
			fail(isrc, errors.New("not in the library and not found on TIDAL"))
			continue
		}
		r.rep.Stages[StageMetadata].Done++
		add(t)
	}
	return tracks, nil
}

// trackWork is a track with what the store knew of it when the build
// reached it.
type trackWork struct {
	store.Track
	states map[string]store.StageState // stage → state; nil when none
	index  store.IndexState            // zero when not indexed
}

// hashOf hashes a stage's inputs.
func hashOf(parts ...any) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// reason is an error as a report line: one line, bounded, no URLs (the
// clients' errors carry none).
func reason(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
