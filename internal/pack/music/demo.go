package music

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/toolport/toolport/internal/musiccaps"
)

// DemoStats is what a [LoadDemo] did: the ingestion's counts, and the older records
// it embedded again with the current embedder.
type DemoStats struct {
	IngestStats
	Reembedded int `json:"reembedded"`
}

// DemoOptions tunes [LoadDemo].
type DemoOptions struct {
	IngestOptions
	// Limit, when > 0, loads only the first Limit tracks: for tests, which
	// cannot wait for the whole set under the race detector. Users always
	// get every track (0).
	Limit int
}

// demoCount is the number of tracks a [LoadDemo] with limit reads.
func demoCount(limit int) int {
	if limit > 0 && limit < musiccaps.Tracks {
		return limit
	}
	return musiccaps.Tracks
}

// LoadDemo ingests the demo tracks (package musiccaps) into svc's index, then embeds again the
// older records another embedder left (what the next search would
// otherwise do mid-request). `toolport index add --demo` and the server's
// POST /api/index/demo both load through it. Loading again is cheap:
// unchanged records are neither embedded nor written.
func LoadDemo(ctx context.Context, svc *Service, opt DemoOptions) (DemoStats, error) {
	r, err := musiccaps.Open()
	if err != nil {
		return DemoStats{}, err
	}
	defer r.Close()
	var in io.Reader = r
	if opt.Limit > 0 {
		in = firstLines(r, opt.Limit)
	}
	var st DemoStats
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

// DemoIndex is the demo set for the chat server's POST /api/index/demo
// (server.DemoIndex) over a service's index.
type DemoIndex struct {
	Service *Service
	// Limit is [DemoOptions.Limit]: 0 (every track) except in tests.
	Limit int
}

// Tracks counts the records in the index.
func (x DemoIndex) Tracks(ctx context.Context) (int, error) {
	db, err := x.Service.Store(ctx)
	if err != nil {
		return 0, err
	}
	st, err := db.IndexStatus(ctx)
	if err != nil {
		return 0, fmt.Errorf("music: index status: %w", err)
	}
	return st.Total, nil
}

// Demo is the number of tracks a load reads.
func (x DemoIndex) Demo() int { return demoCount(x.Limit) }

// Load loads the demo tracks, calling progress with the tracks read after
// each batch, and reports how many were new.
func (x DemoIndex) Load(ctx context.Context, progress func(read int)) (int, error) {
	st, err := LoadDemo(ctx, x.Service, DemoOptions{Limit: x.Limit, IngestOptions: IngestOptions{
		Progress: func(p IngestProgress) { progress(p.Lines) },
	}})
	return st.Added, err
}
