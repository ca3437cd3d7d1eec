package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/isrc"
	"github.com/toolport/toolport/internal/textclip"
)

// IndexBuilder runs index builds (`toolport index build`) for the
// /api/index/build job; *ingest.Builder implements it.
type IndexBuilder interface {
	Build(ctx context.Context, req ingest.Request, progress func(ingest.Report)) (ingest.Report, error)
}

// Job states.
const (
	buildRunning   = "running"
	buildSucceeded = "succeeded" // every track processed (some may have failed: see the report)
	buildFailed    = "failed"    // stopped by an error (the store)
	buildCanceled  = "canceled"
)

// maxBuildISRCs bounds the ISRCs one job request names.
const maxBuildISRCs = 5000

// buildEventEvery bounds how often progress events are sent on a stream.
const buildEventEvery = 200 * time.Millisecond

// indexBuildJob is one build run through the API.
type indexBuildJob struct {
	ID         string        `json:"id"`
	Status     string        `json:"status"`
	DryRun     bool          `json:"dryRun"`
	StartedAt  time.Time     `json:"startedAt"`
	FinishedAt *time.Time    `json:"finishedAt,omitempty"`
	Error      string        `json:"error,omitempty"`
	Report     ingest.Report `json:"report"`

	cancel  context.CancelFunc
	changed chan struct{} // closed and replaced on every change
}

// indexBuilds holds the current (or last) job: one runs at a time.
type indexBuilds struct {
	mu  sync.Mutex
	job *indexBuildJob
}

func (s *Server) indexBuildRoutes(api func(pattern string, h http.HandlerFunc)) {
	s.builds = &indexBuilds{}
	api("POST /api/index/build", s.startIndexBuild)
	api("GET /api/index/build", s.indexBuildStatus)
	api("DELETE /api/index/build", s.cancelIndexBuild)
	api("GET /api/index/build/events", s.indexBuildEvents)
}

// snapshot returns a copy of the job safe to encode, and the channel that
// is closed on its next change.
func (b *indexBuilds) snapshot() (indexBuildJob, <-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.job == nil {
		return indexBuildJob{}, nil, false
	}
	j := *b.job
	return j, b.job.changed, true
}

// change updates the job under the lock and wakes its watchers.
func (b *indexBuilds) change(j *indexBuildJob, fn func(j *indexBuildJob)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn(j)
	close(j.changed)
	j.changed = make(chan struct{})
}

type indexBuildRequest struct {
	ISRCs  []string `json:"isrcs"`
	DryRun bool     `json:"dryRun"`
}

func (s *Server) startIndexBuild(w http.ResponseWriter, r *http.Request) {
	if s.cfg.IndexBuild == nil {
		writeError(w, http.StatusServiceUnavailable, "NOT_CONFIGURED", "index builds are not available on this server")
		return
	}
	var in indexBuildRequest
	if !s.decodeBody(w, r, &in, true) {
		return
	}
	if len(in.ISRCs) > maxBuildISRCs {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "too many isrcs: at most 5000 a build")
		return
	}
	req := ingest.Request{DryRun: in.DryRun}
	for _, raw := range in.ISRCs {
		n, err := isrc.Normalize(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "isrcs: "+textclip.Bytes(raw, 40)+" is not an ISRC")
			return
		}
		req.ISRCs = append(req.ISRCs, n)
	}
	b := s.builds
	b.mu.Lock()
	if b.job != nil && b.job.Status == buildRunning {
		j := *b.job
		b.mu.Unlock()
		writeJSON(w, http.StatusConflict, struct {
			Error apiError      `json:"error"`
			Job   indexBuildJob `json:"job"`
		}{apiError{"CONFLICT", "an index build is already running: watch it, or cancel it with DELETE /api/index/build"}, j})
		return
	}
	// The job outlives the request: it ends with its own cancel (DELETE)
	// or the process. A build is resumable, so a process that exits
	// mid-build loses only the stages in flight.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	job := &indexBuildJob{ID: newJobID(), Status: buildRunning, DryRun: in.DryRun, StartedAt: time.Now().UTC(),
		cancel: cancel, changed: make(chan struct{})}
	job.Report.Stages, job.Report.Failed, job.Report.Calls = map[string]*ingest.StageCounts{}, []ingest.Failure{}, map[string]int{}
	b.job = job
	snap := *job
	b.mu.Unlock()

	go func() {
		defer cancel()
		rep, err := s.cfg.IndexBuild.Build(ctx, req, func(rep ingest.Report) {
			b.change(job, func(j *indexBuildJob) { j.Report = rep })
		})
		b.change(job, func(j *indexBuildJob) {
			now := time.Now().UTC()
			j.Report, j.FinishedAt = rep, &now
			switch {
			case errors.Is(err, context.Canceled):
				j.Status, j.Error = buildCanceled, "canceled; finished stages are kept, and the next build resumes"
			case err != nil:
				j.Status, j.Error = buildFailed, err.Error()
				s.logger.Warn("index build failed", "job", j.ID, "error", err)
			default:
				j.Status = buildSucceeded
			}
		})
	}()
	w.Header().Set("Location", "/api/index/build")
	writeJSON(w, http.StatusAccepted, snap)
}

func (s *Server) indexBuildStatus(w http.ResponseWriter, r *http.Request) {
	j, _, ok := s.builds.snapshot()
	if !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no index build has run since the server started")
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) cancelIndexBuild(w http.ResponseWriter, r *http.Request) {
	b := s.builds
	b.mu.Lock()
	if b.job == nil || b.job.Status != buildRunning {
		b.mu.Unlock()
		writeError(w, http.StatusConflict, "NOT_RUNNING", "no index build is running")
		return
	}
	b.job.cancel()
	j := *b.job
	b.mu.Unlock()
	writeJSON(w, http.StatusAccepted, j)
}

// indexBuildEvents streams the job as Server-Sent Events: a "progress"
// event with the job (its report's per-stage counts) at most every
// buildEventEvery while it changes, then one "done" event, and the stream
// ends. A finished job gets its "done" event at once.
func (s *Server) indexBuildEvents(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := s.builds.snapshot(); !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no index build has run since the server started")
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(frame []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := w.Write(frame); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	event := func(typ string, j indexBuildJob) bool {
		data, err := json.Marshal(struct {
			Type string        `json:"type"`
			Job  indexBuildJob `json:"job"`
		}{typ, j})
		if err != nil {
			data = []byte(`{"type":"error","message":"the event could not be encoded"}`)
		}
		return send(append(append([]byte("data: "), data...), "\n\n"...))
	}
	ping := time.NewTicker(s.cfg.HeartbeatInterval)
	defer ping.Stop()
	for {
		j, changed, _ := s.builds.snapshot()
		if j.Status != buildRunning {
			event("done", j)
			return
		}
		if !event("progress", j) {
			return
		}
		// Coalesce: wait for a change, then at least buildEventEvery.
		for waiting := true; waiting; {
			select {
			case <-r.Context().Done():
				return
			case <-ping.C:
				if !send([]byte(": ping\n\n")) {
					return
				}
			case <-changed:
				waiting = false
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(buildEventEvery):
		}
	}
}

func newJobID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "build_" + hex.EncodeToString(b[:])
}
