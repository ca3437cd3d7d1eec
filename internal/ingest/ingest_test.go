package ingest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/ingest/ingesttest"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

var (
	embOnce sync.Once
	emb     embedding.Embedder
	embErr  error
)

func embedder(t testing.TB) embedding.Embedder {
	t.Helper()
	embOnce.Do(func() { emb, embErr = embedding.NewDefault() })
	if embErr != nil {
		t.Fatal(embErr)
	}
	return emb
}

func openStore(t testing.TB, engine string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), storetest.DSN(t, engine))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// interpreter is a scripted model that interprets any track.
func interpreter() *llmtest.Scripted {
	return llmtest.NewScripted(llmtest.ScriptedTurn{Match: "Title:", Events: []llmtest.ScriptedEvent{
		llmtest.ScriptText("A melancholic, defiant song about wanting to live; suits a quiet night."),
	}, Usage: llm.Usage{InputTokens: 120, OutputTokens: 30}})
}

type harness struct {
	db  *sqlstore.DB
	up  *ingesttest.Upstreams
	cfg ingest.Config
}

func newHarness(t *testing.T, engine string, model llm.Provider) *harness {
	t.Helper()
	h := &harness{db: openStore(t, engine), up: ingesttest.New(t, 0)}
	lc, err := lrclib.NewClient(nil, lrclib.WithBaseURL(h.up.LRCLIB.URL))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := reccobeats.NewClient(nil, reccobeats.WithBaseURL(h.up.ReccoBeats.URL))
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = ingest.Config{Store: h.db, Embedder: embedder(t), Lyrics: lc, Features: rc, RecordHash: music.RecordHash,
		Retry: ingest.Retry{BaseDelay: time.Millisecond, MaxDelay: time.Second, DisableJitter: true}, Workers: 4}
	if model != nil {
		h.cfg.Model, h.cfg.ModelName = model, "scripted:test"
	}
	if _, err := h.db.AddTracks(context.Background(), ingesttest.Library()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) build(t *testing.T, req ingest.Request) ingest.Report {
	t.Helper()
	b, err := ingest.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := b.Build(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return rep
}

type counts struct{ done, none, cached, skipped, failed int }

func checkStage(t *testing.T, rep ingest.Report, stage string, want counts) {
	t.Helper()
	c := rep.Stages[stage]
	if got := (counts{c.Done, c.None, c.Cached, c.Skipped, c.Failed}); got != want {
		t.Errorf("%s: done/none/cached/skipped/failed = %+v, want %+v", stage, got, want)
	}
}

func TestBuildRunsEveryStageThenNothing(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			model := interpreter()
			h := newHarness(t, engine, model)
			h.cfg.FeatureBatchDelay = time.Hour // one features batch, at the end
			rep := h.build(t, ingest.Request{})
			if rep.Total != 4 || rep.Processed != 4 || rep.Indexed != 4 || rep.Unchanged != 0 || len(rep.Failed) != 0 {
				t.Fatalf("report: %+v", rep)
			}
			// Lyrics: the recorded track found; its instrumental version
			// found by search (instrumental); the sonatas have none.
			checkStage(t, rep, ingest.StageLyrics, counts{done: 1, none: 3})
			checkStage(t, rep, ingest.StageFeatures, counts{done: 2, none: 2})
			checkStage(t, rep, ingest.StageInterpretation, counts{done: 4})
			checkStage(t, rep, ingest.StageEmbedding, counts{done: 4})
			if rep.NoLyrics != 3 || rep.Instrumental != 1 || rep.NoFeatures != 2 || rep.NoInterpretation != "" {
				t.Errorf("misses: %+v", rep)
			}
			if rep.Tokens != (ingest.Tokens{Input: 480, Output: 120}) {
				t.Errorf("tokens = %+v, want 4 × (120, 30)", rep.Tokens)
			}
			// Get for all 4, search after the 3 misses; ReccoBeats search for
			// all 4, features for the 2 found in one call.
			for key, want := range map[string]int{ingesttest.LRCLIBGet: 4, ingesttest.LRCLIBSearch: 3,
				ingesttest.ReccoSearch: 4, ingesttest.ReccoAudioFeatures: 1} {
				if got := h.up.Calls(key); got != want {
					t.Errorf("%s: %d calls, want %d", key, got, want)
				}
			}
			if rep.Calls[ingest.UpstreamLRCLIB] != 7 || rep.Calls[ingest.UpstreamReccoBeats] != 5 || rep.Calls[ingest.UpstreamModel] != 4 {
				t.Errorf("reported calls: %v", rep.Calls)
			}
			// The prompt carried the lyrics of the recorded track.
			var sawLyrics bool
			for _, req := range model.Requests() {
				if strings.Contains(req.Messages[0].Text(), "Title: I Want to Live\n") && strings.Contains(req.Messages[0].Text(), "Lyrics:\n") {
					sawLyrics = true
				}
				if req.System == "" || req.MaxTokens == 0 {
					t.Errorf("model request without the prompt or a token bound: %+v", req)
				}
			}
			if !sawLyrics {
				t.Error("no interpretation request carried the recorded lyrics")
			}

			recs, err := h.db.GetIndex(context.Background(), []string{"QZES72300001", "QZES72300002", "JPY772509123", "JPZ242453714"})
			if err != nil || len(recs) != 4 {
				t.Fatalf("index: %d records, %v", len(recs), err)
			}
			byISRC := map[string]store.IndexRecord{}
			for _, r := range recs {
				byISRC[r.ISRC] = r
				if r.Embedder != embedder(t).Name() || len(r.Embedding) != embedder(t).Dimensions() || r.Interpretation == "" {
					t.Errorf("%s: embedder %q, %d dims, interpretation %q", r.ISRC, r.Embedder, len(r.Embedding), r.Interpretation)
				}
			}
			if l := byISRC["QZES72300001"].Lyrics; !strings.Contains(l, "I want to live") || strings.Contains(l, "[00:") {
				t.Errorf("lyrics of the recorded track: %.200q", l)
			}
			if byISRC["QZES72300002"].Lyrics != "" {
				t.Error("the instrumental track got lyrics")
			}
			f := byISRC["JPY772509123"].AudioFeatures
			if f == nil || f.Tempo == nil || *f.Tempo != 101.96 || f.Key == nil || *f.Key != 0 || f.Mode == nil || *f.Mode != 1 {
				t.Errorf("audio features of Quiet Sonata: %+v", f)
			}
			if byISRC["QZES72300001"].AudioFeatures != nil {
				t.Error("a track ReccoBeats does not know got audio features")
			}

			// A second build finds everything fresh: no upstream call.
			before := h.up.Total()
			rep = h.build(t, ingest.Request{})
			if h.up.Total() != before || len(model.Requests()) != 4 {
				t.Errorf("the re-run called upstreams: %d requests, model %d", h.up.Total()-before, len(model.Requests()))
			}
			if rep.Unchanged != 4 || rep.Indexed != 0 || rep.Tokens != (ingest.Tokens{}) {
				t.Errorf("re-run: %+v", rep)
			}
			checkStage(t, rep, ingest.StageLyrics, counts{cached: 4})
			checkStage(t, rep, ingest.StageInterpretation, counts{cached: 4})
			if rep.NoLyrics != 3 || rep.NoFeatures != 2 {
				t.Errorf("a re-run reports the misses too: %+v", rep)
			}
		})
	}
}

