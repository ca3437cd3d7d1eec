package server

import (
	"net/http"
	"sync"
	"time"
)

// sse writes a chat turn as Server-Sent Events: an "id: <turn id>:<seq>" line,
// one "data: <json>" line and a blank line per event, and ": ping" comments every heartbeat interval so that
// proxies keep an idle stream open. The response starts with the first event,
// so a turn that is refused before it starts can still answer with a JSON
// error and its status.
//
// Writes carry a deadline: a client that stops reading fails the writes (and
// its connection) instead of holding up the turn forever. After a failed
// write the rest of the turn's events are dropped; the turn itself goes on
// (the client may resume it on any replica with Last-Event-ID).
type sse struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	heartbeat    time.Duration
	writeTimeout time.Duration

	mu      sync.Mutex
	started bool
	failed  bool
	stop    chan struct{}
	done    chan struct{}
}

func newSSE(w http.ResponseWriter, heartbeat, writeTimeout time.Duration) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), heartbeat: heartbeat, writeTimeout: writeTimeout,
		stop: make(chan struct{}), done: make(chan struct{})}
}

// begun reports whether the stream has started.
func (s *sse) begun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// send sends one event with its SSE id.
func (s *sse) send(id string, data []byte) {
	frame := make([]byte, 0, len(id)+len(data)+16)
	frame = append(frame, "id: "...)
	frame = append(frame, id...)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.startLocked()
	}
	s.writeLocked(frame)
}

// failedWrite reports whether a write failed (the client stopped reading).
func (s *sse) failedWrite() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *sse) startLocked() {
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	s.w.WriteHeader(http.StatusOK)
	go s.ping()
}

func (s *sse) writeLocked(b []byte) {
	if s.failed {
		return
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if _, err := s.w.Write(b); err != nil {
		s.failed = true
		return
	}
	if err := s.rc.Flush(); err != nil {
		s.failed = true
	}
}

func (s *sse) ping() {
	defer close(s.done)
	t := time.NewTicker(s.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.writeLocked([]byte(": ping\n\n"))
			s.mu.Unlock()
		}
	}
}

// close stops the heartbeat; the handler returns after it.
func (s *sse) close() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	close(s.stop)
	if started {
		<-s.done
	}
}
