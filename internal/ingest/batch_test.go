package ingest_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/ingest/ingesttest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

func syntheticTracks(n int) []store.Track {
	tracks := make([]store.Track, n)
	for i := range tracks {
		tracks[i] = ingesttest.SyntheticTrack(i)
	}
	return tracks
}

// buildWithin runs a build that must end within limit: a batch that nobody
// asks for would hang it.
func (h *harness) buildWithin(t *testing.T, limit time.Duration, req ingest.Request) ingest.Report {
	t.Helper()
	b, err := ingest.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rep, err := b.Build(ctx, req, nil)
	if err != nil {
		t.Fatalf("Build: %v (report %+v)", err, rep)
	}
	return rep
}

// checkOwnFeatures checks that each track's stored features stage names the
// track's own ReccoBeats row: the batch answer was fanned back by id.
func checkOwnFeatures(t *testing.T, h *harness, tracks []store.Track, skip map[string]bool) {
	t.Helper()
	var isrcs []string
	for _, tr := range tracks {
		isrcs = append(isrcs, tr.ISRC)
	}
	states, err := h.db.StageStates(context.Background(), isrcs)
	if err != nil {
		t.Fatal(err)
	}
	for _, isrc := range isrcs {
		if skip[isrc] {
			continue
		}
		st := states[isrc][ingest.StageFeatures]
		var out struct {
			SpotifyID string          `json:"spotifyId"`
			Features  json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal([]byte(st.Output), &out); err != nil || st.Status != store.StageDone || len(out.Features) == 0 {
			t.Errorf("%s: features stage %s %q (%v)", isrc, st.Status, st.Output, err)
			continue
		}
		if got := h.up.ISRCOfID(out.SpotifyID); got != isrc {
			t.Errorf("%s got the features of %s (Spotify id %s)", isrc, got, out.SpotifyID)
		}
	}
}

// unpaced keeps the default concurrency bounds without the token buckets,
// so that tests of many tracks run fast.
func unpaced() map[string]ingest.Limit {
	limits := ingest.DefaultLimits()
	for k, l := range limits {
		l.Rate = 0
		limits[k] = l
	}
	return limits
}

func batchSizes(batches [][]string) []int {
	var n []int
	for _, b := range batches {
		n = append(n, len(b))
	}
	slices.Sort(n)
	return n
}

// TestFeaturesAreBatched: the ids that concurrent tracks resolve share
// /v1/audio-features calls of at most 40 ids, asked for when full, when
// every worker waits, when the delay has passed, or at the end of the build.
func TestFeaturesAreBatched(t *testing.T) {
	tests := []struct {
		name    string
		tracks  int
		workers int
		delay   time.Duration
		// stallSearch holds the first ReccoBeats search this long, so
		// that its track joins late.
		stallSearch time.Duration
		want        []int // batch sizes, sorted
		maxBatch    int   // instead of want: every batch at most this
	}{
		{name: "one batch at the end of the build", tracks: 12, workers: 16, delay: time.Hour, want: []int{12}},
		{name: "a full batch of 40, the rest at the end", tracks: 45, workers: 64, delay: time.Hour, want: []int{5, 40}},
		{name: "asked for when every worker waits", tracks: 12, workers: 4, delay: time.Hour, maxBatch: 4},
		{name: "asked for after the delay, a late track in a batch of its own", tracks: 3, workers: 4,
			delay: 50 * time.Millisecond, stallSearch: 2 * time.Second, want: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, storetest.SQLite, nil)
			h.cfg.Workers, h.cfg.FeatureBatchDelay, h.cfg.Limits = tt.workers, tt.delay, unpaced()
			if tt.stallSearch > 0 {
				h.up.Fail(ingesttest.ReccoSearch, ingesttest.Fault{Stall: tt.stallSearch})
			}
			tracks := syntheticTracks(tt.tracks)
			rep := h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: tracks})
			if len(rep.Failed) != 0 {
				t.Fatalf("failures: %+v", rep.Failed)
			}
			batches := h.up.FeatureBatches()
			sizes := batchSizes(batches)
			switch {
			case tt.want != nil && !slices.Equal(sizes, tt.want):
				t.Errorf("batch sizes %v, want %v", sizes, tt.want)
			case tt.maxBatch > 0 && (len(sizes) == 0 || sizes[len(sizes)-1] > tt.maxBatch):
				t.Errorf("batch sizes %v, want each at most %d", sizes, tt.maxBatch)
			}
			// Every id is asked once, and each call counts once.
			var asked []string
			for _, b := range batches {
				asked = append(asked, b...)
			}
			wantAsked := tt.tracks
			if len(asked) != wantAsked || len(slices.Compact(slices.Sorted(slices.Values(asked)))) != wantAsked {
				t.Errorf("%d ids asked (%d distinct), want each of %d once", len(asked), len(slices.Compact(slices.Sorted(slices.Values(asked)))), wantAsked)
			}
			if got, want := rep.Calls[ingest.UpstreamReccoBeats], tt.tracks+len(batches); got != want {
				t.Errorf("reported ReccoBeats calls %d, want %d searches + %d batches", got, tt.tracks, len(batches))
			}
			checkOwnFeatures(t, h, tracks, nil)
		})
	}
}

