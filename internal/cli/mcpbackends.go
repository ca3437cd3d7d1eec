package cli

import (
	"context"

	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// mcpBackends returns the backends of the MCP prompts' completions and
// resources for the packs reg exposes: the CKAN portals od configures for
// the ckan pack; the index's mood words and, when db is set, the stored
// playlists for the music pack.
func mcpBackends(od opendata.Config, reg *tool.Registry, db *sharedStore) mcpserver.Options {
	var opts mcpserver.Options
	packs := map[string]bool{}
	for _, t := range reg.Tools() {
		packs[t.Spec().Pack] = true
	}
	if packs[opendata.Pack] {
		opts.CKAN = opendata.NewCatalog(od)
	}
	if packs[music.Pack] {
		opts.Moods = index.MoodWords()
		if db != nil {
			opts.Playlists = lazyPlaylists{db}
		}
	}
	return opts
}

// lazyPlaylists opens the store on first use, so that `toolport mcp` starts,
// and serves the other packs, on a machine with no database.
type lazyPlaylists struct{ db *sharedStore }

func (l lazyPlaylists) GetPlaylist(ctx context.Context, id string) (store.Playlist, error) {
	db, err := l.db.Open(ctx)
	if err != nil {
		return store.Playlist{}, err
	}
	return db.GetPlaylist(ctx, id)
}

func (l lazyPlaylists) ListPlaylists(ctx context.Context, opt store.ListOptions) (store.PlaylistPage, error) {
	db, err := l.db.Open(ctx)
	if err != nil {
		return store.PlaylistPage{}, err
	}
	return db.ListPlaylists(ctx, opt)
}
