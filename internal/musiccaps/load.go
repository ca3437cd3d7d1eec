package musiccaps

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/toolport/toolport/internal/pack/music"
)

// Stats is what a [Load] did: the ingestion's counts, and the older records
// it embedded again with the current embedder.
type Stats struct {
	music.IngestStats
	Reembedded int `json:"reembedded"`
}

// LoadOptions tunes [Load].
type LoadOptions struct {
	music.IngestOptions
	// Limit, when > 0, loads only the first Limit tracks: for tests, which
	// cannot wait for the whole set under the race detector. Users always
	// get every track (0).
	Limit int
}

// Count is the number of tracks a [Load] with limit reads.
func Count(limit int) int {
	if limit > 0 && limit < Tracks {
		return limit
	}
	return Tracks
}

// Load ingests the demo tracks into svc's index, then embeds again the
// older records another embedder left (what the next search would
// otherwise do mid-request). `toolport index add --demo` and the server's
// POST /api/index/demo both load through it. Loading again is cheap:
// unchanged records are neither embedded nor written.
func Load(ctx context.Context, svc *music.Service, opt LoadOptions) (Stats, error) {
	r, err := Open()
	if err != nil {
		return Stats{}, err
	}
	defer r.Close()
	var in io.Reader = r
	if opt.Limit > 0 {
		in = firstLines(r, opt.Limit)
	}
	var st Stats
	st.IngestStats, err = svc.Ingest(ctx, in, opt.IngestOptions)
	if err != nil {
		return st, err
	}
	if st.Reembedded, err = svc.AfterWrite(ctx); err != nil {
		return st, fmt.Errorf("embedding older records again: %w", err)
	}
	return st, nil
}

// firstLines is r cut after n lines. The embedded set has short lines,
// so a whole line is held at a time.
func firstLines(r io.Reader, n int) io.Reader {
	return &lineLimit{br: bufio.NewReader(r), left: n}
}

type lineLimit struct {
	br      *bufio.Reader
	left    int
	pending []byte
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		if l.left <= 0 {
			return 0, io.EOF
		}
		line, err := l.br.ReadBytes('\n')
		if len(line) == 0 {
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		l.left--
		l.pending = line
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// Index is the demo set for the chat server's POST /api/index/demo
// (server.DemoIndex) over a service's index.
type Index struct {
	Service *music.Service
	// Limit is [LoadOptions.Limit]: 0 (every track) except in tests.
	Limit int
}

// Tracks counts the records in the index.
func (x Index) Tracks(ctx context.Context) (int, error) {
	db, err := x.Service.Store(ctx)
	if err != nil {
		return 0, err
	}
	st, err := db.IndexStatus(ctx)
	if err != nil {
		return 0, fmt.Errorf("musiccaps: index status: %w", err)
	}
	return st.Total, nil
}

// Demo is the number of tracks a load reads.
func (x Index) Demo() int { return Count(x.Limit) }

// Load loads the demo tracks, calling progress with the tracks read after
// each batch, and reports how many were new.
func (x Index) Load(ctx context.Context, progress func(read int)) (int, error) {
	st, err := Load(ctx, x.Service, LoadOptions{Limit: x.Limit, IngestOptions: music.IngestOptions{
		Progress: func(p music.IngestProgress) { progress(p.Lines) },
	}})
	return st.Added, err
}
