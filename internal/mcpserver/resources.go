package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/playlist"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// A PlaylistStore holds the playlists suggestPlaylist stored;
// *sqlstore.DB implements it.
type PlaylistStore interface {
	GetPlaylist(ctx context.Context, id string) (store.Playlist, error)
	ListPlaylists(ctx context.Context, opt store.ListOptions) (store.PlaylistPage, error)
}

// A ConversationExporter renders the chat server's conversations as the
// Markdown its export endpoint gives.
type ConversationExporter interface {
	// RecentConversations lists up to limit conversations, newest first.
	RecentConversations(ctx context.Context, limit int) ([]ConversationInfo, error)
	// ExportMarkdown renders one; an unknown id is [store.ErrNotFound].
	ExportMarkdown(ctx context.Context, id string) (string, error)
}

// ConversationInfo names a conversation in a resource listing.
type ConversationInfo struct {
	ID    string
	Title string
}

// Changes tells servers that the stores behind their resources may have
// changed outside their own tool calls (a chat turn stored a playlist), so
// that they list them again and notify their clients. The zero value is ready.
type Changes struct {
	mu   sync.Mutex
	subs []func()
}

// Changed tells every server built with c to look again.
func (c *Changes) Changed() {
	c.mu.Lock()
	subs := c.subs
	c.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

func (c *Changes) subscribe(fn func()) {
	c.mu.Lock()
	c.subs = append(c.subs, fn)
	c.mu.Unlock()
}

// Resource addresses.
const (
	playlistPrefix     = "toolport://playlist/"
	conversationPrefix = "toolport://conversation/"
	// {+portal}, reserved expansion, because a portal's host may have a
	// port (a local CKAN): the SDK matches URIs against the template, and a
	// simple {portal} refuses the colon.
	ckanDatasetTemplate = "ckan://{+portal}/dataset/{name}"
)

// maxListed bounds the playlists, and the conversations, that resources/list
// shows (the newest); older ones are still read through the templates.
const maxListed = 50

// listTimeout bounds each sync's listing of the stores.
const listTimeout = 5 * time.Second

// addResources registers the templates of the configured backends and
// prepares the listed resources, which are synced from the stores: on
// resources/list, after a tool call that may write, and on opts.Changes.
func (s *service) addResources(srv *mcp.Server) {
	if s.opts.Playlists != nil {
		for _, f := range []string{playlist.FormatJSON, playlist.FormatM3U8} {
			srv.AddResourceTemplate(&mcp.ResourceTemplate{
				URITemplate: playlistPrefix + "{id}." + f,
				Name:        "playlist-" + f,
				Title:       "Playlist (" + strings.ToUpper(f) + ")",
				Description: "A playlist suggestPlaylist stored, exported as " + strings.ToUpper(f) + ".",
				MIMEType:    mimeOf(f),
				Icons:       icon("music"),
			}, s.readPlaylist)
		}
	}
	if s.opts.Conversations != nil {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: conversationPrefix + "{id}.md",
			Name:        "conversation-markdown",
			Title:       "Conversation (Markdown)",
			Description: "A Discover Chat conversation exported as Markdown, with its tool calls.",
			MIMEType:    "text/markdown",
			Icons:       icon(serverIcon),
		}, s.readConversation)
	}
	if s.opts.CKAN != nil {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: ckanDatasetTemplate,
			Name:        "ckan-dataset",
			Title:       "Open dataset metadata (CKAN)",
			Description: "A dataset's metadata on a configured CKAN portal (portal: its host, e.g. data.gov.il; " +
				"name: the dataset's name as in its page's URL), with its resources and its page's address.",
			MIMEType: "application/json",
			Icons:    icon("ckan"),
		}, s.readDataset)
	}
	if s.opts.Playlists == nil && s.opts.Conversations == nil {
		return
	}
	s.storeBacked, s.listed = true, map[string]*mcp.Resource{}
	// resources/list shows the stores as they are now, not as they were at
	// the last change this process saw (another process may have written).
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				s.sync(ctx)
			}
			return next(ctx, method, req)
		}
	})
	if s.opts.Changes != nil {
		s.opts.Changes.subscribe(s.syncSoon)
	}
}

// mimeOf is a playlist format's media type, without parameters.
func mimeOf(format string) string {
	mt, _, _ := strings.Cut(playlist.ContentType(format), ";")
	return mt
}

