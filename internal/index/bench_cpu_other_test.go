//go:build !linux

package index

import "time"

// threadCPU is wall time in seconds where the thread's CPU time is not
// read: the benchmark's cpu figures are then wall-clock figures.
func threadCPU() float64 { return float64(time.Now().UnixNano()) / 1e9 }