func TestChangingTheModelRedoesOnlyInterpretations(t *testing.T) {
	h := newHarness(t, storetest.SQLite, interpreter())
	h.build(t, ingest.Request{})
	before := h.up.Total()
	h.cfg.ModelName = "scripted:other"
	h.cfg.Model = interpreter()
	rep := h.build(t, ingest.Request{})
	if h.up.Total() != before {
		t.Errorf("lyrics or features fetched again: %d requests", h.up.Total()-before)
	}
	checkStage(t, rep, ingest.StageInterpretation, counts{done: 4})
	checkStage(t, rep, ingest.StageLyrics, counts{cached: 4})
	// The scripted model writes the same text, so the records' content is
	// the same: the embedding stage finds them unchanged.
	checkStage(t, rep, ingest.StageEmbedding, counts{cached: 4})
}

func TestNoModelSkipsInterpretationAndSaysSo(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	h.cfg.NoModelReason = "no model configured (set TOOLPORT_MODEL)"
	rep := h.build(t, ingest.Request{})
	if rep.Indexed != 4 || rep.NoInterpretation != h.cfg.NoModelReason {
		t.Fatalf("report: %+v", rep)
	}
	checkStage(t, rep, ingest.StageInterpretation, counts{skipped: 4})
	// Configuring a model later interprets every track, and only that.
	h.cfg.Model, h.cfg.ModelName = interpreter(), "scripted:test"
	before := h.up.Total()
	rep = h.build(t, ingest.Request{})
	checkStage(t, rep, ingest.StageInterpretation, counts{done: 4})
	checkStage(t, rep, ingest.StageEmbedding, counts{done: 4})
	if h.up.Total() != before || rep.Indexed != 4 {
		t.Errorf("after configuring a model: %d upstream requests, %+v", h.up.Total()-before, rep)
	}
}

