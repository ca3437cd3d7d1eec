package metric

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"time"
)

// GoRuntime returns a collector of the Go runtime's figures under the names
// the Prometheus client's Go collector uses (go_memstats_*, go_gc_*,
// go_goroutines, go_threads, go_info, go_sched_gomaxprocs_threads).
//
// It reads runtime.MemStats rather than runtime/metrics: linking
// runtime/metrics runs its init (a table of every GODEBUG setting) at every
// start of every command.
//
// gogc is the GOGC the process started with ("" for the default): the
// caller reads it, as this package reads no environment.
func GoRuntime(gogc string) Collector { return goRuntime{gcPercent: gcPercent(gogc)} }

type goRuntime struct{ gcPercent float64 }

type memStat struct {
	name, help, typ string
	value           func(*runtime.MemStats) float64
}

var memStats = [...]memStat{
	{"go_memstats_alloc_bytes", "Bytes of allocated heap objects.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.Alloc) }},
	{"go_memstats_alloc_bytes_total", "Bytes allocated for heap objects since the process started, freed or not.", "counter", func(m *runtime.MemStats) float64 { return float64(m.TotalAlloc) }},
	{"go_memstats_buck_hash_sys_bytes", "Bytes of memory in profiling bucket hash tables.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.BuckHashSys) }},
	{"go_memstats_frees_total", "Heap objects freed since the process started.", "counter", func(m *runtime.MemStats) float64 { return float64(m.Frees) }},
	{"go_memstats_gc_sys_bytes", "Bytes of memory in garbage collection metadata.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.GCSys) }},
	{"go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects (as go_memstats_alloc_bytes).", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc) }},
	{"go_memstats_heap_idle_bytes", "Bytes in idle (unused) heap spans.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapIdle) }},
	{"go_memstats_heap_inuse_bytes", "Bytes in in-use heap spans.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapInuse) }},
	{"go_memstats_heap_objects", "Allocated heap objects.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapObjects) }},
	{"go_memstats_heap_released_bytes", "Bytes of heap memory returned to the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapReleased) }},
	{"go_memstats_heap_sys_bytes", "Bytes of heap memory obtained from the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapSys) }},
	{"go_memstats_last_gc_time_seconds", "When the last garbage collection finished, in seconds since 1970.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.LastGC) / 1e9 }},
	{"go_memstats_mallocs_total", "Heap objects allocated since the process started.", "counter", func(m *runtime.MemStats) float64 { return float64(m.Mallocs) }},
	{"go_memstats_mcache_inuse_bytes", "Bytes of allocated mcache structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MCacheInuse) }},
	{"go_memstats_mcache_sys_bytes", "Bytes of memory obtained from the operating system for mcache structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MCacheSys) }},
	{"go_memstats_mspan_inuse_bytes", "Bytes of allocated mspan structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MSpanInuse) }},
	{"go_memstats_mspan_sys_bytes", "Bytes of memory obtained from the operating system for mspan structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MSpanSys) }},
	{"go_memstats_next_gc_bytes", "Heap size at which the next garbage collection is due.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.NextGC) }},
	{"go_memstats_other_sys_bytes", "Bytes of memory in miscellaneous off-heap runtime allocations.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.OtherSys) }},
	{"go_memstats_stack_inuse_bytes", "Bytes in stack spans.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.StackInuse) }},
	{"go_memstats_stack_sys_bytes", "Bytes of stack memory obtained from the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.StackSys) }},
	{"go_memstats_sys_bytes", "Bytes of memory obtained from the operating system in all.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.Sys) }},
}

func (goRuntime) familyNames() []string {
	names := []string{"go_gc_duration_seconds", "go_gc_gogc_percent", "go_gc_gomemlimit_bytes",
		"go_goroutines", "go_info", "go_sched_gomaxprocs_threads", "go_threads"}
	for _, m := range memStats {
		names = append(names, m.name)
	}
	return names
}

func (g goRuntime) collect(s *scrape) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, m := range memStats {
		s.value(m.name, m.help, m.typ, m.value(&ms))
	}

	// The minimum, quartiles and maximum of the last pauses (the runtime
	// keeps 256), as the Prometheus client's summary has them.
	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	var b []byte
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		b = appendSample(b, "go_gc_duration_seconds", nil, nil, "quantile", q, gc.PauseQuantiles[i].Seconds())
	}
	b = appendSample(b, "go_gc_duration_seconds_sum", nil, nil, "", "", gc.PauseTotal.Seconds())
	b = appendSample(b, "go_gc_duration_seconds_count", nil, nil, "", "", float64(gc.NumGC))
	s.add("go_gc_duration_seconds", "Stop-the-world pause durations of garbage collection cycles.", "summary", b)

	s.value("go_gc_gogc_percent", "Heap growth target of the garbage collector in percent, from GOGC (-1: off).", "gauge", g.gcPercent)
	s.value("go_gc_gomemlimit_bytes", "Soft memory limit of the Go runtime (GOMEMLIMIT, runtime/debug.SetMemoryLimit).", "gauge", float64(debug.SetMemoryLimit(-1)))
	s.value("go_goroutines", "Goroutines that currently exist.", "gauge", float64(runtime.NumGoroutine()))
	s.add("go_info", "The Go version the program was built with.", "gauge",
		appendSample(nil, "go_info", []string{"version"}, []string{runtime.Version()}, "", "", 1))
	s.value("go_sched_gomaxprocs_threads", "GOMAXPROCS: threads that can run Go code at once.", "gauge", float64(runtime.GOMAXPROCS(0)))
	threads, _ := runtime.ThreadCreateProfile(nil)
	s.value("go_threads", "Operating system threads created.", "gauge", float64(threads))
}

// gcPercent reads GOGC as the runtime does at start: "off" is -1, a number
// is itself, anything else is the default 100. The runtime offers no way to
// read a later debug.SetGCPercent outside runtime/metrics; Toolport calls it
// only in `toolport call`, never in the server.
func gcPercent(env string) float64 {
	if env == "off" {
		return -1
	}
	if n, err := strconv.ParseInt(env, 10, 32); err == nil {
		return float64(n)
	}
	return 100
}
