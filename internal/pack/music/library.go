package music

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/internal/textenc"
)

// LibraryItem is one line of a library import: a track (the default) or,
// with Type "album", an album.
type LibraryItem struct {
	Type  string // "track" or "album"
	Track store.Track
	Album store.Album
}

// LibraryImportStats counts what an import did.
type LibraryImportStats struct {
	Lines         int `json:"lines"`
	TracksAdded   int `json:"tracksAdded"`   // new library tracks
	TracksUpdated int `json:"tracksUpdated"` // tracks already there, metadata refreshed
	AlbumsAdded   int `json:"albumsAdded"`
	AlbumsUpdated int `json:"albumsUpdated"`
	Skipped       int `json:"skipped"` // bad lines
}

// libraryBatch is how many items go into one store transaction.
const libraryBatch = 500

// ImportLibrary adds the tracks and albums of a JSONL or CSV file (format
// "jsonl" or "csv") to the library. JSONL lines are objects with the fields
// of [store.Track] (tidalId, isrc, title, artist, album, albumId, duration,
// artworkUrl) or, with "type":"album", of [store.Album]; a CSV file has a
// header row naming the same columns. Each line is validated on its own: a
// bad one is reported through lineErr and skipped. Items are written in
// batches of one transaction each.
func (s *Service) ImportLibrary(ctx context.Context, r io.Reader, format string, lineErr func(line int, err error)) (LibraryImportStats, error) {
	var st LibraryImportStats
	db, err := s.Store(ctx)
	if err != nil {
		return st, err
	}
	var tracks []store.Track
	var albums []store.Album
	flush := func() error {
		if len(tracks) > 0 {
			n, err := db.AddTracks(ctx, tracks)
			if err != nil {
				return err
			}
			st.TracksAdded += n
			st.TracksUpdated += len(tracks) - n
			tracks = tracks[:0]
		}
		if len(albums) > 0 {
			n, err := db.AddAlbums(ctx, albums)
			if err != nil {
				return err
			}
			st.AlbumsAdded += n
			st.AlbumsUpdated += len(albums) - n
			albums = albums[:0]
		}
		return nil
	}
	emit := func(line int, it LibraryItem, perr error) error {
		st.Lines++
		if perr != nil {
			st.Skipped++
			if lineErr != nil {
				lineErr(line, perr)
			}
			return nil
		}
		if it.Type == "album" {
			albums = append(albums, it.Album)
		} else {
			tracks = append(tracks, it.Track)
		}
		if len(tracks)+len(albums) >= libraryBatch {
			return flush()
		}
		return ctx.Err()
	}
	switch format {
	case "jsonl":
		err = eachJSONLItem(r, emit)
	case "csv":
		err = eachCSVItem(r, emit)
	default:
		return st, fmt.Errorf("music: unknown library file format %q (want jsonl or csv)", format)
	}
	if err != nil {
		return st, err
	}
	return st, flush()
}

func eachJSONLItem(r io.Reader, emit func(int, LibraryItem, error) error) error {
	r, _, err := textenc.NewReader(r)
	if err != nil {
		return fmt.Errorf("music: reading line 1: %w", err)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("music: reading line %d: %w", lineNo, err)
		}
		switch {
		case tooLong:
			if e := emit(lineNo, LibraryItem{}, fmt.Errorf("line longer than %d bytes", MaxLineBytes)); e != nil {
				return e
			}
		case len(bytes.TrimSpace(line)) > 0:
			it, perr := ParseLibraryJSON(line)
			if e := emit(lineNo, it, perr); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// ParseLibraryJSON parses one JSONL line of a library import.
func ParseLibraryJSON(line []byte) (LibraryItem, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return LibraryItem{}, fmt.Errorf("not a valid JSON object: %s", jsonError(err))
	}
	if dec.More() {
		return LibraryItem{}, errors.New("not a valid JSON object: data after the object")
	}
	fields := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			fields[k] = v
		case json.Number:
			fields[k] = v.String()
		case nil:
		case bool:
			fields[k] = strconv.FormatBool(v)
		default:
			return LibraryItem{}, fmt.Errorf("%s: must be a string or number", k)
		}
	}
	return libraryItem(fields)
}

