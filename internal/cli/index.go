package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/toolport/toolport/internal/musiccaps"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/store"
)

const indexUsage = "toolport index add FILE.jsonl | add --demo | build | status"

func runIndex(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n"+
			"Builds and inspects the semantic track index that semanticSearch and batchMetadata read.\n\n"+
			"  toolport index add [--batch N] [--quiet] [--snapshot] FILE.jsonl   ingest tracks (IndexedTrackResult per line)\n"+
			"  toolport index add --demo                             load the 5,521 built-in MusicCaps demo tracks\n"+
			"  toolport index build [--dry-run] [--library FILE] [ISRC...]  fetch lyrics, features, interpretations; embed\n"+
			"  toolport index status [--json]                        counts, embedder and dimensions\n\n"+
			"The store is TOOLPORT_DATABASE_URL or database.url in the credentials file (a file path,\n"+
			"sqlite: URL or postgres:// URL), by default $XDG_DATA_HOME/toolport/toolport.db. The embedder is the offline default unless\n"+
			"TOOLPORT_EMBEDDINGS_URL (and _MODEL, _API_KEY) name an OpenAI-compatible endpoint.\n", indexUsage)
		if len(args) == 0 {
			return exitCode(ExitUsage)
		}
		return nil
	}
	switch args[0] {
	case "add":
		return inSubcommand("index add", runIndexAdd(ctx, env, args[1:]))
	case "build":
		return inSubcommand("index build", runIndexBuild(ctx, env, args[1:]))
	case "status":
		return inSubcommand("index status", runIndexStatus(ctx, env, args[1:]))
	}
	return usageError(fmt.Errorf("unknown subcommand %q (want add, build or status)", args[0]))
}

// maxReportedLines bounds the bad lines printed one by one.
const maxReportedLines = 50

