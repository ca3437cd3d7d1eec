package server

// Kill simulates the process dying: background work (lease renewal, the
// sweeper, notes) stops and running turns are canceled, and the server
// writes nothing more about its turns (no end, no more events).
func (s *Server) Kill() { s.turns.Kill() }

// HoldTurnStart counts a turn as starting until release is called, as a
// turn between its claim and its first logged event is counted.
func (s *Server) HoldTurnStart() (release func()) { return s.turns.HoldStart() }
