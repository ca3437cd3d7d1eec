package music

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolport/toolport/internal/store"
)

// timings are the per-call durations each tool's span carries.
type timings struct {
	tidal, library, index time.Duration
}

// record puts the timings on the current span (the registry's tool span).
func (t timings) record(ctx context.Context) {
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.Int64("tidalApiDurationMs", t.tidal.Milliseconds()),
		attribute.Int64("libraryCheckDurationMs", t.library.Milliseconds()),
		attribute.Int64("indexCheckDurationMs", t.index.Milliseconds()),
	)
}

// enrich sets inLibrary and isIndexed on tracks and inLibrary on albums with
// one library lookup (its ISRC, track-id and album statements) and one index
// lookup, whatever their number, all run at the same time. Tracks match the library by Tidal id or ISRC, the index
// by ISRC.
func enrich(ctx context.Context, db Store, tracks []TrackResult, albums []AlbumResult, tm *timings) error {
	isrcs := make([]string, 0, len(tracks))
	ids := make([]string, 0, len(tracks))
	for _, t := range tracks {
		if t.ISRC != "" {
			isrcs = append(isrcs, strings.ToUpper(t.ISRC))
		}
		if t.TidalID != "" {
			ids = append(ids, t.TidalID)
		}
	}
	albumIDs := make([]string, 0, len(albums))
	for _, a := range albums {
		albumIDs = append(albumIDs, a.TidalID)
	}

	// The lookups are independent statements: run them at once. Each
	// costs a few hundred microseconds of SQLite CPU for 100 keys, so
	// running them side by side roughly halves the wall time on two cores.
	var (
		wg                     sync.WaitGroup
		byISRC, byID           store.InLibrary
		inAlbums               map[string]bool
		states                 map[string]store.IndexState
		isrcErr, idErr, albErr error
		idxErr                 error
		isrcDur, idDur, albDur time.Duration
		idxDur                 time.Duration
	)
	run := func(dur *time.Duration, fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			fn()
			*dur = time.Since(start)
		}()
	}
	if len(isrcs) > 0 {
		run(&idxDur, func() { states, idxErr = db.IndexStates(ctx, isrcs) })
		run(&isrcDur, func() { byISRC, isrcErr = db.LibraryStatus(ctx, isrcs, nil) })
	}
	if len(ids) > 0 {
		run(&idDur, func() { byID, idErr = db.LibraryStatus(ctx, nil, ids) })
	}
	if len(albumIDs) > 0 {
		run(&albDur, func() { inAlbums, albErr = db.AlbumsInLibrary(ctx, albumIDs) })
	}
	wg.Wait()
	tm.library += max(isrcDur, idDur, albDur)
	tm.index += idxDur
	if err := errors.Join(isrcErr, idErr, albErr); err != nil {
		return storeError("checking the library", err)
	}
	if idxErr != nil {
		return storeError("checking the index", idxErr)
	}
	lib := store.InLibrary{ISRCs: byISRC.ISRCs, TidalIDs: byID.TidalIDs}
	for i := range tracks {
		t := &tracks[i]
		isrc := strings.ToUpper(t.ISRC)
		t.InLibrary = lib.Track(isrc, t.TidalID)
		_, t.IsIndexed = states[isrc]
		if isrc == "" {
			t.IsIndexed = false
		}
	}
	for i := range albums {
		albums[i].InLibrary = inAlbums[albums[i].TidalID]
	}
	return nil
}
