package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

const libraryUsage = "toolport library add|remove|list|import ..."

func runLibrary(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n"+
			"Manages your music library: the tracks and albums the music tools flag as inLibrary.\n\n"+
			"  toolport library add [--isrc ISRC] [--title T] [--artist A] [--album AL] [TIDAL_TRACK_ID...]\n"+
			"  toolport library add --album-id TIDAL_ALBUM_ID [--title T] [--artist A]\n"+
			"  toolport library remove [--albums] ID...            Tidal ids or ISRCs\n"+
			"  toolport library list [--albums] [--query Q] [--limit N] [--offset N] [--json]\n"+
			"  toolport library import [--format jsonl|csv] FILE   JSONL or CSV with a header row\n"+
			"  toolport library sync [--json]                      your TIDAL favourites (after 'toolport tidal login')\n\n"+
			"Run 'toolport library SUBCOMMAND --help' for details. The store is TOOLPORT_DATABASE_URL\n"+
			"(or database.url in the credentials file), by default $XDG_DATA_HOME/toolport/toolport.db.\n", libraryUsage)
		if len(args) == 0 {
			return exitCode(ExitUsage)
		}
		return nil
	}
	switch args[0] {
	case "add":
		return inSubcommand("library add", runLibraryAdd(ctx, env, args[1:]))
	case "remove", "rm":
		return inSubcommand("library remove", runLibraryRemove(ctx, env, args[1:]))
	case "list", "ls":
		return inSubcommand("library list", runLibraryList(ctx, env, args[1:]))
	case "import":
		return inSubcommand("library import", runLibraryImport(ctx, env, args[1:]))
	case "sync":
		return inSubcommand("library sync", runLibrarySync(ctx, env, args[1:]))
	}
	return usageError(fmt.Errorf("unknown subcommand %q (want add, remove, list, import or sync)", args[0]))
}

// musicCommand is what the library and index commands run against: the
// command's one store and the music service over it.
type musicCommand struct {
	svc   *music.Service
	db    *sqlstore.DB
	store *sharedStore
}

func (m *musicCommand) Close() { m.store.Close() }

// openMusic opens the store named by the configuration and the music
// service over it.
func openMusic(ctx context.Context, env *Env) (*musicCommand, error) {
	shared := newSharedStore(env.Config)
	db, err := shared.Open(ctx)
	if err != nil {
		return nil, err
	}
	svc := music.Open(music.ConfigFromEnv(env.Config), shared.music)
	return &musicCommand{svc: svc, db: db, store: shared}, nil
}

func runLibraryAdd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "library add", "toolport library add [flags] [TIDAL_TRACK_ID...]",
		"Adds tracks (by Tidal id, or by --isrc) or an album (--album-id) to the library.\n\n"+
			"When TIDAL is configured (TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET), the metadata of tracks given\n"+
			"by Tidal id (title, artist, album, ISRC, duration, artwork), of a track given by --isrc alone and\n"+
			"of an album without --title is fetched from TIDAL; flags that are set override what TIDAL says.\n"+
			"Without TIDAL, tracks given by Tidal id need --title and --artist.")
	isrc := fs.String("isrc", "", "the track's ISRC")
	title := fs.String("title", "", "title")
	artist := fs.String("artist", "", "artist")
	album := fs.String("album", "", "album title (for a track)")
	albumID := fs.String("album-id", "", "add the album with this Tidal id instead of tracks")
	duration := fs.Float64("duration", 0, "duration in seconds")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	// The flags that were set override TIDAL's metadata.
	req := music.LibraryAdd{TrackIDs: pos, AlbumID: *albumID}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "isrc":
			req.ISRC = isrc
		case "title":
			req.Title = title
		case "artist":
			req.Artist = artist
		case "album":
			req.Album = album
		case "duration":
			req.Duration = duration
		}
	})
	if *albumID != "" && (len(pos) > 0 || *isrc != "") || *albumID == "" && len(pos) == 0 && *isrc == "" {
		fmt.Fprintln(env.Stderr, "toolport library add: give Tidal track ids, --isrc, or --album-id (alone)")
		return usageExit(fs)
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.svc.AddToLibrary(ctx, req)
	switch {
	case errors.Is(err, music.ErrBadAdd):
		return usageError(errors.New(strings.TrimPrefix(err.Error(), music.ErrBadAdd.Error()+": ")))
	case errors.Is(err, music.ErrNeedMetadata):
		why, _, _ := strings.Cut(err.Error(), ": "+music.ErrNeedMetadata.Error())
		return usageError(fmt.Errorf("%s,\n"+
			"so give the metadata with flags: --title and --artist are needed; --album, --isrc and --duration are optional", why))
	case err != nil:
		return err
	}
	if res.Album != nil {
		word := "already in the library (updated)"
		if res.AlbumAdded {
			word = "added"
		}
		fmt.Fprintf(env.Stdout, "album %s: %s\n", res.Album.TidalID, word)
		return nil
	}
	for _, n := range res.Notes {
		switch {
		case n.FromTidal:
			fmt.Fprintf(env.Stdout, "%s: %s\n", n.ID, describeTrack(n.Track))
		case n.NotOnTidal && n.Added():
			fmt.Fprintf(env.Stderr, "toolport library add: TIDAL has no track %s; adding it with the metadata given\n", n.ID)
		case !n.Added():
			fmt.Fprintf(env.Stderr, "toolport library add: TIDAL has no track %s (not added)\n", n.ID)
		}
	}
	if len(res.Tracks) > 0 {
		fmt.Fprintf(env.Stdout, "%d tracks added, %d already in the library (updated)\n", res.Added, len(res.Tracks)-res.Added)
	}
	if res.Missing() {
		return exitCode(ExitFailure)
	}
	return nil
}