// TestFeatureBatchOutcomes: a track left out of a batch's answer has no
// features (not a failure); a batch that fails, after the retry rule,
// fails only its own tracks, and a re-run asks again for those only.
func TestFeatureBatchOutcomes(t *testing.T) {
	t.Run("a track left out of the answer has no features", func(t *testing.T) {
		h := newHarness(t, storetest.SQLite, nil)
		h.cfg.Workers, h.cfg.FeatureBatchDelay, h.cfg.Limits = 8, time.Hour, unpaced()
		tracks := syntheticTracks(6)
		h.up.OmitFeatures(tracks[3].ISRC)
		rep := h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: tracks})
		if len(rep.Failed) != 0 || rep.Indexed != 6 || rep.NoFeatures != 1 {
			t.Fatalf("report: %+v", rep)
		}
		checkStage(t, rep, ingest.StageFeatures, counts{done: 5, none: 1})
		if n := len(h.up.FeatureBatches()); n != 1 {
			t.Errorf("%d features calls, want 1", n)
		}
		checkOwnFeatures(t, h, tracks, map[string]bool{tracks[3].ISRC: true})
		states, _ := h.db.StageStates(context.Background(), []string{tracks[3].ISRC})
		if st := states[tracks[3].ISRC][ingest.StageFeatures]; st.Status != store.StageNone || !strings.Contains(st.Detail, "no audio features") {
			t.Errorf("the left-out track's stage: %+v", st)
		}
	})

	t.Run("a transient failure retries the batch with the same ids", func(t *testing.T) {
		h := newHarness(t, storetest.SQLite, nil)
		h.cfg.Workers, h.cfg.FeatureBatchDelay, h.cfg.Limits = 8, time.Hour, unpaced()
		h.up.Fail(ingesttest.ReccoAudioFeatures, ingesttest.Fault{Status: 503, Body: "busy"})
		tracks := syntheticTracks(5)
		rep := h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: tracks})
		if len(rep.Failed) != 0 || rep.Indexed != 5 {
			t.Fatalf("report: %+v", rep)
		}
		b := h.up.FeatureBatches()
		if len(b) != 2 || len(b[0]) != 5 || !slices.Equal(b[0], b[1]) {
			t.Errorf("features calls %v, want one batch of 5 sent twice", b)
		}
		checkOwnFeatures(t, h, tracks, nil)
	})

	t.Run("a failed batch fails only its tracks", func(t *testing.T) {
		h := newHarness(t, storetest.SQLite, nil)
		h.cfg.Workers, h.cfg.FeatureBatchDelay, h.cfg.Limits = 64, time.Hour, unpaced()
		h.up.Fail(ingesttest.ReccoAudioFeatures, ingesttest.Fault{Status: 500, Body: `{"error":"boom"}`})
		tracks := syntheticTracks(45) // a batch of 40 and one of 5
		rep := h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: tracks})
		batches := h.up.FeatureBatches()
		if len(batches) != 2 {
			t.Fatalf("features calls %v, want 2", batches)
		}
		var wantFailed []string
		for _, id := range batches[0] { // the first to arrive got the 500
			wantFailed = append(wantFailed, h.up.ISRCOfID(id))
		}
		slices.Sort(wantFailed)
		var failed []string
		for _, f := range rep.Failed {
			if f.Stage != ingest.StageFeatures || !strings.Contains(f.Reason, "500") {
				t.Errorf("failure %+v, want a features failure with the 500", f)
			}
			failed = append(failed, f.ISRC)
		}
		if !slices.Equal(failed, wantFailed) || rep.Indexed != 45-len(wantFailed) {
			t.Fatalf("failed %v, indexed %d; want exactly the first batch's %d tracks failed", failed, rep.Indexed, len(wantFailed))
		}

		// The re-run asks features again for the failed tracks only, and
		// searches for them only.
		searches := h.up.Calls(ingesttest.ReccoSearch)
		rep = h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: tracks})
		if len(rep.Failed) != 0 || rep.Indexed != len(wantFailed) || rep.Unchanged != 45-len(wantFailed) {
			t.Fatalf("re-run: %+v", rep)
		}
		again := h.up.FeatureBatches()[2:]
		var asked []string
		for _, b := range again {
			asked = append(asked, b...)
		}
		for i, id := range asked {
			asked[i] = h.up.ISRCOfID(id)
		}
		slices.Sort(asked)
		if !slices.Equal(asked, wantFailed) || h.up.Calls(ingesttest.ReccoSearch)-searches != len(wantFailed) {
			t.Errorf("re-run asked features for %v, want %v", asked, wantFailed)
		}
		checkOwnFeatures(t, h, tracks, nil)
	})
}