func TestDryRunCallsNothingAndWritesNothing(t *testing.T) {
	model := interpreter()
	h := newHarness(t, storetest.SQLite, model)
	rep := h.build(t, ingest.Request{DryRun: true, ISRCs: []string{"QZES72300001", "ZZZZZ9999999"}})
	if h.up.Total() != 0 || len(model.Requests()) != 0 {
		t.Fatalf("dry run called upstreams: %d, model %d", h.up.Total(), len(model.Requests()))
	}
	if !rep.DryRun || rep.Total != 1 || rep.Stages[ingest.StageLyrics].Planned != 1 || rep.Stages[ingest.StageEmbedding].Planned != 1 ||
		rep.Stages[ingest.StageMetadata].Planned != 1 {
		t.Errorf("dry run report: %+v", rep)
	}
	states, _ := h.db.StageStates(context.Background(), []string{"QZES72300001"})
	st, _ := h.db.IndexStatus(context.Background())
	if len(states) != 0 || st.Total != 0 {
		t.Errorf("dry run wrote: %v, %+v", states, st)
	}
	// After a real build, a dry run finds nothing to do.
	h.build(t, ingest.Request{})
	rep = h.build(t, ingest.Request{DryRun: true})
	if rep.Unchanged != 4 || rep.Stages[ingest.StageLyrics].Planned != 0 || rep.Stages[ingest.StageEmbedding].Planned != 0 {
		t.Errorf("dry run after a build: %+v", rep)
	}
}

func TestISRCsOutsideTheLibrary(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	rep := h.build(t, ingest.Request{ISRCs: []string{"JPY772509123", "ZZZZZ9999999"}})
	if rep.Total != 1 || rep.Indexed != 1 || len(rep.Failed) != 1 || rep.Failed[0].ISRC != "ZZZZZ9999999" ||
		rep.Failed[0].Stage != ingest.StageMetadata || !strings.Contains(rep.Failed[0].Reason, "TIDAL is not configured") {
		t.Errorf("report: %+v", rep)
	}
	h.cfg.Catalog = catalog{"ZZZZZ9999999": {ISRC: "ZZZZZ9999999", Title: "Synthetic Track 2", Artist: "Synthetic Artist", Duration: 200}}
	rep = h.build(t, ingest.Request{ISRCs: []string{"ZZZZZ9999999"}})
	if rep.Total != 1 || rep.Indexed != 1 || rep.Stages[ingest.StageMetadata].Done != 1 || len(rep.Failed) != 0 {
		t.Errorf("with a catalogue: %+v", rep)
	}
}

type catalog map[string]store.Track

