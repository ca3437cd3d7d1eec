package tidal

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolport/toolport/tool"
)

// idChunk is how many track ids go in one request. The API documents no cap
// on filter[id]; 20 keeps URLs short, as for ISRCs.
const idChunk = 20

// TracksByID looks tracks up by TIDAL track id, in batches of idChunk, each
// with its artists and album (title and cover), so that one call gives all a
// library entry needs. It uses GET /tracks?filter[id]=A&filter[id]=B.
//
// Ids are trimmed and de-duplicated; empty ones are ignored, and one that
// cannot be a TIDAL id is a VALIDATION error before anything is sent. The
// result follows the order of ids; an id TIDAL does not know in the
// configured country is simply absent (compare IDs to find the misses), and
// tracks that were not asked for are dropped.
func (c *Client) TracksByID(ctx context.Context, ids []string) ([]Track, error) {
	want := make([]string, 0, len(ids))
	wanted := make(map[string]bool, len(ids))
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || wanted[id] {
			continue
		}
		if err := checkID("track", id); err != nil {
			return nil, err
		}
		wanted[id] = true
		want = append(want, id)
	}
	found := make(map[string]Track, len(want))
	for start := 0; start < len(want); start += idChunk {
		chunk := want[start:min(start+idChunk, len(want))]
		doc, err := c.get(ctx, "/tracks", url.Values{
			"filter[id]":  chunk,
			"include":     {"albums,albums.coverArt,artists"},
			"countryCode": {c.country},
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
			if _, dup := found[t.ID]; wanted[t.ID] && !dup && t.Title != "" {
				found[t.ID] = t
			}
		}
		tool.ReportProgress(ctx, tool.Progress{Done: float64(start + len(chunk)), Total: float64(len(want)),
			Message: fmt.Sprintf("looked up %d of %d track ids", start+len(chunk), len(want))})
	}
	out := make([]Track, 0, len(found))
	for _, id := range want {
		if t, ok := found[id]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}
