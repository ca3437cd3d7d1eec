package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/textclip"
)

// Check is an engine the server depends on, for /healthz and /readyz: the
// store is always the first ("store", required), then "turn-notes" (not
// required: whether the store's notes from other replicas arrive) when the
// store reports it; Config.Checks adds others (a Redis cache, a vector
// engine). Check's error is shown on /healthz, so
// it must not carry secrets (no URLs with passwords).
type Check struct {
	Name string
	// Required engines make /readyz fail while they are down; others only
	// show as down (the server works without them, degraded).
	Required bool
	Check    func(ctx context.Context) error
}

// checkTimeout bounds one check.
const checkTimeout = 2 * time.Second

// maxCheckError bounds the error text a check shows.
const maxCheckError = 200

type checkResult struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Status   string `json:"status"` // "up" or "down"
	Error    string `json:"error,omitempty"`
}

// runChecks runs every check at once; ready is false when a required one failed.
func (s *Server) runChecks(ctx context.Context) (results []checkResult, ready, healthy bool) {
	checks := []Check{{Name: "store", Required: true, Check: s.cfg.Store.Ping}}
	if n, ok := s.cfg.Store.(interface{ TurnNotesHealth(context.Context) error }); ok {
		checks = append(checks, Check{Name: "turn-notes", Check: n.TurnNotesHealth})
	}
	checks = append(checks, s.cfg.Checks...)
	results = make([]checkResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			res := checkResult{Name: c.Name, Required: c.Required, Status: "up"}
			if err := c.Check(cctx); err != nil {
				res.Status = "down"
				if i == 0 {
					// The driver's text can name the host and user.
					res.Error = "the database does not answer"
				} else {
					res.Error = textclip.Bytes(err.Error(), maxCheckError)
				}
				s.logger.WarnContext(ctx, "health check failed", "check", c.Name, "error", err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	ready, healthy = true, true
	for _, r := range results {
		if r.Status != "up" {
			healthy = false
			if r.Required {
				ready = false
			}
		}
	}
	return results, ready, healthy
}

type healthJSON struct {
	Status string        `json:"status"`
	Checks []checkResult `json:"checks"`
}

// healthz reports the process alive (200) with each engine's state: "ok",
// "degraded" (an optional engine is down) or "unavailable" (a required one
// is); a load balancer should route by /readyz.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	results, ready, healthy := s.runChecks(r.Context())
	status := "ok"
	switch {
	case !ready:
		status = "unavailable"
	case !healthy:
		status = "degraded"
	}
	writeJSON(w, http.StatusOK, healthJSON{status, results})
}

// readyz answers 503 while a required engine is down, so that a load
// balancer sends requests to other replicas.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	results, ready, _ := s.runChecks(r.Context())
	if !ready {
		writeJSON(w, http.StatusServiceUnavailable, healthJSON{"unavailable", results})
		return
	}
	writeJSON(w, http.StatusOK, healthJSON{"ok", results})
}