// eachCSVItem reads a CSV file, UTF-8 or UTF-16 (textenc.Detect), whose
// records are at most MaxLineBytes each: a longer one ends the read with an
// error naming its line, because the reader cannot know where it ends
// without reading it (a quoted field may hold line ends).
func eachCSVItem(r io.Reader, emit func(int, LibraryItem, error) error) error {
	r, _, err := textenc.NewReader(r)
	if err != nil {
		return fmt.Errorf("music: reading CSV: %w", err)
	}
	lim := &recordLimiter{r: r, max: MaxLineBytes}
	cr := csv.NewReader(lim)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if lim.failed {
		err = errRecordTooLong // a parse error in the part read can hide it
	}
	if errors.Is(err, errRecordTooLong) {
		return fmt.Errorf("music: line %d: CSV header: %w", lim.line(), err)
	}
	lim.next(cr.InputOffset())
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("music: CSV header: %w", err)
	}
	cols := make([]string, len(header))
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		key, ok := csvColumn(h)
		if !ok {
			return fmt.Errorf("music: CSV header: unknown column %q (known: tidalId, isrc, title, artist, album, albumId, duration, artworkUrl, type, releaseDate, trackCount)", textclip.Bytes(h, 40))
		}
		cols[i] = key
	}
	for {
		rec, err := cr.Read()
		if lim.failed {
			err = errRecordTooLong // a parse error in the part read can hide it
		}
		if errors.Is(err, errRecordTooLong) {
			return fmt.Errorf("music: line %d: %w", lim.line(), err)
		}
		lim.next(cr.InputOffset())
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			// A malformed row: report it; csv.Reader carries on with the next.
			if e := emit(pe.StartLine, LibraryItem{}, fmt.Errorf("bad CSV: %v", pe.Err)); e != nil {
				return e
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("music: reading CSV: %w", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) > len(cols) {
			if e := emit(line, LibraryItem{}, fmt.Errorf("%d fields, the header has %d", len(rec), len(cols))); e != nil {
				return e
			}
			continue
		}
		fields := make(map[string]string, len(rec))
		for i, v := range rec {
			fields[cols[i]] = v
		}
		it, perr := libraryItem(fields)
		if e := emit(line, it, perr); e != nil {
			return e
		}
	}
}

// errRecordTooLong is what a recordLimiter reads past its bound.
var errRecordTooLong = fmt.Errorf("a CSV record longer than %d bytes (the bound of one line)", MaxLineBytes)

