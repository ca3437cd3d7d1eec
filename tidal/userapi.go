package tidal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
)

// PlaylistBatch is the most items one add to a playlist takes: the OpenAPI
// spec's maxItems for POST /playlists/{id}/relationships/items.
const PlaylistBatch = 50

// maxCollectionPages bounds the pages of a user's collection followed.
const maxCollectionPages = 1000

// ErrNeedsUser reports a call that needs a user login on a client without
// one ([Client.WithUser]).
var errNeedsUser = newError(ErrAuthMissing, "this TIDAL call needs a user login: run 'toolport tidal login'")

// PlaylistAccess is who can see a playlist made by [Client.CreatePlaylist].
type PlaylistAccess string

// The access types a new playlist may have.
const (
	PlaylistUnlisted PlaylistAccess = "UNLISTED"
	PlaylistPublic   PlaylistAccess = "PUBLIC"
)

// CreatePlaylist makes a playlist in the user's account and returns its id.
// idempotencyKey, when set, makes a retried request return the playlist
// the first one made instead of a second one.
func (c *Client) CreatePlaylist(ctx context.Context, name, description string, access PlaylistAccess, idempotencyKey string) (string, error) {
	if !c.user {
		return "", errNeedsUser
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 500 || len(description) > 5000 {
		return "", newError(ErrInvalidInput, "a TIDAL playlist needs a name of at most 500 bytes and a description of at most 5000")
	}
	attrs := map[string]any{"name": name}
	if description != "" {
		attrs["description"] = description
	}
	if access != "" {
		attrs["accessType"] = string(access)
	}
	body, err := json.Marshal(map[string]any{"data": map[string]any{"type": "playlists", "attributes": attrs}})
	if err != nil {
		return "", &Error{Kind: ErrInvalidInput, Message: "the playlist cannot be encoded", Err: err}
	}
	doc, err := c.send(ctx, http.MethodPost, "/playlists", nil, body, idempotencyKey)
	if err != nil {
		return "", err
	}
	if len(doc.Data) != 1 || doc.Data[0].Type != "playlists" || checkID("playlist", doc.Data[0].ID) != nil {
		return "", malformed("TIDAL answered the playlist creation without a playlist id", 0, nil)
	}
	return doc.Data[0].ID, nil
}

// AddedItems says what one add to a playlist did.
type AddedItems struct {
	// Skipped are the track ids TIDAL left out, with its reason (NOT_FOUND).
	Skipped map[string]string
}

// AddPlaylistItems appends up to PlaylistBatch tracks to the user's
// playlist, in order: one request. Callers split longer lists, and retry a
// batch that failed with a temporary error with the same idempotencyKey so
// that TIDAL replays it instead of adding the tracks twice.
func (c *Client) AddPlaylistItems(ctx context.Context, playlistID string, trackIDs []string, idempotencyKey string) (AddedItems, error) {
	if !c.user {
		return AddedItems{}, errNeedsUser
	}
	if err := checkID("playlist", playlistID); err != nil {
		return AddedItems{}, err
	}
	if len(trackIDs) == 0 || len(trackIDs) > PlaylistBatch {
		return AddedItems{}, newError(ErrInvalidInput, fmt.Sprintf("add 1 to %d tracks to a playlist at a time", PlaylistBatch))
	}
	data := make([]map[string]string, len(trackIDs))
	for i, id := range trackIDs {
		if err := checkID("track", id); err != nil {
			return AddedItems{}, err
		}
		data[i] = map[string]string{"id": id, "type": "tracks"}
	}
	body, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return AddedItems{}, &Error{Kind: ErrInvalidInput, Message: "the items cannot be encoded", Err: err}
	}
	doc, err := c.send(ctx, http.MethodPost, "/playlists/"+url.PathEscape(playlistID)+"/relationships/items", nil, body, idempotencyKey)
	if err != nil {
		return AddedItems{}, err
	}
	out := AddedItems{}
	for _, s := range doc.Meta.Skipped {
		if out.Skipped == nil {
			out.Skipped = map[string]string{}
		}
		out.Skipped[httpclient.Clip(s.ID, 64)] = httpclient.Clip(s.Reason, 60)
	}
	return out, nil
}

// FavoriteTracks pages through the user's favourite tracks (newest first),
// calling fn with each page's tracks: id, title, ISRC and duration, without
// artists or album (look those up with [Client.TracksByID]). It stops at
// fn's first error and returns it.
func (c *Client) FavoriteTracks(ctx context.Context, fn func([]Track) error) error {
	return c.eachCollectionPage(ctx, "/userCollectionTracks/me/relationships/items", func(idx index, ids []resource) error {
		tracks, err := idx.linkedTracks(ids)
		if err != nil {
			return parseError(err)
		}
		return fn(tracks)
	})
}

// FavoriteAlbums pages through the user's favourite albums as
// [Client.FavoriteTracks] does: id, title, release date and track count,
// without artists or cover (see [Client.AlbumsByID]).
func (c *Client) FavoriteAlbums(ctx context.Context, fn func([]Album) error) error {
	return c.eachCollectionPage(ctx, "/userCollectionAlbums/me/relationships/items", func(idx index, ids []resource) error {
		albums, err := idx.linkedAlbums(ids)
		if err != nil {
			return parseError(err)
		}
		return fn(albums)
	})
}

// eachCollectionPage reads the first page of a user collection's items
// relationship (with include=items) and follows links.next, at most
// maxCollectionPages pages, never the same link twice.
func (c *Client) eachCollectionPage(ctx context.Context, path string, fn func(index, []resource) error) error {
	if !c.user {
		return errNeedsUser
	}
	// No countryCode: collection endpoints do not take it (the API answers
	// 400 to an undocumented parameter).
	doc, err := c.get(ctx, path, url.Values{"include": {"items"}})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for page := 1; ; page++ {
		if err := fn(newIndex(doc), doc.Data); err != nil {
			return err
		}
		c.report(ctx, Progress{Done: page, Message: fmt.Sprintf("read %d pages of the collection", page)})
		next := doc.Links.Next
		if next == "" || seen[next] || len(doc.Data) == 0 {
			return nil
		}
		if page >= maxCollectionPages {
			return malformed(fmt.Sprintf("the TIDAL collection has more than %d pages", maxCollectionPages), 0, nil)
		}
		seen[next] = true
		if doc, err = c.followNext(ctx, next, "items", false); err != nil {
			return err
		}
	}
}

// AlbumsByID looks albums up by id, in batches of lookupChunk, with their
// artists and cover; an id TIDAL does not know is absent.
func (c *Client) AlbumsByID(ctx context.Context, ids []string) ([]Album, error) {
	want, wanted := dedupe(ids, strings.TrimSpace)
	for _, id := range want {
		if err := checkID("album", id); err != nil {
			return nil, err
		}
	}
	found := map[string]Album{}
	for start := 0; start < len(want); start += lookupChunk {
		chunk := want[start:min(start+lookupChunk, len(want))]
		doc, err := c.get(ctx, "/albums", url.Values{"filter[id]": chunk, "include": {"artists,coverArt"}, "countryCode": {c.country}})
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		albums, err := newIndex(doc).linkedAlbums(doc.Data)
		if err != nil {
			return nil, parseError(err)
		}
		for _, a := range albums {
			if wanted[a.ID] && a.Title != "" {
				found[a.ID] = a
			}
		}
	}
	out := make([]Album, 0, len(found))
	for _, id := range want {
		if a, ok := found[id]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}