// describeTrack is "Title — Artist (Album)".
func describeTrack(t store.Track) string {
	s := t.Title + " — " + t.Artist
	if t.Album != "" {
		s += " (" + t.Album + ")"
	}
	return s
}

func runLibraryRemove(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "library remove", "toolport library remove [--albums] ID...",
		"Removes tracks (by Tidal id or ISRC) or, with --albums, albums (by Tidal id) from the library.")
	albums := fs.Bool("albums", false, "the ids are album ids")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageExit(fs)
	}
	ids := make([]string, 0, len(pos))
	for _, id := range pos {
		if n, err := music.NormalizeISRC(id); err == nil && !*albums {
			id = n
		}
		ids = append(ids, id)
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	db := m.db
	var n int
	what := "tracks"
	if *albums {
		what = "albums"
		n, err = db.RemoveAlbums(ctx, ids)
	} else {
		n, err = db.RemoveTracks(ctx, ids)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d %s removed\n", n, what)
	if n == 0 {
		return errors.New("none of the ids is in the library")
	}
	return nil
}

func runLibraryList(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "library list", "toolport library list [--albums] [--query Q] [--limit N] [--offset N] [--json]",
		"Lists library tracks (or albums), most recently added first. --json prints one JSON object per\n"+
			"line, which 'toolport library import' reads back.")
	albums := fs.Bool("albums", false, "list albums instead of tracks")
	query := fs.String("query", "", "only items whose title, artist or album contains this")
	limit := fs.Int("limit", store.DefaultLimit, fmt.Sprintf("page size (1-%d)", store.MaxLimit))
	offset := fs.Int("offset", 0, "items to skip")
	asJSON := fs.Bool("json", false, "print JSON lines")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *limit < 1 || *limit > store.MaxLimit || *offset < 0 {
		return usageExit(fs)
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	db := m.db
	opt := store.ListOptions{Query: *query, Limit: *limit, Offset: *offset}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	if *albums {
		page, err := db.ListAlbums(ctx, opt)
		if err != nil {
			return err
		}
		for _, a := range page.Albums {
			if *asJSON {
				_ = enc.Encode(struct {
					Type string `json:"type"`
					store.Album
				}{"album", a})
				continue
			}
			fmt.Fprintf(env.Stdout, "%-12s %s — %s (%d tracks)\n", a.TidalID, a.Title, a.Artist, a.TrackCount)
		}
		if !*asJSON {
			fmt.Fprintf(env.Stderr, "%s\n", pageLine(len(page.Albums), *offset, page.Total, "albums"))
		}
		return nil
	}
	page, err := db.ListTracks(ctx, opt)
	if err != nil {
		return err
	}
	for _, t := range page.Tracks {
		if *asJSON {
			_ = enc.Encode(t)
			continue
		}
		id := t.TidalID
		if id == "" {
			id = "-"
		}
		fmt.Fprintf(env.Stdout, "%-12s %-12s %s — %s", id, t.ISRC, t.Title, t.Artist)
		if t.Album != "" {
			fmt.Fprintf(env.Stdout, " (%s)", t.Album)
		}
		fmt.Fprintln(env.Stdout)
	}
	if !*asJSON {
		fmt.Fprintf(env.Stderr, "%s\n", pageLine(len(page.Tracks), *offset, page.Total, "tracks"))
	}
	return nil
}

func pageLine(n, offset, total int, what string) string {
	if n == 0 {
		return fmt.Sprintf("no %s shown (%d in all)", what, total)
	}
	return fmt.Sprintf("%s %d-%d of %d", what, offset+1, offset+n, total)
}

func runLibraryImport(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "library import", "toolport library import [--format jsonl|csv] FILE",
		"Imports tracks and albums into the library from JSONL (one object per line: tidalId, isrc, title,\n"+
			"artist, album, albumId, duration, artworkUrl; \"type\":\"album\" with releaseDate and trackCount for\n"+
			"albums) or CSV with a header row of the same names. A track needs a tidalId or an isrc. Bad lines\n"+
			"are reported with their line numbers and skipped; a line or CSV record is at most 1 MiB (a longer\n"+
			"CSV record ends the import). UTF-8, with or without a BOM, and UTF-16 are read. FILE may be - for\n"+
			"stdin (then give --format).")
	format := fs.String("format", "", "jsonl or csv (default: from the file extension)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageExit(fs)
	}
	name := pos[0]
	f := strings.ToLower(*format)
	if f == "" {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".csv":
			f = "csv"
		case ".jsonl", ".ndjson", ".json":
			f = "jsonl"
		}
	}
	if f != "jsonl" && f != "csv" {
		return usageError(errors.New("say --format jsonl or --format csv"))
	}
	in := env.Stdin
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	}
	m, err := openMusic(ctx, env)
	if err != nil {
		return err
	}
	defer m.Close()
	svc := m.svc
	label := filepath.Base(name)
	reported := 0
	st, err := svc.ImportLibrary(ctx, in, f, func(line int, err error) {
		if reported++; reported <= maxReportedLines {
			fmt.Fprintf(env.Stderr, "%s:%d: %v (skipped)\n", label, line, err)
		}
	})
	if reported > maxReportedLines {
		fmt.Fprintf(env.Stderr, "%s: %d more bad lines not shown\n", label, reported-maxReportedLines)
	}
	fmt.Fprintf(env.Stdout, "%s: %d tracks added, %d updated; %d albums added, %d updated; %d skipped (%d lines)\n",
		label, st.TracksAdded, st.TracksUpdated, st.AlbumsAdded, st.AlbumsUpdated, st.Skipped, st.Lines)
	if err != nil {
		return err
	}
	return nil
}
