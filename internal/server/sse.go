package server

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/agent"
)

// sse writes a chat turn as Server-Sent Events: one "data: <json>" line and a
// blank line per event, and ": ping" comments every heartbeat interval so that
// proxies keep an idle stream open. The response starts with the first event,
// so a turn that is refused before it starts can still answer with a JSON
// error and its status.
//
// Writes carry a deadline: a client that stops reading fails the writes (and
// its connection) instead of holding up the turn forever. After a failed
// write the rest of the turn's events are dropped; the turn itself learns
// that the client left from its context.
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

// emit sends one event; it is the agent's emit function.
func (s *sse) emit(ev agent.Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		// Cannot happen for the agent's event types; never break the frame.
		data = []byte(`{"type":"error","code":"INTERNAL","message":"an event could not be encoded","retryable":false}`)
	}
	frame := make([]byte, 0, len(data)+8)
	frame = append(frame, "data: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.startLocked()
	}
	s.writeLocked(frame)
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
