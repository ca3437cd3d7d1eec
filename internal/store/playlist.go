package store

import (
	"context"
	"time"
)

// Bounds of a stored playlist.
const (
	MaxPlaylistItems      = 500 // resolved items; as many unresolved entries again
	MaxPlaylistTitleBytes = 512
	MaxPlaylistTextBytes  = 4096 // a reasoning, a description
	MaxPlaylistFieldBytes = 2048 // a title, an artist, a URL
)

// Playlist is a playlist the agent suggested (or a person saved), with the
// conversation, message and tool call that produced it when it came from a
// chat turn.
type Playlist struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Description is a line about the playlist (the tool's summary).
	Description string `json:"description,omitempty"`
	// ConversationID, MessageID and ToolCallID say where the playlist was
	// made; empty when it was made outside a chat (the CLI, MCP).
	ConversationID string `json:"conversationId,omitempty"`
	MessageID      string `json:"messageId,omitempty"`
	ToolCallID     string `json:"toolCallId,omitempty"`
	// TidalPlaylistID is the playlist's id on TIDAL once it was saved there.
	TidalPlaylistID string          `json:"tidalPlaylistId,omitempty"`
	Items           []PlaylistItem  `json:"items"`
	Unresolved      []PlaylistEntry `json:"unresolved,omitempty"`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
}

// DurationSeconds is the sum of the items' durations.
func (p Playlist) DurationSeconds() float64 {
	var d float64
	for _, it := range p.Items {
		d += it.Duration
	}
	return d
}

// PlaylistItem is one resolved track of a playlist, in order.
type PlaylistItem struct {
	TidalID    string  `json:"tidalId"`
	ISRC       string  `json:"isrc,omitempty"`
	Title      string  `json:"title"`
	Artist     string  `json:"artist"`
	Album      string  `json:"album,omitempty"`
	ArtworkURL string  `json:"artworkUrl,omitempty"`
	Duration   float64 `json:"duration,omitempty"` // seconds
	Reasoning  string  `json:"reasoning,omitempty"`
}

// PlaylistEntry is a suggested track that could not be resolved.
type PlaylistEntry struct {
	ISRC      string `json:"isrc,omitempty"`
	Title     string `json:"title,omitempty"`
	Artist    string `json:"artist,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// PlaylistPage is one page of playlists, newest first, without their
// unresolved entries; Items is filled.
type PlaylistPage struct {
	Playlists []Playlist `json:"playlists"`
	Total     int        `json:"total"`
}

// Playlists stores playlists. *sqlstore.DB implements it.
type Playlists interface {
	// CreatePlaylist saves a playlist (an empty ID gets a random one) and
	// returns it as stored; an ID in use is [ErrConflict], a playlist over
	// the bounds [ErrInvalid].
	CreatePlaylist(ctx context.Context, p Playlist) (Playlist, error)
	// GetPlaylist returns a playlist with its items, or [ErrNotFound].
	GetPlaylist(ctx context.Context, id string) (Playlist, error)
	// ListPlaylists lists playlists, newest first; opt.Query matches titles.
	ListPlaylists(ctx context.Context, opt ListOptions) (PlaylistPage, error)
	// SetPlaylistTidalID records the TIDAL playlist a playlist was saved
	// as, or [ErrNotFound].
	SetPlaylistTidalID(ctx context.Context, id, tidalID string) error
}

// Origin is where a tool call runs: the conversation, the assistant message
// and the tool call. The agent puts it in the context of each call, so that a
// tool that stores something can tie it to the turn that made it.
type Origin struct {
	ConversationID string
	MessageID      string
	ToolCallID     string
}

type originKey struct{}

// WithOrigin returns a context carrying o.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom returns the origin set by [WithOrigin], or the zero Origin.
func OriginFrom(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}
