package server

import (
	"context"
	"errors"
	"net/http"
)

// DoctorFunc runs `toolport doctor`'s checks and returns the report (any
// JSON-encodable value). allowQuota includes the checks that spend the
// user's quota. It returns [ErrDoctorBusy] while another run is going.
type DoctorFunc func(ctx context.Context, allowQuota bool) (any, error)

// ErrDoctorBusy is returned by a DoctorFunc already running: each run may
// spend a request per upstream, so a page reloaded ten times must not
// multiply that.
var ErrDoctorBusy = errors.New("a doctor run is already in progress")

// doctor serves GET /api/doctor, the free checks of `toolport doctor --json`,
// and POST /api/doctor with {"quota":true}, which adds the checks that spend
// the user's quota (the settings panel's explicit second button). Spending
// quota is never a GET: a GET is outside the cross-origin guard, so an <img>
// on any site could fire a search, a model call and an embedding each time.
func (s *Server) doctor(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Doctor == nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "the doctor is not available on this server")
		return
	}
	var allowQuota bool
	if r.Method == http.MethodPost {
		var in struct {
			Quota bool `json:"quota"`
		}
		if !s.decodeBody(w, r, &in, true) {
			return
		}
		allowQuota = in.Quota
	} else if r.URL.Query().Has("quota") {
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			`checks that spend quota run only on POST /api/doctor with {"quota":true}`)
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
