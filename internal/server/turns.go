package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/turn"
)

// Defaults of the turn settings of [Config].
const (
	DefaultTurnLease           = turn.DefaultLease
	DefaultTurnEventsRetention = turn.DefaultEventsRetention
	DefaultStartPrecedence     = turn.DefaultStartPrecedence
)

// streamTurn sends turn id's events after seq after as SSE, until the turn
// ends, the client leaves or the server shuts down. It answers 204 when the
// turn has ended and there is nothing left to send.
func (s *Server) streamTurn(w http.ResponseWriter, r *http.Request, id string, after int64) {
	s.streams.Add(1)
	defer s.streams.Done()
	s.metrics.streamsOpen.Inc()
	defer s.metrics.streamsOpen.Dec()
	out := newSSE(w, s.cfg.HeartbeatInterval, s.cfg.WriteTimeout)
	defer out.close()
	ctx := r.Context()
	err := s.turns.Follow(ctx, id, after, func(ev store.TurnEvent) bool {
		out.send(id+":"+strconv.FormatInt(ev.Seq, 10), ev.Data)
		return !out.failedWrite()
	})
	switch {
	case ctx.Err() != nil || out.begun():
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the turn's events cannot be read now; retry")
	default:
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	}
}

// maxResumeSeq bounds the sequence number a Last-Event-ID may carry.
const maxResumeSeq = 1 << 40

// resumePoint reads where a client resumes: the Last-Event-ID header, or the
// lastEventId query parameter (for an EventSource's first request), as
// "<turn id>:<seq>" or "<seq>". ok is false when it is malformed.
func resumePoint(r *http.Request) (turnID string, seq int64, ok bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", 0, true
	}
	if len(v) > 128 {
		return "", 0, false
	}
	n := v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		turnID, n = v[:i], v[i+1:]
		if turnID == "" || strings.ContainsAny(turnID, " \t\r\n:") {
			return "", 0, false
		}
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq < 0 || seq > maxResumeSeq {
		return "", 0, false
	}
	return turnID, seq, true
}

// postMessage starts a turn and streams it. The turn goes on when the client
// leaves; the client can resume with GET …/turns/{turnId}/events or
// GET …/stream, or stop it with POST …/stop.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
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
	err := s.runStreamedTurn(w, r, id, func(ctx context.Context, f store.Fence, emit func(agent.Event)) error {
		return s.agent.Turn(ctx, f, id, *body.Content, emit)
	})
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such conversation")
	case errors.Is(err, agent.ErrEmptyMessage):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"content" must be a non-empty string`)
	default:
		s.storeError(w, r, err)
	}
}

// runStreamedTurn claims conversation conv, starts run as its turn and
// streams the turn's events as the response. It answers 409 itself when the
// conversation is busy; it returns the error of a turn that could not start,
// for the caller to answer, and nil once the stream began.
func (s *Server) runStreamedTurn(w http.ResponseWriter, r *http.Request, conv string, run turn.Func) error {
	id, err := s.turns.Start(r.Context(), conv, run)
	switch {
	case errors.Is(err, store.ErrBusy):
		writeError(w, http.StatusConflict, "CONFLICT", "a reply is already being written in this conversation")
		return nil
	case r.Context().Err() != nil:
		return nil // the client left; the turn goes on
	case err != nil:
		return err
	}
	w.Header().Set("Toolport-Turn-Id", id)
	s.streamTurn(w, r, id, 0)
	return nil
}

// turnEvents resumes a turn's stream: GET
// /api/conversations/{id}/turns/{turnId}/events with Last-Event-ID.
func (s *Server) turnEvents(w http.ResponseWriter, r *http.Request) {
	tid, seq, ok := resumePoint(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `Last-Event-ID must be "<turn id>:<seq>" or "<seq>" as the stream sent it`)
		return
	}
	id := r.PathValue("turnId")
	if tid != "" && tid != id {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "Last-Event-ID names another turn")
		return
	}
	t, err := s.turns.Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.ConversationID != r.PathValue("id")) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such turn in this conversation (its events are kept for a while after it ends)")
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	w.Header().Set("Toolport-Turn-Id", id)
	s.streamTurn(w, r, id, seq)
}

// conversationStream follows a conversation's turn: GET
// /api/conversations/{id}/stream streams the running turn from its start, or,
// with Last-Event-ID, the turn it names after that event. 204 when no turn runs.
func (s *Server) conversationStream(w http.ResponseWriter, r *http.Request) {
	tid, seq, ok := resumePoint(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `Last-Event-ID must be "<turn id>:<seq>" as the stream sent it`)
		return
	}
	conv := r.PathValue("id")
	var t store.Turn
	var err error
	if tid != "" {
		t, err = s.turns.Get(r.Context(), tid)
		if err == nil && t.ConversationID != conv {
			err = store.ErrNotFound
		}
	} else {
		seq = 0
		t, err = s.turns.Running(r.Context(), conv)
	}
	if errors.Is(err, store.ErrNotFound) {
		if _, cerr := s.cfg.Store.GetConversation(r.Context(), conv); cerr != nil {
			s.storeError(w, r, cerr)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	w.Header().Set("Toolport-Turn-Id", t.ID)
	s.streamTurn(w, r, t.ID, seq)
}

// stopTurn stops a conversation's running turn, on whichever replica runs it:
// POST /api/conversations/{id}/stop, optionally {"turnId": "…"} to stop only
// that turn. 202 with the turn's id when a stop was asked for; 200 with
// "stopping": false when no turn runs.
func (s *Server) stopTurn(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TurnID string `json:"turnId"`
	}
	if !s.decodeBody(w, r, &body, true) {
		return
	}
	conv := r.PathValue("id")
	id, err := s.turns.Stop(r.Context(), r.PathValue("id"), body.TurnID)
	if errors.Is(err, store.ErrNotFound) {
		if _, cerr := s.cfg.Store.GetConversation(r.Context(), conv); cerr != nil {
			s.storeError(w, r, cerr)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"turnId": nil, "stopping": false})
		return
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"turnId": id, "stopping": true})
}

func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	// Leases are compared on their own clock.
	err := s.cfg.Store.DeleteIdleConversation(r.Context(), id, s.turns.Now())
	switch {
	case errors.Is(err, store.ErrBusy):
		writeError(w, http.StatusConflict, "CONFLICT", "a reply is being written in this conversation; stop it first")
	case err != nil:
		s.storeError(w, r, err)
	default:
		s.changes.Changed()
		w.WriteHeader(http.StatusNoContent)
	}
}
