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

func runPlaylist(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n"+
			"The playlists the agent suggested (suggestPlaylist), as stored.\n\n"+
			"  toolport playlist list [--query Q] [--limit N] [--offset N] [--json]\n"+
			"  toolport playlist export ID [--format m3u8|json] [--output FILE]\n", playlistUsage)
		if len(args) == 0 {
			return exitCode(ExitUsage)
		}
		return nil
	}
	switch args[0] {
	case "list", "ls":
		return inSubcommand("playlist list", runPlaylistList(ctx, env, args[1:]))
	case "export":
		return inSubcommand("playlist export", runPlaylistExport(ctx, env, args[1:]))
	}
	return usageError(fmt.Errorf("unknown subcommand %q (want list or export)", args[0]))
}

func runPlaylistList(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "playlist list", "toolport playlist list [flags]", "Lists stored playlists, newest first.")
	query := fs.String("query", "", "keep playlists whose title contains this")
	limit := fs.Int("limit", store.DefaultLimit, "page size")
	offset := fs.Int("offset", 0, "skip this many")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageExit(fs)
	}
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		return err
	}
	page, err := db.ListPlaylists(ctx, store.ListOptions{Query: *query, Limit: *limit, Offset: *offset})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(page); err != nil {
			return exitCode(ExitFailure) // stdout is gone: nowhere to say more
		}
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tTRACKS\tDURATION\tCREATED\tTIDAL")
	for _, p := range page.Playlists {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.ID, httpclient.OneLine(p.Title, 60), len(p.Items),
			(time.Duration(p.DurationSeconds()) * time.Second).String(), p.CreatedAt.Format(time.DateTime), p.TidalPlaylistID)
	}
	tw.Flush()
	fmt.Fprintf(env.Stderr, "%d of %d playlists\n", len(page.Playlists), page.Total)
	return nil
}

func runPlaylistExport(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "playlist export", "toolport playlist export ID [--format m3u8|json] [--output FILE]",
		"Writes a stored playlist as extended M3U (UTF-8; each track is its TIDAL address) or JSON\n"+
			"(with each track's reasoning), to stdout or to --output.")
	format := fs.String("format", playlist.FormatM3U8, "m3u8 or json")
	output := fs.String("output", "", "write to this file instead of stdout")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(errors.New("give one playlist ID (see 'toolport playlist list')"))
	}
	if playlist.ContentType(*format) == "" {
		return usageError(fmt.Errorf("unknown format %q (want m3u8 or json)", *format))
	}
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		return err
	}
	p, err := db.GetPlaylist(ctx, pos[0])
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no playlist %q (see 'toolport playlist list')", httpclient.OneLine(pos[0], 80))
	}
	if err != nil {
		return err
	}
	b, err := playlist.Export(p, *format)
	if err != nil {
		return err
	}
	if *output == "" {
		if _, err := env.Stdout.Write(b); err != nil {
			return exitCode(ExitFailure) // stdout is gone: nowhere to say more
		}
		return nil
	}
	if err := os.WriteFile(*output, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote %d tracks to %s\n", len(p.Items), *output)
	return nil
}
