package cluster_test

import "time"

// The waits below are these tests' subject, not ordering (CONTRIBUTING:
// "Tests wait on events, never on the clock"); each kind goes through one
// helper so that a grep for time.Sleep finds them here.

// pollAgain pauses before a readiness poll of another process (a replica's
// /readyz or health checks) asks again: that state is seen only by asking.
func pollAgain(d time.Duration) { time.Sleep(d) }

// pace is the load's pacing: turns spread over a window, searches at a
// steady rate, a pause before resuming on a live replica, an upstream that
// takes a while. The cluster is measured under load in real time.
func pace(d time.Duration) { time.Sleep(d) }