// TestFeatureBatchesKeepTheBounds: batch calls go through the same gate as
// the searches: its concurrency bound and its token bucket.
func TestFeatureBatchesKeepTheBounds(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	h.up = ingesttest.New(t, 20*time.Millisecond)
	lc, _ := lrclib.NewClient(nil, lrclib.WithBaseURL(h.up.LRCLIB.URL))
	rc, _ := reccobeats.NewClient(nil, reccobeats.WithBaseURL(h.up.ReccoBeats.URL))
	h.cfg.Lyrics, h.cfg.Features, h.cfg.Workers, h.cfg.FeatureBatchDelay = lc, rc, 8, 10*time.Millisecond
	lim := &countingLimiter{}
	h.cfg.Limits = unpaced()
	h.cfg.Limits[ingest.UpstreamReccoBeats] = ingest.Limit{Concurrency: 2, Limiter: lim}
	rep := h.buildWithin(t, 30*time.Second, ingest.Request{Tracks: syntheticTracks(24)})
	if rep.Indexed != 24 {
		t.Fatalf("report: %+v", rep)
	}
	if got := h.up.MaxInFlight("reccobeats"); got > 2 {
		t.Errorf("ReccoBeats had %d requests in flight, above the bound 2", got)
	}
	calls := h.up.Calls(ingesttest.ReccoSearch) + h.up.Calls(ingesttest.ReccoAudioFeatures)
	if lim.n != calls || rep.Calls[ingest.UpstreamReccoBeats] != calls {
		t.Errorf("limiter tokens %d, reported calls %d, requests %d: want one token per request", lim.n, rep.Calls[ingest.UpstreamReccoBeats], calls)
	}
	if f := h.up.Calls(ingesttest.ReccoAudioFeatures); f >= 24 {
		t.Errorf("%d features calls for 24 tracks: not batched", f)
	}
}
