package tidal

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolport/toolport/tool"
)

// isrcChunk is how many ISRCs go in one request. The API documents no cap;
// 20 keeps URLs short and matches what community clients use.
const isrcChunk = 20

// TracksByISRC looks tracks up by ISRC, in batches of isrcChunk. ISRCs are
// trimmed, upper-cased, stripped of hyphens and de-duplicated; empty ones are
// ignored. An ISRC TIDAL does not know is simply absent from the result, and
// tracks for ISRCs that were not asked for are dropped. A single ISRC may
// yield several tracks (the same recording on several releases).
func (c *Client) TracksByISRC(ctx context.Context, isrcs []string) ([]Track, error) {
	want := make([]string, 0, len(isrcs))
	wanted := make(map[string]bool, len(isrcs))
	for _, s := range isrcs {
		s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
		if s == "" || wanted[s] {
			continue
		}
		wanted[s] = true
		want = append(want, s)
	}
	out := []Track{}
	for start := 0; start < len(want); start += isrcChunk {
		chunk := want[start:min(start+isrcChunk, len(want))]
		doc, err := c.get(ctx, "/tracks", url.Values{
			"filter[isrc]": chunk,
			"include":      {"albums,albums.coverArt,artists"},
			"countryCode":  {c.country},
		})
		if err != nil {
			if te, ok := err.(*tool.Error); ok && te.Code == tool.CodeNotFound {
				continue // none of this chunk exists
			}
			return nil, err
		}
		tracks, err := newIndex(doc).linkedTracks(doc.Data)
		if err != nil {
			return nil, parseError(err)
		}
		for _, t := range tracks {
			if wanted[strings.ToUpper(t.ISRC)] {
				out = append(out, t)
			}
		}
		tool.ReportProgress(ctx, tool.Progress{Done: float64(start + len(chunk)), Total: float64(len(want)),
			Message: fmt.Sprintf("looked up %d of %d ISRCs", start+len(chunk), len(want))})
	}
	return out, nil
}