func runIndexAdd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "index add", "toolport index add [--batch N] [--quiet] [--snapshot] FILE.jsonl | --demo",
		"Ingests tracks into the semantic index: one JSON object per line in the IndexedTrackResult shape\n"+
			"(isrc, title, artist required; album, artworkUrl, duration, lyrics, interpretation, audioFeatures\n"+
			"optional). FILE may be - for stdin.\n\n"+
			"Each line is validated on its own: a bad line is reported with its line number and skipped.\n"+
			"Records are upserted by ISRC and embedded in batches, one transaction per batch: an interrupted\n"+
			"run keeps every finished batch, and running it again completes it. Unchanged records are not\n"+
			"embedded again. Exit status: 0 when the file was read to the end (skipped lines are reported),\n"+
			"1 when the run stopped early or no line of the file was a valid track, 2 on a usage error.\n\n"+
			"Its memory is bounded by a batch, not by the index: the search engine is not built, and the\n"+
			"snapshot that lets a new process search at once is left stale until the first search (or\n"+
			"toolport serve) builds and saves it. --snapshot builds it here instead.\n\n"+
			"--demo loads the 5,521 MusicCaps tracks built into the binary (no download), so that\n"+
			"semanticSearch works out of the box. Data: "+musiccaps.Credit+".")
	demo := fs.Bool("demo", false, "load the built-in MusicCaps demo tracks instead of a file")
	batch := fs.Int("batch", music.DefaultIngestBatch, "records per embedding call and per transaction")
	quiet := fs.Bool("quiet", false, "no progress bar (it is off anyway when stderr is not a terminal)")
	snapshot := fs.Bool("snapshot", false, "then build the search engine from the whole index and save its snapshot\n"+
		"(else the first search does; its memory grows with the index)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if (len(pos) != 1) == !*demo || *batch < 1 || *batch > 100_000 {
		return usageExit(fs)
	}
	showBar := !*quiet && isTerminalWriter(env.Stderr)
	var (
		name  string
		in    io.Reader = env.Stdin
		total int64     = -1 // tracks expected, for the progress bar; -1 when unknown
	)
	switch {
	case *demo:
		name, total = "musiccaps-demo", musiccaps.Tracks
	case pos[0] != "-":
		name = pos[0]
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if showBar {
			// The file is read twice only when a bar shows the count.
			if n, err := countLines(f); err == nil {
				total = n
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
		}
		in = f
	default:
		name = "-"
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	svc := m.svc

	var bar *progressbar.ProgressBar
	if showBar {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetDescription("indexing"),
			progressbar.OptionSetItsString("tracks"),
			progressbar.OptionShowIts(),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	reported := 0
	label := filepath.Base(name)
	start := time.Now()
	opts := music.IngestOptions{
		BatchSize: *batch,
		Progress: func(p music.IngestProgress) {
			if bar != nil {
				_ = bar.Set64(int64(p.Lines))
			}
		},
		LineError: func(line int, err error) {
			reported++
			if reported > maxReportedLines {
				return
			}
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintf(env.Stderr, "%s:%d: %v (skipped)\n", label, line, err)
		},
	}
	// The demo loads through the function the server's POST /api/index/demo
	// uses; a file is ingested, then older records embedded again, the same
	// way.
	var st music.DemoStats
	if *demo {
		st, err = music.LoadDemo(ctx, svc, music.DemoOptions{IngestOptions: opts})
	} else {
		st.IngestStats, err = svc.Ingest(ctx, in, opts)
		if err == nil && (st.Lines == 0 || st.Skipped < st.Lines) {
			if st.Reembedded, err = svc.AfterWrite(ctx); err != nil {
				err = fmt.Errorf("embedding older records again: %w", err)
			}
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if reported > maxReportedLines {
		fmt.Fprintf(env.Stderr, "%s: %d more bad lines not shown\n", label, reported-maxReportedLines)
	}
	fmt.Fprintf(env.Stdout, "%s: %d added, %d updated, %d unchanged, %d skipped (%d lines) in %s\n",
		label, st.Added, st.Updated, st.Unchanged, st.Skipped, st.Lines, time.Since(start).Round(time.Millisecond))
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted; finished batches are saved, run the same command again to complete")
		}
		return err
	}
	if st.Lines > 0 && st.Skipped == st.Lines {
		return fmt.Errorf("no line of %s is a valid track (IndexedTrackResult: isrc, title and artist required)", label)
	}
	// Records stored with another embedder's vectors (the embedder was
	// changed) were embedded again above, not in the middle of a search. The
	// engine is not built: its memory grows with the index, and the snapshot
	// this write left stale is rebuilt by whoever next needs the engine (the
	// first search, serve at start), or here with --snapshot.
	if st.Reembedded > 0 {
		fmt.Fprintf(env.Stdout, "%d older records embedded again with the current embedder\n", st.Reembedded)
	}
	if *snapshot {
		return buildSnapshot(ctx, env, m)
	}
	return nil
}

// buildSnapshot loads the engine from the whole store and saves its
// snapshot now, so that the first search need not; it holds the whole
// engine, so its memory grows with the index (SECURITY.md).
func buildSnapshot(ctx context.Context, env *Env, m *musicCommand) error {
	start := time.Now()
	fmt.Fprintf(env.Stderr, "building the search engine and its snapshot from the whole index…\n")
	ls, err := m.svc.Load(ctx)
	if err != nil {
		return fmt.Errorf("building the snapshot: %w", err)
	}
	how := "built from the records and saved"
	if ls.Snapshot {
		how = "already up to date"
	}
	fmt.Fprintf(env.Stdout, "snapshot: %d tracks, %s in %s\n", ls.Records, how, time.Since(start).Round(time.Millisecond))
	return nil
}

// countLines counts the non-empty lines of a regular file, so that progress
// can be shown in tracks; anything else (a pipe, a device) reports an error.
func countLines(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, errors.New("not a regular file")
	}
	buf := make([]byte, 64<<10)
	var n int64
	prev := byte('\n')
	for {
		k, err := f.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' && prev != '\n' {
				n++
			}
			prev = c
		}
		if err == io.EOF {
			if prev != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

type indexStatus struct {
	Database string `json:"database"`
	store.IndexStatus
	// ConfiguredEmbedder is the embedder searches and ingestion use now.
	ConfiguredEmbedder string `json:"configuredEmbedder"`
	ConfiguredDims     int    `json:"configuredDims"`
	// Stale counts records embedded by another embedder (or not at all):
	// they are embedded again by the next `toolport index add` or when
	// `toolport serve` starts.
	Stale int `json:"stale"`
}

func runIndexStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "index status", "toolport index status [--json]",
		"Reports the semantic index: records, embedded records, the embedder and dimensions stored and\n"+
			"configured, and the database in use.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageExit(fs)
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	svc, db := m.svc, m.db
	st, err := db.IndexStatus(ctx)
	if err != nil {
		return err
	}
	out := indexStatus{Database: describeDSN(m.store.dsn), IndexStatus: st}
	emb, embErr := svc.Embedder(ctx)
	if embErr == nil {
		out.ConfiguredEmbedder, out.ConfiguredDims = emb.Name(), emb.Dimensions()
		out.Stale = st.Total
		for _, e := range st.Embedders {
			if e.Name == emb.Name() && e.Dims == emb.Dimensions() {
				out.Stale -= e.Count
			}
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		w := env.Stdout
		fmt.Fprintf(w, "database:  %s (%s)\n", out.Database, db.Engine())
		fmt.Fprintf(w, "records:   %d\n", st.Total)
		fmt.Fprintf(w, "embedded:  %d\n", st.Embedded)
		for _, e := range st.Embedders {
			fmt.Fprintf(w, "  %-30s %5d dims  %d records\n", e.Name, e.Dims, e.Count)
		}
		if embErr == nil {
			fmt.Fprintf(w, "embedder:  %s (%d dims)\n", out.ConfiguredEmbedder, out.ConfiguredDims)
			if out.Stale > 0 {
				fmt.Fprintf(w, "stale:     %d records will be embedded again by the next 'toolport index add' or when 'toolport serve' starts\n", out.Stale)
			}
		}
	}
	if embErr != nil {
		return fmt.Errorf("embedder: %w", embErr)
	}
	return nil
}

// describeDSN names the database without any password.
func describeDSN(dsn string) string {
	if dsn == "" {
		return "(default location)"
	}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		u.RawQuery = ""
		return u.String()
	}
	return strings.TrimPrefix(dsn, "sqlite:")
}

// isTerminalWriter reports whether w is a terminal (for progress bars).
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
