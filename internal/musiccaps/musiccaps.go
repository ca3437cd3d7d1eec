// Package musiccaps embeds the MusicCaps demo tracks, so that the music tools
// work on a fresh machine with no download: `toolport index add --demo`.
//
// The 5,521 tracks are derived from Google's MusicCaps and the AudioSet
// ontology (CC BY-SA 4.0). They are embedded gzip-compressed (about 0.5 MB
// instead of 2.4 MB of binary) and decompressed as they are read.
package musiccaps

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

//go:embed tracks.jsonl.gz
var tracksGz []byte

// Tracks is the number of tracks in the set.
const Tracks = 5521

// ISRCPrefix begins every demo track's ISRC (QZ, the registrant MCP, the
// year 23): how the doctor tells the demo from the user's own tracks.
const ISRCPrefix = "QZMCP23"

// Credit is the attribution to show wherever the data is shown.
const Credit = "MusicCaps (Agostinelli et al., 2023) and the AudioSet ontology, CC BY-SA 4.0"

// Open returns the tracks in Toolport's JSONL ingestion format, one track per
// line. The caller closes the reader.
func Open() (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tracksGz))
	if err != nil {
		return nil, fmt.Errorf("musiccaps: embedded tracks: %w", err)
	}
	return zr, nil
}