// sync makes the listed resources those of the stores' newest playlists and
// conversations. Adding or removing any makes the SDK send
// notifications/resources/list_changed to the sessions (debounced). A store
// that fails leaves its part of the list as it was.
func (s *service) sync(ctx context.Context) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	// A store that does not answer (a database being restarted) costs a
	// listing or a call this long at most; the list then stays as it was.
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	want := map[string]*mcp.Resource{}
	keep := func(prefix string) { // what a failed store leaves listed
		for uri, r := range s.listed {
			if strings.HasPrefix(uri, prefix) {
				want[uri] = r
			}
		}
	}
	if s.opts.Playlists != nil {
		page, err := s.opts.Playlists.ListPlaylists(ctx, store.ListOptions{Limit: maxListed})
		if err != nil {
			s.logger.Warn("mcpserver: listing playlists", "error", err)
			keep(playlistPrefix)
		}
		for _, p := range page.Playlists {
			for _, f := range []string{playlist.FormatJSON, playlist.FormatM3U8} {
				uri := playlistPrefix + url.PathEscape(p.ID) + "." + f
				want[uri] = &mcp.Resource{URI: uri, Name: "playlist-" + p.ID + "." + f,
					Title:       fmt.Sprintf("%s (%s)", p.Title, strings.ToUpper(f)),
					Description: p.Description, MIMEType: mimeOf(f), Icons: icon("music")}
			}
		}
	}
	if s.opts.Conversations != nil {
		convs, err := s.opts.Conversations.RecentConversations(ctx, maxListed)
		if err != nil {
			s.logger.Warn("mcpserver: listing conversations", "error", err)
			keep(conversationPrefix)
		}
		for _, c := range convs {
			uri := conversationPrefix + url.PathEscape(c.ID) + ".md"
			title := c.Title
			if title == "" { // a conversation is titled at its first turn
				title = "Untitled conversation"
			}
			want[uri] = &mcp.Resource{URI: uri, Name: "conversation-" + c.ID + ".md",
				Title: title + " (Markdown)", MIMEType: "text/markdown", Icons: icon(serverIcon)}
		}
	}
	var gone []string
	for uri := range s.listed {
		if _, ok := want[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	for uri, r := range want {
		old, ok := s.listed[uri]
		if ok && old.Title == r.Title && old.Description == r.Description {
			continue
		}
		handler := s.readPlaylist
		if strings.HasPrefix(uri, conversationPrefix) {
			handler = s.readConversation
		}
		s.srv.AddResource(r, handler)
	}
	s.listed = want
}

// syncSoon syncs in the background, once for any number of requests that
// arrive while one is waiting to run.
func (s *service) syncSoon() {
	if !s.storeBacked {
		return
	}
	s.pendingMu.Lock()
	if s.pending {
		s.pendingMu.Unlock()
		return
	}
	s.pending = true
	s.pendingMu.Unlock()
	go func() {
		s.pendingMu.Lock()
		s.pending = false
		s.pendingMu.Unlock()
		s.sync(context.Background()) // bounded by listTimeout
	}()
}

// idOf returns the escaped id between prefix and suffix in uri.
func idOf(uri, prefix, suffix string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(rest, suffix)
	if !ok || rest == "" {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	if err != nil || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

func (s *service) readPlaylist(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	for _, f := range []string{playlist.FormatJSON, playlist.FormatM3U8} {
		id, ok := idOf(uri, playlistPrefix, "."+f)
		if !ok {
			continue
		}
		p, err := s.opts.Playlists.GetPlaylist(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, fmt.Errorf("reading playlist %s: %w", id, err)
		}
		body, err := playlist.Export(p, f)
		if err != nil {
			return nil, fmt.Errorf("exporting playlist %s: %w", id, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeOf(f), Text: string(body)}}}, nil
	}
	return nil, mcp.ResourceNotFoundError(uri)
}

func (s *service) readConversation(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := idOf(uri, conversationPrefix, ".md")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	body, err := s.opts.Conversations.ExportMarkdown(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("exporting conversation %s: %w", id, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: body}}}, nil
}

// readDataset reads ckan://{portal}/dataset/{name} from a configured portal.
// The template lets {portal} hold a path too; url.Parse then finds a path
// that is not /dataset/{name}, which is not found.
func (s *service) readDataset(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "ckan" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	name, ok := strings.CutPrefix(u.Path, "/dataset/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	body, _, err := s.opts.CKAN.Dataset(ctx, strings.ToLower(u.Host), name)
	var te *tool.Error
	switch {
	case errors.As(err, &te) && te.Code == tool.CodeNotFound:
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.As(err, &te) && (te.Code == tool.CodeBlocked || te.Code == tool.CodeInvalidURL):
		// The client named a portal Toolport is not configured for: its
		// mistake, said as such, not an internal error.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: te.Message}
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
}
