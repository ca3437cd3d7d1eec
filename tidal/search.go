package tidal

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// SearchTypes selects what Search looks for.
type SearchTypes uint8

// Search types; zero means both.
const (
	SearchTracks SearchTypes = 1 << iota
	SearchAlbums
	SearchAll = SearchTracks | SearchAlbums
)

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	// MaxQueryLen is TIDAL's limit on filter[query], in characters; longer
	// queries are cut to it.
	MaxQueryLen = 256
	// maxSearchPages bounds the pages followed per type to reach the limit
	// (TIDAL returns 20 hits a page).
	maxSearchPages = 5
)

// SearchResult holds the hits of one search, most relevant first.
type SearchResult struct {
	Query  string // the query as sent (trimmed, possibly cut to MaxQueryLen)
	Tracks []Track
	Albums []Album
}

// Search searches the catalogue for up to limit tracks and/or albums
// (limit ≤ 0 means DefaultSearchLimit; it is capped at MaxSearchLimit).
// Tracks come with their artists and album (with cover), albums with their
// artists and cover.
//
// It calls GET /searchResults?filter[query]=… and accepts both the current
// answer (data is an array) and the one from before API 1.10.96 (a single
// object). If that form is unknown to the server (404 or 405) it falls back
// to the legacy GET /searchResults/{query}, which Config.LegacySearch selects
// outright.
func (c *Client) Search(ctx context.Context, query string, types SearchTypes, limit int) (*SearchResult, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, newError(ErrInvalidInput, "the search query is empty")
	}
	if utf8.RuneCountInString(q) > MaxQueryLen {
		q = string([]rune(q)[:MaxQueryLen])
	}
	if types&SearchAll == 0 {
		types = SearchAll
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)

	var include []string
	if types&SearchTracks != 0 {
		include = append(include, trackSearchInclude)
	}
	if types&SearchAlbums != 0 {
		include = append(include, albumSearchInclude)
	}
	params := url.Values{
		"countryCode":    {c.country},
		"explicitFilter": {"INCLUDE"},
		"include":        {strings.Join(include, ",")},
	}

	var doc *document
	var err error
	if !c.cfg.LegacySearch {
		cur := cloneValues(params)
		cur.Set("filter[query]", q)
		doc, err = c.get(ctx, "/searchResults", cur)
		var e *Error
		if errors.As(err, &e) && (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed) {
			doc, err = nil, nil // an older API: try the legacy form
		}
	}
	if doc == nil && err == nil {
		doc, err = c.get(ctx, "/searchResults/"+url.PathEscape(q), params)
	}
	if err != nil {
		return nil, err
	}

	res := &SearchResult{Query: q, Tracks: []Track{}, Albums: []Album{}}
	sr := searchResource(doc)
	if sr == nil {
		return res, nil // no searchResults resource: nothing found
	}
	idx := newIndex(doc)
	if types&SearchTracks != 0 {
		rel := sr.Relationships["tracks"]
		if res.Tracks, err = idx.linkedTracks(rel.Data); err != nil {
			return nil, parseError(err)
		}
		res.Tracks, err = c.moreTracks(ctx, res.Tracks, rel.Links.Next, limit)
		if err != nil {
			return nil, err
		}
		res.Tracks = res.Tracks[:min(len(res.Tracks), limit)]
	}
	if types&SearchAlbums != 0 {
		rel := sr.Relationships["albums"]
		if res.Albums, err = idx.linkedAlbums(rel.Data); err != nil {
			return nil, parseError(err)
		}
		res.Albums, err = c.moreAlbums(ctx, res.Albums, rel.Links.Next, limit)
		if err != nil {
			return nil, err
		}
		res.Albums = res.Albums[:min(len(res.Albums), limit)]
	}
	return res, nil
}

// Include paths for search. Nested paths bring artist names and covers in
// the same answer; TIDAL adds the intermediate resources itself.
const (
	trackSearchInclude = "tracks.artists,tracks.albums.coverArt"
	albumSearchInclude = "albums.artists,albums.coverArt"
	// On a searchResults relationship page the paths start at the hits.
	trackPageInclude = "tracks,tracks.artists,tracks.albums.coverArt"
	albumPageInclude = "albums,albums.artists,albums.coverArt"
)

// searchResource finds the searchResults resource in either answer shape.
func searchResource(doc *document) *resource {
	for i := range doc.Data {
		if doc.Data[i].Type == "searchResults" {
			return &doc.Data[i]
		}
	}
	return nil
}

// moreTracks follows a search relationship's next links until limit hits.
// Later pages only add to a result already in hand, so a failing page ends
// the paging instead of failing the search; a cancelled ctx still fails it.
func (c *Client) moreTracks(ctx context.Context, have []Track, next string, limit int) ([]Track, error) {
	for page := 0; next != "" && len(have) < limit && page < maxSearchPages; page++ {
		doc, err := c.getNext(ctx, next, trackPageInclude)
		if err != nil {
			if ctx.Err() != nil {
				return nil, contextError(ctx.Err())
			}
			break
		}
		more, err := newIndex(doc).linkedTracks(doc.Data)
		if err != nil || len(more) == 0 {
			break
		}
		have = append(have, more...)
		next = doc.Links.Next
	}
	return have, nil
}

func (c *Client) moreAlbums(ctx context.Context, have []Album, next string, limit int) ([]Album, error) {
	for page := 0; next != "" && len(have) < limit && page < maxSearchPages; page++ {
		doc, err := c.getNext(ctx, next, albumPageInclude)
		if err != nil {
			if ctx.Err() != nil {
				return nil, contextError(ctx.Err())
			}
			break
		}
		more, err := newIndex(doc).linkedAlbums(doc.Data)
		if err != nil || len(more) == 0 {
			break
		}
		have = append(have, more...)
		next = doc.Links.Next
	}
	return have, nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+1)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func parseError(err error) *Error {
	return malformed("TIDAL returned a resource this client cannot read", 0, err)
}
