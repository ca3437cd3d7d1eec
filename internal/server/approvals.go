package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
)

// maxDecisions bounds the decisions of one request: a model step asks for
// a handful of calls.
const maxDecisions = 64

// approvalRoutes adds the endpoints of tool-call approval (see
// agent.Agent.Approve): the calls waiting in a conversation, and the
// decisions that resume its turn.
func (s *Server) approvalRoutes(api func(pattern string, h http.HandlerFunc)) {
	api("GET /api/conversations/{id}/approvals", s.pendingApprovals)
	api("POST /api/conversations/{id}/approvals", s.approve)
}

// pendingApprovals lists the tool calls waiting for the person's decision:
// GET /api/conversations/{id}/approvals answers {"approvals": [event…]},
// each as the approval_required event that announced it, so that a page
// reloaded (or served by another replica) shows the cards again.
func (s *Server) pendingApprovals(w http.ResponseWriter, r *http.Request) {
	c, err := s.cfg.Store.GetConversation(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	pending := s.agent.Pending(c)
	out := make([]agent.Event, len(pending))
	for i, p := range pending {
		out[i] = p
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

// approve resumes a turn stopped for approval: POST
// /api/conversations/{id}/approvals with {"decisions": [{"toolUseId": "…",
// "decision": "allow_once" | "allow_always" | "deny"}]}, one per waiting
// call. The resumed turn streams as POST …/messages does; it is claimed like
// any turn, so it cannot overlap another of the conversation.
func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Decisions []agent.ToolDecision `json:"decisions"`
	}
	if !s.decodeBody(w, r, &body, false) {
		return
	}
	if len(body.Decisions) == 0 || len(body.Decisions) > maxDecisions {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"decisions" must list one decision per waiting call`)
		return
	}
	id := r.PathValue("id")
	err := s.runStreamedTurn(w, r, id, func(ctx context.Context, f store.Fence, emit func(agent.Event)) error {
		return s.agent.Approve(ctx, f, id, body.Decisions, emit)
	})
	switch {
	case err == nil:
	case errors.Is(err, agent.ErrNoPendingApproval):
		writeError(w, http.StatusConflict, "CONFLICT", "no tool call is waiting for approval in this conversation")
	case errors.Is(err, agent.ErrBadDecision):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
	default:
		s.replaceError(w, r, err)
	}
}
