package metric

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Process returns a collector of the process's figures from /proc, under
// the names the Prometheus client's process collector uses. A figure whose
// source cannot be read is left out of the scrape.
func Process() Collector { return process{proc: "/proc"} }

type process struct{ proc string }

var errMalformed = errors.New("metric: malformed /proc file")

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go supports.
const userHZ = 100

func (process) familyNames() []string {
	return []string{"process_cpu_seconds_total", "process_max_fds", "process_network_receive_bytes_total",
		"process_network_transmit_bytes_total", "process_open_fds", "process_resident_memory_bytes",
		"process_start_time_seconds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes"}
}

func (p process) collect(s *scrape) {
	if st, err := readStat(p.proc); err == nil {
		s.value("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", "counter", float64(st.utime+st.stime)/userHZ)
		s.value("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", float64(st.rss*uint64(os.Getpagesize())))
		s.value("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", float64(st.vsize))
		if boot, err := bootTime(p.proc); err == nil {
			s.value("process_start_time_seconds", "When the process started, in seconds since 1970.", "gauge", float64(boot)+float64(st.start)/userHZ)
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		s.value("process_max_fds", "Limit on open file descriptors (soft).", "gauge", float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		s.value("process_virtual_memory_max_bytes", "Limit on virtual memory in bytes (soft).", "gauge", float64(lim.Cur))
	}
	if fds, err := os.ReadDir(p.proc + "/self/fd"); err == nil {
		// Less the descriptor ReadDir itself held open.
		s.value("process_open_fds", "Open file descriptors.", "gauge", float64(len(fds)-1))
	}
	if rx, tx, err := netBytes(p.proc); err == nil {
		s.value("process_network_receive_bytes_total", "Bytes received over the network by the process's network namespace.", "counter", float64(rx))
		s.value("process_network_transmit_bytes_total", "Bytes sent over the network by the process's network namespace.", "counter", float64(tx))
	}
}

type stat struct {
	utime, stime, start, vsize, rss uint64
}

// readStat parses /proc/self/stat (proc(5)). The command name, field 2, may
// hold spaces and parentheses, so fields are counted from its last ')'.
func readStat(proc string) (stat, error) {
	b, err := os.ReadFile(proc + "/self/stat")
	if err != nil {
		return stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errMalformed
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, state
	if len(f) < 22 {
		return stat{}, errMalformed
	}
	var st stat
	for _, v := range []struct {
		field int
		dst   *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.start}, {23, &st.vsize}, {24, &st.rss}} {
		if *v.dst, err = strconv.ParseUint(string(f[v.field-3]), 10, 64); err != nil {
			return stat{}, errMalformed
		}
	}
	return st, nil
}

// bootTime is /proc/stat's btime, the boot in seconds since 1970.
func bootTime(proc string) (uint64, error) {
	b, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, errMalformed
}

// netBytes sums received and sent bytes over the interfaces of
// /proc/self/net/dev (two header lines, then "name: rx-bytes … tx-bytes …",
// transmit starting at the ninth number).
func netBytes(proc string) (rx, tx uint64, err error) {
	b, err := os.ReadFile(proc + "/self/net/dev")
	if err != nil {
		return 0, 0, err
	}
	n := 0
	for line := range bytes.Lines(b) {
		if n++; n <= 2 {
			continue
		}
		_, counters, ok := bytes.Cut(line, []byte(":"))
		f := bytes.Fields(counters)
		if !ok || len(f) < 9 {
			return 0, 0, errMalformed
		}
		r, err1 := strconv.ParseUint(string(f[0]), 10, 64)
		t, err2 := strconv.ParseUint(string(f[8]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, errMalformed
		}
		rx, tx = rx+r, tx+t
	}
	return rx, tx, nil
}
