package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// DemoIndex loads the built-in demo tracks into the music index for POST
// /api/index/demo, so that a first run with no keys can search music;
// music.DemoIndex implements it (the code of `toolport index add --demo`).
type DemoIndex interface {
	// Tracks counts the records in the index.
	Tracks(ctx context.Context) (int, error)
	// Demo is the number of tracks a load reads.
	Demo() int
	// Load loads them, calling progress with the tracks read so far, and
	// reports how many were new.
	Load(ctx context.Context, progress func(read int)) (added int, err error)
}

// demoLoadTimeout bounds one load: the whole set takes well under a minute
// on a laptop, and a load stuck on a store must not hold the one slot.
const demoLoadTimeout = 15 * time.Minute

// demoJob is the state of the (one) demo load of this process.
type demoJob struct {
	Status     string     `json:"status"` // running, succeeded, failed
	Read       int        `json:"read"`   // tracks read so far
	Total      int        `json:"total"`  // tracks the load reads
	Added      int        `json:"added"`
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`

	done chan struct{} // closed when the load ends
}

// demoState is GET /api/index/demo's answer: the index's size and the load.
type demoState struct {
	// Tracks are the records in the index now.
	Tracks int `json:"tracks"`
	// DemoTracks is how many tracks a load brings.
	DemoTracks int      `json:"demoTracks"`
	Job        *demoJob `json:"job"`
}

type demoLoads struct {
	mu  sync.Mutex
	job *demoJob
}

func (s *Server) demoRoutes(api func(pattern string, h http.HandlerFunc)) {
	s.demo = &demoLoads{}
	api("GET /api/index/demo", s.demoStatus)
	api("POST /api/index/demo", s.startDemoLoad)
}

// state reads the index's size and a copy of the job.
func (s *Server) demoState(ctx context.Context) (demoState, error) {
	n, err := s.cfg.DemoIndex.Tracks(ctx)
	st := demoState{Tracks: n, DemoTracks: s.cfg.DemoIndex.Demo()}
	s.demo.mu.Lock()
	if s.demo.job != nil {
		j := *s.demo.job
		st.Job = &j
	}
	s.demo.mu.Unlock()
	return st, err
}

func (s *Server) demoStatus(w http.ResponseWriter, r *http.Request) {
	if s.cfg.DemoIndex == nil {
		writeError(w, http.StatusServiceUnavailable, "NOT_CONFIGURED", "this server has no music index")
		return
	}
	st, err := s.demoState(r.Context())
	if err != nil {
		s.logger.WarnContext(r.Context(), "index status", "error", err)
		writeError(w, http.StatusInternalServerError, "STORE_ERROR", "the index could not be read")
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// startDemoLoad starts the load, or answers with the one under way (202)
// or the one done (200): a second POST never loads twice, so a double
// click or a second tab is harmless. A failed load may be started again.
// The request has no parameters: how many tracks load is the server's
// configuration, not the client's choice.
func (s *Server) startDemoLoad(w http.ResponseWriter, r *http.Request) {
	if s.cfg.DemoIndex == nil {
		writeError(w, http.StatusServiceUnavailable, "NOT_CONFIGURED", "this server has no music index")
		return
	}
	var none struct{}
	if !s.decodeBody(w, r, &none, true) {
		return
	}
	d := s.demo
	d.mu.Lock()
	if j := d.job; j != nil && j.Status != buildFailed {
		d.mu.Unlock()
		st, err := s.demoState(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, "STORE_ERROR", "the index could not be read")
			return
		}
		code := http.StatusOK
		if st.Job.Status == buildRunning {
			code = http.StatusAccepted
		}
		writeJSON(w, code, st)
		return
	}
	job := &demoJob{Status: buildRunning, Total: s.cfg.DemoIndex.Demo(), StartedAt: time.Now().UTC(), done: make(chan struct{})}
	d.job = job
	d.mu.Unlock()

	// The load outlives the request (the page polls GET), bounded by its
	// own deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), demoLoadTimeout)
	go func() {
		defer close(job.done)
		defer cancel()
		added, err := s.cfg.DemoIndex.Load(ctx, func(read int) {
			d.mu.Lock()
			job.Read = read
			d.mu.Unlock()
		})
		now := time.Now().UTC()
		d.mu.Lock()
		defer d.mu.Unlock()
		job.Added, job.FinishedAt = added, &now
		if err != nil {
			job.Status = buildFailed
			job.Error = "the demo tracks could not be loaded; the server log says why"
			if errors.Is(err, context.DeadlineExceeded) {
				job.Error = "the demo load took too long and stopped; what it loaded is kept, load again to complete it"
			}
			s.logger.Warn("demo index load failed", "error", err)
			return
		}
		job.Status, job.Read = buildSucceeded, job.Total
	}()
	st, err := s.demoState(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "STORE_ERROR", "the index could not be read")
		return
	}
	w.Header().Set("Location", "/api/index/demo")
	writeJSON(w, http.StatusAccepted, st)
}