func (c catalog) TracksByISRC(_ context.Context, isrcs []string) ([]store.Track, error) {
	var out []store.Track
	for _, i := range isrcs {
		if t, ok := c[i]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

func TestLibraryFileTracksAreAddedAndBuilt(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	tracks := []store.Track{ingesttest.SyntheticTrack(4), ingesttest.SyntheticTrack(5), {TidalID: "123", Title: "No ISRC", Artist: "X"}}
	rep := h.build(t, ingest.Request{Tracks: tracks})
	if rep.Total != 2 || rep.Indexed != 2 || rep.NoISRC != 1 {
		t.Errorf("report: %+v", rep)
	}
	// Even synthetic tracks have CONSTRUCTED lyrics, odd ones none; both
	// have CONSTRUCTED features.
	checkStage(t, rep, ingest.StageLyrics, counts{done: 1, none: 1})
	checkStage(t, rep, ingest.StageFeatures, counts{done: 2})
	page, _ := h.db.ListTracks(context.Background(), store.ListOptions{})
	if page.Total != 7 {
		t.Errorf("library holds %d tracks, want the 4 and the file's 3", page.Total)
	}
}

// TestUpstreamFailures drives each stage through the failures upstreams
// have: the transient ones are retried by the one rule and succeed, the
// others fail the track with a reason, and a re-run redoes only them.
func TestUpstreamFailures(t *testing.T) {
	const recorded = "QZES72300001"
	tests := []struct {
		name     string
		key      string
		faults   []ingesttest.Fault
		timeout  time.Duration
		stage    string
		failed   bool   // the track fails
		reason   string // in its reason
		attempts int    // requests to key for the recorded track in the first run
	}{
		{name: "429 with Retry-After, then found", key: ingesttest.LRCLIBGet,
			faults:   []ingesttest.Fault{{Status: 429, RetryAfter: "0", Body: `{"message":"slow down","name":"TooManyRequests","statusCode":429}`}},
			attempts: 2},
		{name: "503 twice, then found", key: ingesttest.LRCLIBGet,
			faults: []ingesttest.Fault{{Status: 503, Body: "upstream down"}, {Status: 503}}, attempts: 3},
		{name: "stalls past the attempt timeout, then found", key: ingesttest.LRCLIBGet, timeout: 200 * time.Millisecond,
			faults: []ingesttest.Fault{{Stall: 2 * time.Second}}, attempts: 2},
		{name: "500 is not transient", key: ingesttest.LRCLIBGet, stage: ingest.StageLyrics, failed: true,
			faults:   []ingesttest.Fault{{Status: 500, Body: `{"message":"boom","name":"UnknownError","statusCode":500}`}},
			reason:   "HTTP 500 UnknownError: boom",
			attempts: 1},
		{name: "malformed body", key: ingesttest.LRCLIBGet, stage: ingest.StageLyrics, failed: true,
			faults: []ingesttest.Fault{{Status: 200, Body: `{"id": 1, "trackName": `}}, reason: "malformed response", attempts: 1},
		{name: "503 every time", key: ingesttest.LRCLIBGet, stage: ingest.StageLyrics, failed: true,
			faults: []ingesttest.Fault{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}}, reason: "HTTP 503", attempts: 4},
		{name: "Retry-After longer than allowed", key: ingesttest.ReccoSearch, stage: ingest.StageFeatures, failed: true,
			faults: []ingesttest.Fault{{Status: 429, RetryAfter: "3600"}}, reason: "asks to wait 1h0m0s", attempts: 1},
		{name: "ReccoBeats 404 is a miss, not a failure", key: ingesttest.ReccoSearch,
			faults: []ingesttest.Fault{{Status: 404, Body: `{"error":"Not Found"}`}}, attempts: 1},
		{name: "ReccoBeats malformed search page", key: ingesttest.ReccoSearch, stage: ingest.StageFeatures, failed: true,
			faults: []ingesttest.Fault{{Status: 200, Body: `{"page":0}`}}, reason: "malformed response", attempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, storetest.SQLite, nil)
			if tt.timeout > 0 {
				h.cfg.Limits = ingest.DefaultLimits()
				for k, l := range h.cfg.Limits {
					l.Timeout = tt.timeout
					h.cfg.Limits[k] = l
				}
			}
			h.up.Fail(tt.key, tt.faults...)
			rep := h.build(t, ingest.Request{ISRCs: []string{recorded}})
			if got := h.up.Calls(tt.key); got != tt.attempts {
				t.Errorf("%s: %d requests, want %d", tt.key, got, tt.attempts)
			}
			if !tt.failed {
				if rep.Indexed != 1 || len(rep.Failed) != 0 {
					t.Fatalf("report: %+v", rep)
				}
				return
			}
			if rep.Indexed != 0 || len(rep.Failed) != 1 || rep.Failed[0].Stage != tt.stage || !strings.Contains(rep.Failed[0].Reason, tt.reason) {
				t.Fatalf("report: indexed %d, failed %+v; want a %s failure with %q", rep.Indexed, rep.Failed, tt.stage, tt.reason)
			}
			checkStage(t, rep, ingest.StageEmbedding, counts{skipped: 1})
			// The re-run redoes the failed stage only.
			lyr, feat := h.up.Calls(ingesttest.LRCLIBGet), h.up.Calls(ingesttest.ReccoSearch)
			rep = h.build(t, ingest.Request{ISRCs: []string{recorded}})
			if rep.Indexed != 1 || len(rep.Failed) != 0 {
				t.Fatalf("re-run: %+v", rep)
			}
			dl, df := h.up.Calls(ingesttest.LRCLIBGet)-lyr, h.up.Calls(ingesttest.ReccoSearch)-feat
			if tt.stage == ingest.StageLyrics && (dl != 1 || df != 0) || tt.stage == ingest.StageFeatures && (dl != 0 || df != 1) {
				t.Errorf("re-run after a %s failure: %d LRCLIB gets, %d ReccoBeats searches", tt.stage, dl, df)
			}
		})
	}
}

