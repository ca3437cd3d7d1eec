package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// regenerate answers a conversation's last user message again:
// POST /api/conversations/{id}/regenerate, with no body or {}. The previous
// answer is deleted, not kept as a branch; the new one streams as
// POST …/messages does.
func (s *Server) regenerate(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if !s.decodeBody(w, r, &body, true) {
		return
	}
	id := r.PathValue("id")
	err := s.runStreamedTurn(w, r, id, func(ctx context.Context, f store.Fence, emit func(agent.Event)) error {
		return s.agent.Regenerate(ctx, f, id, emit)
	})
	s.replaceError(w, r, err)
}

// editMessage replaces an earlier user message and answers it:
// PUT /api/conversations/{id}/messages/{messageId} with {"content": "…"}.
// That message and every later one are deleted (the old branch is not kept);
// the turn streams as POST …/messages does.
func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content *string `json:"content"`
	}
	if !s.decodeBody(w, r, &body, false) {
		return
	}
	if body.Content == nil || strings.TrimSpace(*body.Content) == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"content" must be a non-empty string`)
		return
	}
	id, msg := r.PathValue("id"), r.PathValue("messageId")
	err := s.runStreamedTurn(w, r, id, func(ctx context.Context, f store.Fence, emit func(agent.Event)) error {
		return s.agent.Edit(ctx, f, id, msg, *body.Content, emit)
	})
	s.replaceError(w, r, err)
}

// replaceError answers a regenerate or edit that could not start.
func (s *Server) replaceError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such conversation or message")
	case errors.Is(err, agent.ErrNothingToRegenerate):
		writeError(w, http.StatusConflict, "CONFLICT", "the conversation has no message to answer again")
	case errors.Is(err, agent.ErrNotUserMessage):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "only the user's messages can be edited")
	case errors.Is(err, agent.ErrEmptyMessage):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"content" must be a non-empty string`)
	default:
		s.storeError(w, r, err)
	}
}

// modelJSON is a model in GET /api/info.
type modelJSON struct {
	Name string `json:"name"`
	// ContextWindow is the model's limit in tokens, absent when unknown.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// modelsJSON lists the models a conversation can choose, the default first.
func (s *Server) modelsJSON() []modelJSON {
	ms := s.agent.Models()
	out := make([]modelJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, modelJSON{m.Name, m.ContextWindow})
	}
	return out
}

// setModel validates and stores a conversation's model choice: a name from
// GET /api/info's models, or "" for the default. It writes the error and
// returns false when it fails.
func (s *Server) setModel(w http.ResponseWriter, r *http.Request, id, model string) bool {
	model = strings.TrimSpace(model)
	if model != "" && !s.agent.HasModel(model) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"model" must be one of the models GET /api/info lists, or "" for the default`)
		return false
	}
	if err := s.cfg.Store.SetConversationModel(r.Context(), id, model); err != nil {
		s.storeError(w, r, err)
		return false
	}
	return true
}

// usageTotal sums the token usage of a conversation's messages; nil when
// none reported any.
func usageTotal(msgs []store.Message) *store.Usage {
	var total *store.Usage
	for _, m := range msgs {
		if m.Usage == nil {
			continue
		}
		if total == nil {
			total = &store.Usage{}
		}
		total.InputTokens += m.Usage.InputTokens
		total.OutputTokens += m.Usage.OutputTokens
	}
	return total
}

// changeModel answers PATCH /api/conversations/{id} with only a model.
func (s *Server) changeModel(w http.ResponseWriter, r *http.Request, model string) {
	id := r.PathValue("id")
	if !s.setModel(w, r, id, model) {
		return
	}
	c, err := s.cfg.Store.GetConversation(r.Context(), id)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, conversationJSON{c.ID, c.Title, c.CreatedAt, c.UpdatedAt, c.Model})
}
