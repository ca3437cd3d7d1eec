package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
	"github.com/toolport/toolport/tidal"
)

const indexBuildAbout = "Fills the semantic index from your library: for every library track not indexed yet (or the\n" +
	"ISRCs given, or the tracks of a library file), its TIDAL metadata, lyrics from LRCLIB, audio\n" +
	"features from ReccoBeats, an interpretation written by the configured chat model, an embedding,\n" +
	"and an upsert into the index.\n\n" +
	"Each stage's outcome is saved per track as soon as it finishes, with a hash of its inputs: an\n" +
	"interrupted build keeps every finished stage, and running it again calls upstreams only for\n" +
	"what is missing, failed or stale (changed metadata, lyrics, prompt version, model or embedder).\n" +
	"No lyrics, instrumental tracks and tracks ReccoBeats does not know are normal outcomes.\n" +
	"Without TOOLPORT_MODEL the interpretation step is skipped, and the report says so.\n\n" +
	"Configuration: LRCLIB_BASE_URL, RECCOBEATS_BASE_URL (defaults: the public APIs), MUSIXMATCH_API_KEY\n" +
	"(optional: asked for the lyrics LRCLIB lacks; MUSIXMATCH_BASE_URL), TOOLPORT_MODEL\n" +
	"and its keys, TIDAL_CLIENT_ID/SECRET (to look up ISRCs not in the library), TOOLPORT_EMBEDDINGS_URL,\n" +
	"TOOLPORT_DATABASE_URL.\n\n" +
	"Exit status: 0 when every track was processed and none failed, 1 when some failed or the build\n" +
	"was interrupted (run it again to finish), 2 on a usage error."

