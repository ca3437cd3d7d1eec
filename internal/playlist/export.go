// Package playlist renders stored playlists for export: extended M3U
// (UTF-8, .m3u8) and JSON. The CLI (`toolport playlist export`) and the chat
// server's download endpoint share it, so both give the same bytes.
//
// # Playlists and the user's TIDAL account
//
// `suggestPlaylist` resolves the agent's ISRCs through the catalogue client and stores the playlist
// (`playlists` + `playlist_items`, migration 0007) with the conversation, message and tool call it
// came from: the agent puts a `store.Origin` in each tool call's context, so a pack that stores what
// it makes needs no chat types. The playlist is also a content block like every result, which is
// what the page's card (`js/playlist.js`) draws from after a reload. Export (M3U8, JSON) is package
// `internal/playlist`, shared by the CLI and the server. The user's TIDAL login is OAuth 2
// authorization code with PKCE (`golang.org/x/oauth2`) in package `tidal`: `Client.WithUser` gives a
// client whose bearer token is the user's (refreshed and written back to the 0600 file), sharing the
// app client's rate-limit bucket; the tidal client still never retries a 429 itself, so the batch
// retries of `savePlaylistToTidal` live in the pack, made safe by idempotency keys.
package playlist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/toolport/toolport/internal/store"
)

// Formats are the export formats, by name.
const (
	FormatM3U8 = "m3u8"
	FormatJSON = "json"
)

// TrackURL is the TIDAL web address of a track, which TIDAL's players and
// most M3U importers that know TIDAL accept.
func TrackURL(tidalID string) string { return "https://tidal.com/browse/track/" + tidalID }

// ContentType is the media type of a format, or "" for an unknown one.
func ContentType(format string) string {
	switch format {
	case FormatM3U8:
		return "audio/x-mpegurl; charset=utf-8"
	case FormatJSON:
		return "application/json; charset=utf-8"
	}
	return ""
}

// Filename is a safe download name for p in format: the title's letters and
// digits, or "playlist".
func Filename(p store.Playlist, format string) string {
	var b strings.Builder
	for _, r := range p.Title {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
		if b.Len() >= 60 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "playlist"
	}
	return name + "." + format
}

// Export renders p in format (FormatM3U8 or FormatJSON).
func Export(p store.Playlist, format string) ([]byte, error) {
	switch format {
	case FormatM3U8:
		return M3U8(p), nil
	case FormatJSON:
		return JSON(p)
	}
	return nil, fmt.Errorf("playlist: unknown export format %q (want m3u8 or json)", format)
}

// M3U8 renders p as an extended M3U playlist: a #EXTINF line per track
// (whole seconds, "Artist - Title") followed by the track's TIDAL address.
// Text from the playlist is put on one line, so a title cannot start a
// directive or an entry of its own.
func M3U8(p store.Playlist) []byte {
	var b bytes.Buffer
	b.WriteString("#EXTM3U\n")
	fmt.Fprintf(&b, "#PLAYLIST:%s\n", oneLine(p.Title))
	for _, it := range p.Items {
		secs := -1 // unknown, as the format says
		if it.Duration > 0 {
			secs = int(math.Round(it.Duration))
		}
		name := oneLine(it.Title)
		if a := oneLine(it.Artist); a != "" {
			name = a + " - " + name
		}
		fmt.Fprintf(&b, "#EXTINF:%d,%s\n", secs, name)
		if al := oneLine(it.Album); al != "" {
			fmt.Fprintf(&b, "#EXTALB:%s\n", al)
		}
		b.WriteString(TrackURL(oneLine(it.TidalID)) + "\n")
	}
	return b.Bytes()
}

// exported is the JSON export: the stored playlist with its total duration
// and each track's address.
type exported struct {
	store.Playlist
	DurationSeconds float64        `json:"durationSeconds"`
	Items           []exportedItem `json:"items"`
}

type exportedItem struct {
	store.PlaylistItem
	URL string `json:"url"`
}

// JSON renders p as an indented JSON object.
func JSON(p store.Playlist) ([]byte, error) {
	e := exported{Playlist: p, DurationSeconds: p.DurationSeconds(), Items: make([]exportedItem, len(p.Items))}
	for i, it := range p.Items {
		e.Items[i] = exportedItem{PlaylistItem: it, URL: TrackURL(it.TidalID)}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("playlist: encoding JSON: %w", err)
	}
	return b.Bytes(), nil
}

// oneLine replaces line breaks and other control characters with spaces.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0x85 {
			return ' '
		}
		return r
	}, s))
}