// recordLimiter hands a csv.Reader at most max bytes past the end of the
// last record it returned (next), so that a huge field is never read into
// memory, and counts the lines before that end, to name where a record
// starts.
type recordLimiter struct {
	r       io.Reader
	max     int64
	start   int64  // the input offset where the next record starts
	pending []byte // bytes handed out; pending[head:] lies from start on
	head    int
	lines   int  // line ends before start
	failed  bool // a record went past the bound
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	room := l.max - int64(len(l.pending)-l.head)
	if room <= 0 {
		// The record is at the bound: one more byte, unless the input
		// ends here, makes it too long.
		var one [1]byte
		for {
			n, err := l.r.Read(one[:])
			switch {
			case n > 0:
				l.failed = true
				return 0, errRecordTooLong
			case err != nil:
				return 0, err
			}
		}
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.pending = append(l.pending, p[:n]...)
	return n, err
}

// next moves the start of the next record to offset, csv.Reader's
// InputOffset after a Read; csv.Reader may have read ahead of it, at most
// its buffer's size.
func (l *recordLimiter) next(offset int64) {
	done := l.pending[l.head : l.head+int(offset-l.start)]
	l.lines += bytes.Count(done, []byte{'\n'})
	l.head += len(done)
	l.start = offset
	if l.head > 64<<10 && l.head > len(l.pending)/2 {
		l.pending = append(l.pending[:0], l.pending[l.head:]...)
		l.head = 0
	}
}

// line is the line the next record starts on (csv.Reader skips empty
// lines before it), once its first bytes have been read.
func (l *recordLimiter) line() int {
	n := l.lines + 1
	for rest := l.pending[l.head:]; len(rest) > 0; n++ {
		switch {
		case rest[0] == '\n':
			rest = rest[1:]
		case bytes.HasPrefix(rest, []byte("\r\n")):
			rest = rest[2:]
		default:
			return n
		}
	}
	return n
}

// csvColumn maps a CSV header name (any case, underscores allowed) to its
// field key.
func csvColumn(h string) (string, bool) {
	switch strings.ToLower(strings.ReplaceAll(h, "_", "")) {
	case "tidalid", "id":
		return "tidalId", true
	case "isrc":
		return "isrc", true
	case "title":
		return "title", true
	case "artist":
		return "artist", true
	case "album":
		return "album", true
	case "albumid":
		return "albumId", true
	case "duration":
		return "duration", true
	case "artworkurl":
		return "artworkUrl", true
	case "type":
		return "type", true
	case "releasedate":
		return "releaseDate", true
	case "trackcount":
		return "trackCount", true
	case "addedat":
		return "addedAt", true
	}
	return "", false
}

// libraryItem validates the fields of one import line.
func libraryItem(f map[string]string) (LibraryItem, error) {
	known := map[string]bool{"tidalId": true, "isrc": true, "title": true, "artist": true, "album": true, "albumId": true,
		"duration": true, "artworkUrl": true, "type": true, "releaseDate": true, "trackCount": true, "addedAt": true}
	for k, v := range f {
		if !known[k] {
			return LibraryItem{}, fmt.Errorf("unknown field %q", textclip.Bytes(k, 40))
		}
		v = strings.TrimSpace(v)
		if len(v) > maxURL || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return LibraryItem{}, fmt.Errorf("%s: invalid or too long", k)
		}
		f[k] = v
	}
	if id := f["tidalId"]; id != "" && !validTidalID(id) {
		return LibraryItem{}, fmt.Errorf("tidalId: %q is not a Tidal id", textclip.Bytes(id, 40))
	}
	typ := strings.ToLower(f["type"])
	switch typ {
	case "album":
		if f["tidalId"] == "" {
			return LibraryItem{}, errors.New("tidalId: required for an album")
		}
		a := store.Album{TidalID: f["tidalId"], Title: f["title"], Artist: f["artist"], ReleaseDate: f["releaseDate"], ArtworkURL: f["artworkUrl"]}
		if s := f["trackCount"]; s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 10000 {
				return LibraryItem{}, fmt.Errorf("trackCount: %q is not a track count", textclip.Bytes(s, 20))
			}
			a.TrackCount = n
		}
		return LibraryItem{Type: "album", Album: a}, nil
	case "", "track":
	default:
		return LibraryItem{}, fmt.Errorf("type: %q is not track or album", textclip.Bytes(typ, 20))
	}
	t := store.Track{TidalID: f["tidalId"], Title: f["title"], Artist: f["artist"], Album: f["album"],
		AlbumID: f["albumId"], ArtworkURL: f["artworkUrl"]}
	if s := f["isrc"]; s != "" {
		isrc, err := NormalizeISRC(s)
		if err != nil {
			return LibraryItem{}, fmt.Errorf("isrc: %v", err)
		}
		t.ISRC = isrc
	}
	if t.TidalID == "" && t.ISRC == "" {
		return LibraryItem{}, errors.New("a track needs a tidalId or an isrc")
	}
	if s := f["duration"]; s != "" {
		d, err := strconv.ParseFloat(s, 64)
		if err != nil || d < 0 || d > maxDuration {
			return LibraryItem{}, fmt.Errorf("duration: %q is not a number of seconds", textclip.Bytes(s, 20))
		}
		t.Duration = d
	}
	return LibraryItem{Type: "track", Track: t}, nil
}

// validTidalID accepts what TIDAL ids look like: letters, digits, - and _.
func validTidalID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