func TestModelFailureIsRetriedThenReported(t *testing.T) {
	overloaded := &llm.Error{Code: llm.CodeOverloaded, Status: 503, Message: "overloaded", Retryable: true}
	bad := &llm.Error{Code: llm.CodeInvalidRequest, Status: 400, Message: "the model server rejected the request (HTTP 400)"}
	model := llmtest.NewScripted(
		llmtest.ScriptedTurn{Err: overloaded},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Joyful.")}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}},
		llmtest.ScriptedTurn{Err: bad},
	)
	h := newHarness(t, storetest.SQLite, model)
	h.cfg.Workers = 1
	rep := h.build(t, ingest.Request{ISRCs: []string{"QZES72300001", "JPY772509123"}})
	if rep.Indexed != 1 || len(rep.Failed) != 1 || rep.Failed[0].Stage != ingest.StageInterpretation ||
		!strings.Contains(rep.Failed[0].Reason, "HTTP 400") || rep.Tokens != (ingest.Tokens{Input: 10, Output: 2}) {
		t.Errorf("report: %+v", rep)
	}
	if rep.Calls[ingest.UpstreamModel] != 3 {
		t.Errorf("model calls: %d, want 3 (one retried)", rep.Calls[ingest.UpstreamModel])
	}
}

func TestCancelKeepsFinishedStages(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	h.up.Fail(ingesttest.LRCLIBGet, ingesttest.Fault{Stall: 10 * time.Second})
	b, err := ingest.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	rep, err := b.Build(ctx, ingest.Request{}, func(r ingest.Report) {
		if r.Processed >= 1 {
			once.Do(cancel)
		}
	})
	if !errors.Is(err, context.Canceled) || rep.Processed >= 4 {
		t.Fatalf("Build: %v, %+v", err, rep)
	}
	before := h.up.Calls(ingesttest.LRCLIBGet)
	rep = h.build(t, ingest.Request{})
	if rep.Indexed+rep.Unchanged != 4 || len(rep.Failed) != 0 {
		t.Fatalf("re-run: %+v", rep)
	}
	if got := h.up.Calls(ingesttest.LRCLIBGet) - before; got >= 4 {
		t.Errorf("the re-run asked LRCLIB for %d tracks: finished ones should be kept", got)
	}
}

// countingLimiter is a pluggable Limiter (as a shared Redis bucket would
// be) that counts the tokens taken.
type countingLimiter struct {
	mu sync.Mutex
	n  int
}

func (l *countingLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return ctx.Err()
}

func TestUpstreamBoundsHold(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	h.up = ingesttest.New(t, 20*time.Millisecond)
	lc, _ := lrclib.NewClient(nil, lrclib.WithBaseURL(h.up.LRCLIB.URL))
	rc, _ := reccobeats.NewClient(nil, reccobeats.WithBaseURL(h.up.ReccoBeats.URL))
	h.cfg.Lyrics, h.cfg.Features, h.cfg.Workers = lc, rc, 8
	lim := &countingLimiter{}
	h.cfg.Limits = ingest.DefaultLimits()
	h.cfg.Limits[ingest.UpstreamLRCLIB] = ingest.Limit{Concurrency: 2, Limiter: lim}
	h.cfg.Limits[ingest.UpstreamReccoBeats] = ingest.Limit{Concurrency: 3}
	var tracks []store.Track
	for i := range 12 {
		tracks = append(tracks, ingesttest.SyntheticTrack(i))
	}
	rep := h.build(t, ingest.Request{Tracks: tracks})
	if rep.Indexed != 12 {
		t.Fatalf("report: %+v", rep)
	}
	if got := h.up.MaxInFlight("lrclib"); got != 2 {
		t.Errorf("LRCLIB had %d requests in flight at most, want the bound, 2", got)
	}
	if got := h.up.MaxInFlight("reccobeats"); got != 3 {
		t.Errorf("ReccoBeats had %d requests in flight at most, want the bound, 3", got)
	}
	// One token per LRCLIB call: 12 gets and a search for each of the 6
	// odd tracks (no CONSTRUCTED lyrics).
	if lim.n != 18 || rep.Calls[ingest.UpstreamLRCLIB] != 18 {
		t.Errorf("limiter tokens %d, LRCLIB calls %d; want 18 each", lim.n, rep.Calls[ingest.UpstreamLRCLIB])
	}
}
