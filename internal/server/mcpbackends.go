package server

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// mcpConversations serves the conversations to /mcp as resources, in the
// Markdown of the export endpoint.
type mcpConversations struct{ st Store }

func (m mcpConversations) RecentConversations(ctx context.Context, limit int) ([]mcpserver.ConversationInfo, error) {
	page, err := m.st.ListConversations(ctx, store.ListOptions{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]mcpserver.ConversationInfo, len(page.Conversations))
	for i, c := range page.Conversations {
		out[i] = mcpserver.ConversationInfo{ID: c.ID, Title: c.Title}
	}
	return out, nil
}

// ExportMarkdown renders the export as the store reads it: an MCP resource
// is one JSON-RPC message, so the Markdown is held whole, but the
// conversation (whose tool results it clips) is not.
func (m mcpConversations) ExportMarkdown(ctx context.Context, id string) (string, error) {
	var out strings.Builder
	b := bufio.NewWriterSize(&out, 64<<10)
	n := 0
	err := m.st.StreamConversation(ctx, id, func(c store.Conversation, _ *store.Usage) error {
		markdownHead(b, c)
		return nil
	}, func(msg store.Message) error {
		n++
		markdownMessage(b, n, msg)
		return nil
	})
	if err != nil {
		return "", err
	}
	if err := b.Flush(); err != nil {
		return "", fmt.Errorf("export conversation %s: %w", id, err)
	}
	return out.String(), nil
}

// mcpOptions completes opts with what the server itself holds: the
// conversations, the playlists, and the changes its chat turns make.
func mcpOptions(cfg Config, opts mcpserver.Options, changes *mcpserver.Changes) mcpserver.Options {
	opts.Name, opts.Version, opts.Logger = "toolport", cfg.Version, cfg.Logger
	opts.Conversations, opts.Changes = mcpConversations{cfg.Store}, changes
	if cfg.Playlists != nil {
		opts.Playlists = cfg.Playlists
	}
	return opts
}

// writes reports whether a call of the tool name may have changed a store
// (it is not read-only), so that MCP clients are told to list again.
func writes(reg *tool.Registry, name string) bool {
	t, ok := reg.Lookup(name)
	return ok && !t.Spec().Annotations.ReadOnly
}
