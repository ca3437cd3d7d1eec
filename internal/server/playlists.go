package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/toolport/toolport/internal/playlist"
	"github.com/toolport/toolport/internal/store"
)

// The playlists suggestPlaylist stored: a listing, one playlist, and its
// download as M3U8 or JSON (the page's export button). They answer 404 when
// the server has no playlist store (Config.Playlists).

func (s *Server) playlistStore(w http.ResponseWriter) (store.Playlists, bool) {
	if s.cfg.Playlists == nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "this server keeps no playlists")
		return nil, false
	}
	return s.cfg.Playlists, true
}

func (s *Server) playlistError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such playlist")
	case errors.Is(err, context.Canceled):
	default:
		s.logger.ErrorContext(r.Context(), "store failure", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "the database failed")
	}
}

// listPlaylists answers GET /api/playlists?query=&limit=&offset=.
func (s *Server) listPlaylists(w http.ResponseWriter, r *http.Request) {
	ps, ok := s.playlistStore(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	opt := store.ListOptions{Query: q.Get("query")}
	for name, dst := range map[string]*int{"limit": &opt.Limit, "offset": &opt.Offset} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 1<<30 {
				writeError(w, http.StatusBadRequest, "BAD_REQUEST", name+" must be a non-negative integer")
				return
			}
			*dst = n
		}
	}
	if len(opt.Query) > store.MaxSearchQueryBytes {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "query is too long")
		return
	}
	page, err := ps.ListPlaylists(r.Context(), opt)
	if err != nil {
		s.playlistError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// getPlaylist answers GET /api/playlists/{id}: the stored playlist.
func (s *Server) getPlaylist(w http.ResponseWriter, r *http.Request) {
	ps, ok := s.playlistStore(w)
	if !ok {
		return
	}
	p, err := ps.GetPlaylist(r.Context(), r.PathValue("id"))
	if err != nil {
		s.playlistError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// exportPlaylist answers GET /api/playlists/{id}/export?format=m3u8|json
// (m3u8 by default) as a download.
func (s *Server) exportPlaylist(w http.ResponseWriter, r *http.Request) {
	ps, ok := s.playlistStore(w)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = playlist.FormatM3U8
	}
	ctype := playlist.ContentType(format)
	if ctype == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "format must be m3u8 or json")
		return
	}
	p, err := ps.GetPlaylist(r.Context(), r.PathValue("id"))
	if err != nil {
		s.playlistError(w, r, err)
		return
	}
	body, err := playlist.Export(p, format)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "playlist export", "playlist", p.ID, "error", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "the playlist could not be encoded")
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+playlist.Filename(p, format)+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
