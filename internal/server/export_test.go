package server

import "context"

// Kill simulates the process dying: background work (lease renewal, the
// sweeper, notes) stops and running turns are canceled, and the server
// writes nothing more about its turns (no end, no more events).
func (s *Server) Kill() { s.turns.Kill() }

// HoldTurnStart counts a turn as starting until release is called, as a
// turn between its claim and its first logged event is counted.
func (s *Server) HoldTurnStart() (release func()) { return s.turns.HoldStart() }

// WaitTurns waits until no turn runs on this server (each one's end is in
// the store, its answer saved), or ctx ends; it reports whether they all
// ended.
func (s *Server) WaitTurns(ctx context.Context) bool { return s.turns.Wait(ctx) }

// WaitStreams waits until no chat stream is open on this server, or ctx
// ends; it reports whether they all closed.
func (s *Server) WaitStreams(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { s.streams.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// WaitDemoLoad waits until the demo load under way (if any) has ended, or
// ctx ends; it reports whether no load is running.
func (s *Server) WaitDemoLoad(ctx context.Context) bool {
	s.demo.mu.Lock()
	j := s.demo.job
	s.demo.mu.Unlock()
	if j == nil {
		return true
	}
	select {
	case <-j.done:
		return true
	case <-ctx.Done():
		return false
	}
}
