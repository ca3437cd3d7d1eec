package tidal

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
)

// maxAlbumPages bounds the item pages followed for one album: 50 pages of 20
// is 1000 tracks, more than any real album.
const maxAlbumPages = 50

// maxNextLen bounds a links.next value; real ones are ~100 bytes.
const maxNextLen = 4096

// Album fetches an album with its artists and cover.
func (c *Client) Album(ctx context.Context, id string) (*Album, error) {
	album, _, err := c.album(ctx, id, "artists,coverArt")
	if err != nil {
		return nil, err
	}
	return album, nil
}

// AlbumTracks fetches every track of an album, in album order. See
// [Client.AlbumWithTracks].
func (c *Client) AlbumTracks(ctx context.Context, id string) ([]Track, error) {
	_, tracks, err := c.AlbumWithTracks(ctx, id)
	return tracks, err
}

// AlbumWithTracks fetches an album and every track on it, in album order,
// each with its artists, track number and the album (title and cover).
//
// The album answer holds the first 20 items; the rest come from following
// links.next (cursor based), with include re-added on each page since TIDAL's
// next links leave it out. Progress is reported per page. At most
// maxAlbumPages pages are read.
func (c *Client) AlbumWithTracks(ctx context.Context, id string) (*Album, []Track, error) {
	album, doc, err := c.album(ctx, id, "artists,coverArt,items.artists")
	if err != nil {
		return nil, nil, err
	}
	items := doc.Data[0].Relationships["items"]
	tracks, err := newIndex(doc).linkedTracks(items.Data)
	if err != nil {
		return nil, nil, parseError(err)
	}
	report := func(page int) {
		c.report(ctx, Progress{Done: len(tracks), Total: max(album.NumberOfItems, len(tracks)),
			Message: fmt.Sprintf("album %s: page %d, %d tracks", album.ID, page, len(tracks))})
	}
	report(1)

	next := items.Links.Next
	seen := map[string]bool{}
	for page := 2; next != "" && page <= maxAlbumPages && !seen[next]; page++ {
		seen[next] = true
		pdoc, err := c.getNext(ctx, next, "items.artists")
		if err != nil {
			return nil, nil, err
		}
		more, err := newIndex(pdoc).linkedTracks(pdoc.Data)
		if err != nil {
			return nil, nil, parseError(err)
		}
		if len(more) == 0 {
			break // a next link to an empty page would loop forever
		}
		tracks = append(tracks, more...)
		next = pdoc.Links.Next
		report(page)
	}

	ref := AlbumRef{ID: album.ID, Title: album.Title, ArtworkURL: album.ArtworkURL}
	for i := range tracks {
		if tracks[i].Album == nil {
			r := ref
			tracks[i].Album = &r
		}
	}
	return album, tracks, nil
}

// album fetches one album by id with the given include paths. It uses
// GET /albums?filter[id]=, the form the recorded answers come from; an
// unknown id is an empty data array there, reported as NOT_FOUND.
func (c *Client) album(ctx context.Context, id, include string) (*Album, *document, error) {
	if err := checkID("album", id); err != nil {
		return nil, nil, err
	}
	doc, err := c.get(ctx, "/albums", url.Values{
		"filter[id]":  {id},
		"include":     {include},
		"countryCode": {c.country},
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range doc.Data {
		if doc.Data[i].Type == "albums" && doc.Data[i].ID == id {
			doc.Data = doc.Data[i : i+1]
			a, err := newIndex(doc).album(&doc.Data[0])
			if err != nil {
				return nil, nil, parseError(err)
			}
			return &a, doc, nil
		}
	}
	return nil, nil, newError(ErrNotFound, fmt.Sprintf("TIDAL has no album %s in country %s", id, c.country))
}

// checkID rejects ids that cannot be TIDAL ids (numeric today; letters,
// digits, '-' and '_' allowed for safety).
func checkID(what, id string) error {
	if id == "" || len(id) > 64 || strings.IndexFunc(id, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
	}) >= 0 {
		return newError(ErrInvalidInput, fmt.Sprintf("%q is not a valid TIDAL %s id", httpclient.Clip(id, 80), what))
	}
	return nil
}

// getNext follows a links.next value. TIDAL's are relative to the API root
// ("/albums/1/relationships/items?countryCode=US&page%5Bcursor%5D=…") and
// drop include, which is set again here. Absolute links are accepted only
// when they point under the API root, so a hostile answer cannot send the
// bearer token elsewhere.
func (c *Client) getNext(ctx context.Context, next, include string) (*document, error) {
	return c.followNext(ctx, next, include, true)
}

// followNext is getNext; withCountry adds countryCode when the link lacks
// it, which only catalogue endpoints take (the API answers 400 to a
// parameter an endpoint does not document, and user collections have none).
func (c *Client) followNext(ctx context.Context, next, include string, withCountry bool) (*document, error) {
	if len(next) > maxNextLen {
		return nil, malformed("TIDAL pagination link is too long", 0, nil)
	}
	rel := next
	if u, err := url.Parse(next); err == nil && u.IsAbs() {
		root := c.base.String()
		if !strings.HasPrefix(next, root+"/") {
			return nil, malformed("TIDAL pagination link points outside the API", 0, nil)
		}
		rel = strings.TrimPrefix(next, root)
	}
	path, rawQuery, _ := strings.Cut(rel, "?")
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return nil, malformed("TIDAL pagination link is not a path", 0, nil)
	}
	if _, err := url.PathUnescape(path); err != nil {
		return nil, malformed("TIDAL pagination link is malformed", 0, err)
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, malformed("TIDAL pagination link is malformed", 0, err)
	}
	q.Set("include", include)
	if withCountry && q.Get("countryCode") == "" {
		q.Set("countryCode", c.country)
	}
	return c.get(ctx, path, q)
}
