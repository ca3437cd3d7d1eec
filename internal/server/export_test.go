package server

import "errors"

// Kill simulates the process dying: background work (lease renewal, the
// sweeper, notes) stops and running turns are canceled, and the server
// writes nothing more about its turns (no end, no more events).
func (s *Server) Kill() {
	s.turns.dead.Store(true)
	s.turns.bgCancel()
	s.turns.bgWG.Wait()
	s.turns.cancelBase(errors.New("killed"))
}