func runIndexBuild(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "index build", "toolport index build [flags] [ISRC...]", indexBuildAbout)
	libFile := fs.String("library", "", "build the tracks of this library import file (JSONL or CSV), adding them to the library")
	format := fs.String("format", "", "format of --library: jsonl or csv (default: from the file name)")
	dry := fs.Bool("dry-run", false, "report what would be done: no upstream call, nothing written")
	asJSON := fs.Bool("json", false, "print the final report as JSON")
	quiet := fs.Bool("quiet", false, "no progress output")
	workers := fs.Int("workers", ingest.DefaultWorkers, "tracks in the pipeline at once")
	conc := fs.Int("concurrency", 4, "calls in flight at once to each of LRCLIB, ReccoBeats and the model")
	rateFlag := fs.Float64("rate", 10, "calls per second to each of LRCLIB and ReccoBeats (token bucket; 0: unpaced)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *workers < 1 || *workers > 256 || *conc < 1 || *conc > 64 || *rateFlag < 0 || (*libFile != "" && len(pos) > 0) {
		return usageExit(fs)
	}
	var isrcs []string
	for _, p := range pos {
		n, err := music.NormalizeISRC(p)
		if err != nil {
			return usageError(fmt.Errorf("%q: %w", p, err))
		}
		isrcs = append(isrcs, n)
	}
	var tracks []store.Track
	if *libFile != "" {
		if tracks, err = readLibraryTracks(env, *libFile, *format); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	b, modelWarning, err := newIndexBuilder(ctx, env, m, ingest.Config{Workers: *workers, Limits: cliLimits(*conc, *rateFlag)})
	if err != nil {
		return err
	}
	if modelWarning != "" && !*quiet {
		fmt.Fprintf(env.Stderr, "toolport index build: %s\n", modelWarning)
	}
	prog := newBuildProgress(env, *quiet)
	rep, err := b.Build(ctx, ingest.Request{ISRCs: isrcs, Tracks: tracks, DryRun: *dry}, prog.update)
	prog.finish()
	if *asJSON {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
	} else {
		printBuildReport(env.Stdout, rep)
	}
	if err == nil && !*dry {
		// Save the loaded index for the next process, as index add does.
		if _, lerr := m.svc.Load(ctx); lerr != nil {
			return fmt.Errorf("loading the index: %w", lerr)
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted; finished stages are saved, run the same command again to complete")
	case err != nil:
		return err
	case len(rep.Failed) > 0:
		return exitCode(ExitFailure)
	}
	return nil
}

// cliLimits are the per-upstream bounds the flags set.
func cliLimits(conc int, perSecond float64) map[string]ingest.Limit {
	l := ingest.DefaultLimits()
	for _, name := range []string{ingest.UpstreamLRCLIB, ingest.UpstreamReccoBeats, ingest.UpstreamModel} {
		v := l[name]
		v.Concurrency = conc
		if name != ingest.UpstreamModel {
			v.Rate, v.Burst = perSecond, conc
		}
		l[name] = v
	}
	return l
}

// readLibraryTracks reads the tracks of a library import file; bad lines
// are reported and skipped.
func readLibraryTracks(env *Env, name, format string) ([]store.Track, error) {
	if format == "" {
		format = "jsonl"
		if strings.EqualFold(filepath.Ext(name), ".csv") {
			format = "csv"
		}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tracks []store.Track
	bad := 0
	err = music.ReadLibraryItems(io.LimitReader(f, 256<<20), format, func(line int, it music.LibraryItem, err error) error {
		switch {
		case err != nil:
			bad++
			if bad <= maxReportedLines {
				fmt.Fprintf(env.Stderr, "%s:%d: %v (skipped)\n", filepath.Base(name), line, err)
			}
		case it.Type == "track":
			tracks = append(tracks, it.Track)
		}
		return nil
	})
	if err != nil {
		return nil, usageError(err)
	}
	if len(tracks) == 0 {
		return nil, fmt.Errorf("%s holds no valid track", name)
	}
	return tracks, nil
}

// newIndexBuilder wires the pipeline from the configuration: the store and
// embedder of m, the LRCLIB and ReccoBeats clients, the model and TIDAL.
// It returns a warning when no model is configured. cfg's Workers and
// Limits are kept.
func newIndexBuilder(ctx context.Context, env *Env, m *musicCommand, cfg ingest.Config) (*ingest.Builder, string, error) {
	hc := httpclient.NewClient(0)
	lc, err := lrclib.NewClient(hc, lrclib.WithBaseURL(env.Config.Env("LRCLIB_BASE_URL")))
	if err != nil {
		return nil, "", err
	}
	rc, err := reccobeats.NewClient(hc, reccobeats.WithBaseURL(env.Config.Env("RECCOBEATS_BASE_URL")))
	if err != nil {
		return nil, "", err
	}
	emb, err := m.svc.Embedder(ctx)
	if err != nil {
		return nil, "", err
	}
	cfg.Store, cfg.Embedder, cfg.Lyrics, cfg.Features, cfg.RecordHash = m.db, emb, lc, rc, music.RecordHash
	var warning string
	provider, err := llm.FromConfig(env.Config)
	var le *llm.Error
	switch {
	case err == nil:
		spec, _ := llm.ParseModel(env.Config.Env("TOOLPORT_MODEL"))
		cfg.Model, cfg.ModelName = provider, spec.Provider+":"+spec.Model
	case errors.As(err, &le) && le.Code == llm.CodeNotConfigured:
		cfg.NoModelReason = "no model configured (set TOOLPORT_MODEL): the interpretation step is skipped"
		warning = cfg.NoModelReason
	default:
		return nil, "", err
	}
	if key := env.Config.Secret(ingest.MusixmatchKeyEnv, "lyrics.musixmatch.api_key"); key != "" {
		if cfg.Musixmatch, err = ingest.NewMusixmatch(hc, env.Config.Env(ingest.MusixmatchBaseURLEnv), key); err != nil {
			return nil, "", err
		}
	}
	if tc, err := m.svc.Tidal(); err == nil && tc != nil && tc.Configured() {
		cfg.Catalog = tidalCatalog{tc}
	}
	b, err := ingest.New(cfg)
	return b, warning, err
}

// tidalCatalog looks tracks up on TIDAL by ISRC.
type tidalCatalog struct{ c *tidal.Client }

func (t tidalCatalog) TracksByISRC(ctx context.Context, isrcs []string) ([]store.Track, error) {
	found, err := t.c.TracksByISRC(ctx, isrcs)
	if err != nil {
		return nil, err
	}
	out := make([]store.Track, 0, len(found))
	for _, f := range found {
		out = append(out, music.TrackFromTidal(f))
	}
	return out, nil
}

// buildProgress shows a build's progress: a bar with per-stage counts on a
// terminal, a plain line at most every few seconds otherwise.
type buildProgress struct {
	env   *Env
	quiet bool
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	last  time.Time
	rep   ingest.Report
	lines bool
}

func newBuildProgress(env *Env, quiet bool) *buildProgress {
	p := &buildProgress{env: env, quiet: quiet}
	p.lines = !quiet && !isTerminalWriter(env.Stderr)
	return p
}

const plainProgressEvery = 2 * time.Second

func (p *buildProgress) update(rep ingest.Report) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rep = rep
	if p.lines {
		if time.Since(p.last) >= plainProgressEvery && rep.Total > 0 {
			p.last = time.Now()
			fmt.Fprintf(p.env.Stderr, "index build: %d/%d tracks · %s\n", rep.Processed, rep.Total, stageLine(rep))
		}
		return
	}
	if p.bar == nil {
		if rep.Total == 0 {
			return
		}
		p.bar = progressbar.NewOptions64(int64(rep.Total),
			progressbar.OptionSetWriter(p.env.Stderr),
			progressbar.OptionSetItsString("tracks"),
			progressbar.OptionShowIts(),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	p.bar.Describe(stageLine(rep))
	_ = p.bar.Set64(int64(rep.Processed))
}

func (p *buildProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// stageLine is the per-stage counts in one short line.
func stageLine(rep ingest.Report) string {
	var parts []string
	for _, name := range []string{ingest.StageLyrics, ingest.StageFeatures, ingest.StageInterpretation, ingest.StageEmbedding} {
		c := rep.Stages[name]
		if c == nil {
			continue
		}
		n := c.Done + c.None + c.Cached
		if rep.DryRun {
			n = c.Planned
		}
		s := fmt.Sprintf("%s %d", name, n)
		if c.Failed > 0 {
			s += fmt.Sprintf(" (%d failed)", c.Failed)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// printBuildReport prints the final report.
func printBuildReport(w io.Writer, rep ingest.Report) {
	if rep.DryRun {
		fmt.Fprintf(w, "dry run: %d tracks; nothing was called or written\n", rep.Total)
		fmt.Fprintf(w, "  already indexed and fresh: %d\n", rep.Unchanged)
		for _, name := range ingest.Stages {
			c := rep.Stages[name]
			fmt.Fprintf(w, "  %-15s would run for %d, fresh for %d\n", name, c.Planned, c.Cached)
		}
	} else {
		fmt.Fprintf(w, "%d tracks: %d indexed, %d unchanged, %d failed in %s\n", rep.Total, rep.Indexed, rep.Unchanged,
			failedTracks(rep), (time.Duration(rep.DurationMs) * time.Millisecond).Round(time.Millisecond))
		fmt.Fprintf(w, "  no lyrics: %d (%d instrumental) · no audio features: %d\n", rep.NoLyrics, rep.Instrumental, rep.NoFeatures)
		for _, name := range ingest.Stages {
			c := rep.Stages[name]
			fmt.Fprintf(w, "  %-15s %d done, %d none, %d from earlier runs, %d skipped, %d failed\n", name, c.Done, c.None, c.Cached, c.Skipped, c.Failed)
		}
		fmt.Fprintf(w, "  model tokens: %d in, %d out\n", rep.Tokens.Input, rep.Tokens.Output)
		var calls []string
		for k, v := range rep.Calls {
			calls = append(calls, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(calls)
		if len(calls) > 0 {
			fmt.Fprintf(w, "  upstream calls: %s\n", strings.Join(calls, ", "))
		}
	}
	if rep.NoInterpretation != "" {
		fmt.Fprintf(w, "  interpretation: %s\n", rep.NoInterpretation)
	}
	if rep.NoISRC > 0 {
		fmt.Fprintf(w, "  %d library tracks have no ISRC and are left out (the index is keyed by ISRC)\n", rep.NoISRC)
	}
	for i, f := range rep.Failed {
		if i == maxReportedLines {
			fmt.Fprintf(w, "  … %d more failures (--json lists them all)\n", len(rep.Failed)-i)
			break
		}
		fmt.Fprintf(w, "  failed %s %q by %s at %s: %s\n", f.ISRC, f.Title, f.Artist, f.Stage, f.Reason)
	}
}

func failedTracks(rep ingest.Report) int {
	seen := map[string]bool{}
	for _, f := range rep.Failed {
		seen[f.ISRC] = true
	}
	return len(seen)
}

// serveIndexBuilder is the builder behind POST /api/index/build, or nil
// (with a warning) when it cannot be set up: the rest of the server works
// without it.
func serveIndexBuilder(ctx context.Context, env *Env, svc *music.Service, db *sqlstore.DB, shared *sharedStore) server.IndexBuilder {
	b, _, err := newIndexBuilder(ctx, env, &musicCommand{svc: svc, db: db, store: shared}, ingest.Config{})
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: warning: index builds are not available: %v\n", err)
		return nil
	}
	return b
}
