package metric

import (
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// fakeProc writes files under a temporary /proc.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestProcessReadsProc(t *testing.T) {
	// Fields 14, 15 (utime, stime), 22 (starttime), 23 (vsize), 24 (rss);
	// the command name holds a space and a ')'.
	stat := "4242 (tool port) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 12000 104857600 2560 18446744073709551615\n"
	dir := fakeProc(t, map[string]string{
		"self/stat": stat,
		"stat":      "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n",
		"self/net/dev": "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n" +
			"    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n  eth0: 200 2 0 0 0 0 0 0 30 1 0 0 0 0 0 0\n",
		"self/fd/0": "", "self/fd/1": "", "self/fd/2": "",
	})
	var r Registry
	if err := r.Register(process{proc: dir}); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, scrapeOf(t, &r))
	value := func(name string) float64 {
		f, ok := fams[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		m := f.GetMetric()[0]
		if f.GetType() == dto.MetricType_COUNTER {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	for name, want := range map[string]float64{
		"process_cpu_seconds_total":            3,
		"process_start_time_seconds":           1700000120,
		"process_virtual_memory_bytes":         104857600,
		"process_resident_memory_bytes":        float64(2560 * os.Getpagesize()),
		"process_network_receive_bytes_total":  1200,
		"process_network_transmit_bytes_total": 1030,
		"process_open_fds":                     2, // less the one ReadDir held: a real /proc lists it
	} {
		if got := value(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if value("process_max_fds") <= 0 {
		t.Error("process_max_fds not positive")
	}
}

func TestProcessLeavesOutWhatItCannotRead(t *testing.T) {
	dir := fakeProc(t, map[string]string{
		"self/stat":    "1 (x) S 1 2",
		"self/net/dev": "h\nh\nlo: 1 2\n",
	})
	var r Registry
	if err := r.Register(process{proc: dir}); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, scrapeOf(t, &r))
	for _, name := range []string{"process_cpu_seconds_total", "process_start_time_seconds", "process_open_fds", "process_network_receive_bytes_total"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s reported from a malformed or missing file", name)
		}
	}
	if _, ok := fams["process_max_fds"]; !ok {
		t.Error("process_max_fds (from getrlimit) missing")
	}
}

func TestProcessOnThisMachine(t *testing.T) {
	var r Registry
	if err := r.Register(Process()); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, scrapeOf(t, &r))
	for _, name := range (process{}).familyNames() {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
}
