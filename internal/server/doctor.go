package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// DoctorFunc runs `toolport doctor`'s checks and returns the report (any
// JSON-encodable value). allowQuota includes the checks that spend the
// user's quota. It returns [ErrDoctorBusy] while another run is going.
type DoctorFunc func(ctx context.Context, allowQuota bool) (any, error)

// ErrDoctorBusy is returned by a DoctorFunc already running: each run may
// spend a request per upstream, so a page reloaded ten times must not
// multiply that.
var ErrDoctorBusy = errors.New("a doctor run is already in progress")

// doctor serves GET /api/doctor[?quota=1]: the same report as `toolport
// doctor --json`. Checks that cost quota run only with quota=1, the
// settings panel's explicit second button.
func (s *Server) doctor(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Doctor == nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "the doctor is not available on this server")
		return
	}
	var allowQuota bool
	switch strings.ToLower(r.URL.Query().Get("quota")) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		allowQuota = true
	default:
		writeError(w, http.StatusBadRequest, "VALIDATION", "quota must be 1 or 0")
		return
	}
	rep, err := s.cfg.Doctor(r.Context(), allowQuota)
	switch {
	case errors.Is(err, ErrDoctorBusy):
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, "BUSY", err.Error())
	case err != nil:
		s.logger.ErrorContext(r.Context(), "doctor failed", "error", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "the doctor could not run")
	default:
		writeJSON(w, http.StatusOK, rep)
	}
}
