package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/playlist"
	"github.com/toolport/toolport/internal/store"
)

const playlistUsage = "toolport playlist list | export ID [--format m3u8|json]"

func runPlaylist(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n"+
			"The playlists the agent suggested (suggestPlaylist), as stored.\n\n"+
			"  toolport playlist list [--query Q] [--limit N] [--offset N] [--json]\n"+
			"  toolport playlist export ID [--format m3u8|json] [--output FILE]\n", playlistUsage)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	switch args[0] {
	case "list", "ls":
		return runPlaylistList(ctx, env, args[1:])
	case "export":
		return runPlaylistExport(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "toolport playlist: unknown subcommand %q (want list or export)\n", args[0])
	return ExitUsage
}

func runPlaylistList(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "playlist list", "toolport playlist list [flags]", "Lists stored playlists, newest first.")
	query := fs.String("query", "", "keep playlists whose title contains this")
	limit := fs.Int("limit", store.DefaultLimit, "page size")
	offset := fs.Int("offset", 0, "skip this many")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fs.Usage()
		return ExitUsage
	}
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist list: %v\n", err)
		return ExitFailure
	}
	page, err := db.ListPlaylists(ctx, store.ListOptions{Query: *query, Limit: *limit, Offset: *offset})
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist list: %v\n", err)
		return ExitFailure
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(page); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tTRACKS\tDURATION\tCREATED\tTIDAL")
	for _, p := range page.Playlists {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.ID, httpclient.OneLine(p.Title, 60), len(p.Items),
			(time.Duration(p.DurationSeconds()) * time.Second).String(), p.CreatedAt.Format(time.DateTime), p.TidalPlaylistID)
	}
	tw.Flush()
	fmt.Fprintf(env.Stderr, "%d of %d playlists\n", len(page.Playlists), page.Total)
	return ExitOK
}

func runPlaylistExport(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "playlist export", "toolport playlist export ID [--format m3u8|json] [--output FILE]",
		"Writes a stored playlist as extended M3U (UTF-8; each track is its TIDAL address) or JSON\n"+
			"(with each track's reasoning), to stdout or to --output.")
	format := fs.String("format", playlist.FormatM3U8, "m3u8 or json")
	output := fs.String("output", "", "write to this file instead of stdout")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "toolport playlist export: give one playlist ID (see 'toolport playlist list')")
		return ExitUsage
	}
	if playlist.ContentType(*format) == "" {
		fmt.Fprintf(env.Stderr, "toolport playlist export: unknown format %q (want m3u8 or json)\n", *format)
		return ExitUsage
	}
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist export: %v\n", err)
		return ExitFailure
	}
	p, err := db.GetPlaylist(ctx, pos[0])
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(env.Stderr, "toolport playlist export: no playlist %q (see 'toolport playlist list')\n", httpclient.OneLine(pos[0], 80))
		return ExitFailure
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist export: %v\n", err)
		return ExitFailure
	}
	b, err := playlist.Export(p, *format)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist export: %v\n", err)
		return ExitFailure
	}
	if *output == "" {
		if _, err := env.Stdout.Write(b); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	if err := os.WriteFile(*output, b, 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "toolport playlist export: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(env.Stderr, "wrote %d tracks to %s\n", len(p.Items), *output)
	return ExitOK
}
