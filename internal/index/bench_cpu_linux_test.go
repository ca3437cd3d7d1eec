package index

import "golang.org/x/sys/unix"

// threadCPU is the calling thread's CPU time in seconds (the caller locks
// its goroutine to the thread): unlike wall time, it does not count the
// time other processes of a loaded machine take the core.
func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Nano()) / 1e9
}
