package server_test

import (
	"bytes"
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A scrape of /metrics parses with the Prometheus text-format parser and
// holds every family the server has always served, with the counts of the
// requests made.
func TestMetricsScrape(t *testing.T) {
	e := newEnv(t, envOptions{})
	for range 3 {
		if code, body := e.do(t, "POST", "/api/tools/lookup", `{"query":"x"}`); code != 200 {
			t.Fatalf("lookup: %d %s", code, body)
		}
	}
	e.do(t, "POST", "/api/tools/flaky", `{"query":"x"}`)
	e.do(t, "GET", "/api/tools", "")
	code, body := e.do(t, "GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("GET /metrics = %d", code)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v\n%s", err, body)
	}

	c, g, h, s := dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY
	want := map[string]dto.MetricType{
		"toolport_http_requests_total": c, "toolport_http_request_duration_seconds": h,
		"toolport_chat_streams_open": g, "toolport_tool_calls_total": c,
		"toolport_tool_errors_total": c, "toolport_tool_duration_seconds": h,
		"go_gc_duration_seconds": s, "go_gc_gogc_percent": g, "go_gc_gomemlimit_bytes": g,
		"go_goroutines": g, "go_info": g, "go_sched_gomaxprocs_threads": g, "go_threads": g,
		"go_memstats_alloc_bytes": g, "go_memstats_alloc_bytes_total": c, "go_memstats_buck_hash_sys_bytes": g,
		"go_memstats_frees_total": c, "go_memstats_gc_sys_bytes": g, "go_memstats_heap_alloc_bytes": g,
		"go_memstats_heap_idle_bytes": g, "go_memstats_heap_inuse_bytes": g, "go_memstats_heap_objects": g,
		"go_memstats_heap_released_bytes": g, "go_memstats_heap_sys_bytes": g, "go_memstats_last_gc_time_seconds": g,
		"go_memstats_mallocs_total": c, "go_memstats_mcache_inuse_bytes": g, "go_memstats_mcache_sys_bytes": g,
		"go_memstats_mspan_inuse_bytes": g, "go_memstats_mspan_sys_bytes": g, "go_memstats_next_gc_bytes": g,
		"go_memstats_other_sys_bytes": g, "go_memstats_stack_inuse_bytes": g, "go_memstats_stack_sys_bytes": g,
		"go_memstats_sys_bytes":     g,
		"process_cpu_seconds_total": c, "process_max_fds": g, "process_network_receive_bytes_total": c,
		"process_network_transmit_bytes_total": c, "process_open_fds": g, "process_resident_memory_bytes": g,
		"process_start_time_seconds": g, "process_virtual_memory_bytes": g, "process_virtual_memory_max_bytes": g,
	}
	for name, typ := range want {
		f, ok := fams[name]
		if !ok {
			t.Errorf("family %s missing", name)
		} else if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	for name := range fams {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected family %s", name)
		}
	}

	find := func(family string, labels map[string]string) *dto.Metric {
		t.Helper()
	next:
		for _, m := range fams[family].GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if len(got) == len(labels) {
				return m
			}
		}
		t.Fatalf("%s%v missing", family, labels)
		return nil
	}
	const tools = "POST /api/tools/{name}"
	if n := find("toolport_http_requests_total", map[string]string{"route": tools, "code": "200"}).GetCounter().GetValue(); n != 4 {
		t.Errorf("requests to %s = %v, want 4", tools, n)
	}
	if n := find("toolport_tool_calls_total", map[string]string{"tool": "lookup"}).GetCounter().GetValue(); n != 3 {
		t.Errorf("lookup calls = %v, want 3", n)
	}
	if n := find("toolport_tool_errors_total", map[string]string{"tool": "flaky", "code": "NETWORK_ERROR"}).GetCounter().GetValue(); n != 1 {
		t.Errorf("flaky errors = %v, want 1", n)
	}
	if n := find("toolport_chat_streams_open", nil).GetGauge().GetValue(); n != 0 {
		t.Errorf("streams open = %v, want 0", n)
	}

	// The route's latency histogram: the server's bounds, cumulative
	// counts ending at the 4 requests (each well under the last bound).
	hist := find("toolport_http_request_duration_seconds", map[string]string{"route": tools}).GetHistogram()
	bounds := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, math.Inf(1)}
	if len(hist.GetBucket()) != len(bounds) {
		t.Fatalf("%d buckets, want %d: %v", len(hist.GetBucket()), len(bounds), hist.GetBucket())
	}
	var prev uint64
	for i, b := range hist.GetBucket() {
		if b.GetUpperBound() != bounds[i] || b.GetCumulativeCount() < prev {
			t.Errorf("bucket %d: le %v count %d (previous %d), want le %v and a count not below the previous", i, b.GetUpperBound(), b.GetCumulativeCount(), prev, bounds[i])
		}
		prev = b.GetCumulativeCount()
	}
	if n := hist.GetBucket()[len(bounds)-2].GetCumulativeCount(); n != 4 || hist.GetSampleCount() != 4 || hist.GetSampleSum() <= 0 {
		t.Errorf("le=120 count %d, count %d, sum %v; want 4, 4 and a positive sum", n, hist.GetSampleCount(), hist.GetSampleSum())
	}
	toolHist := find("toolport_tool_duration_seconds", map[string]string{"tool": "lookup"}).GetHistogram()
	if n := toolHist.GetSampleCount(); n != 3 {
		t.Errorf("lookup duration count = %d, want 3", n)
	}
}
