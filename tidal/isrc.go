package tidal

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolport/toolport/internal/isrc"
)

// lookupChunk is how many ISRCs or ids go in one /tracks request. The API
// documents no cap; 20 keeps URLs short and matches community clients.
const lookupChunk = 20

// TracksByISRC looks tracks up by ISRC, in batches of lookupChunk. ISRCs are
// brought to their canonical form (trimmed, upper-cased, hyphens and spaces
// removed: Toolport's one ISRC rule, package internal/isrc) and
// de-duplicated; empty ones are ignored, and one that is not an ISRC is sent
// as written, upper-cased (TIDAL then finds nothing for it). An ISRC TIDAL does not know is simply absent from the result, and
// tracks for ISRCs that were not asked for are dropped. A single ISRC may
// yield several tracks (the same recording on several releases).
func (c *Client) TracksByISRC(ctx context.Context, isrcs []string) ([]Track, error) {
	want, wanted := dedupe(isrcs, func(s string) string {
		if n, err := isrc.Normalize(s); err == nil {
			return n
		}
		return strings.ToUpper(strings.TrimSpace(s))
	})
	out := []Track{}
	err := c.eachTracksChunk(ctx, "filter[isrc]", "ISRCs", want, func(t Track) {
		if wanted[strings.ToUpper(t.ISRC)] {
			out = append(out, t)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TracksByID looks tracks up by TIDAL track id, in batches of lookupChunk,
// each with its artists and album (title and cover), so that one call gives
// all a library entry needs. It uses GET /tracks?filter[id]=A&filter[id]=B.
//
// Ids are trimmed and de-duplicated; empty ones are ignored, and one that
// cannot be a TIDAL id is a VALIDATION error before anything is sent. The
// result follows the order of ids; an id TIDAL does not know in the
// configured country is simply absent (compare IDs to find the misses), and
// tracks that were not asked for are dropped.
func (c *Client) TracksByID(ctx context.Context, ids []string) ([]Track, error) {
	want, wanted := dedupe(ids, strings.TrimSpace)
	for _, id := range want {
		if err := checkID("track", id); err != nil {
			return nil, err
		}
	}
	found := make(map[string]Track, len(want))
	err := c.eachTracksChunk(ctx, "filter[id]", "track ids", want, func(t Track) {
		if _, dup := found[t.ID]; wanted[t.ID] && !dup && t.Title != "" {
			found[t.ID] = t
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]Track, 0, len(found))
	for _, id := range want {
		if t, ok := found[id]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// dedupe normalises values and drops empty and repeated ones, keeping order.
func dedupe(values []string, norm func(string) string) ([]string, map[string]bool) {
	want := make([]string, 0, len(values))
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if v = norm(v); v != "" && !seen[v] {
			seen[v] = true
			want = append(want, v)
		}
	}
	return want, seen
}

// eachTracksChunk queries /tracks with filter set to successive chunks of
// values (with albums, covers and artists included) and hands every track to
// fn. A chunk answered 404 has no matches. Progress is reported per chunk.
func (c *Client) eachTracksChunk(ctx context.Context, filter, what string, values []string, fn func(Track)) error {
	for start := 0; start < len(values); start += lookupChunk {
		chunk := values[start:min(start+lookupChunk, len(values))]
		doc, err := c.get(ctx, "/tracks", url.Values{
			filter:        chunk,
			"include":     {"albums,albums.coverArt,artists"},
			"countryCode": {c.country},
		})
		if errors.Is(err, ErrNotFound) {
			continue // none of this chunk exists
		}
		if err != nil {
			return err
		}
		tracks, err := newIndex(doc).linkedTracks(doc.Data)
		if err != nil {
			return parseError(err)
		}
		for _, t := range tracks {
			fn(t)
		}
		done := start + len(chunk)
		c.report(ctx, Progress{Done: done, Total: len(values),
			Message: fmt.Sprintf("looked up %d of %d %s", done, len(values), what)})
	}
	return nil
}
