package metric

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads a scrape with the Prometheus text-format parser, which
// rejects malformed lines, bad escapes, samples of undeclared type and a
// family split in two.
func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v\n%s", err, text)
	}
	return fams
}

func scrapeOf(t *testing.T, r *Registry) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

func TestScrapeParsesWithEveryFamily(t *testing.T) {
	var r Registry
	requests := NewCounterVec("app_requests_total", "Requests by route and code.", "route", "code")
	open := NewGauge("app_open", "Open things.")
	latency := NewHistogramVec("app_latency_seconds", "Latency.", []float64{.005, .01, .1, 1, 10}, "route")
	unused := NewCounterVec("app_unused_total", "Never incremented.", "x")
	if err := r.Register(requests, open, latency, unused, GoRuntime("off"), Process()); err != nil {
		t.Fatal(err)
	}
	requests.With("GET /a", "200").Inc()
	requests.With("GET /a", "200").Inc()
	requests.With("GET /b", "404").Inc()
	requests.With("quote\" back\\slash\nline", "500").Inc()
	open.Inc()
	open.Inc()
	open.Dec()
	for _, v := range []float64{0.003, 0.005, 0.2, 7, 100} {
		latency.With("GET /a").Observe(v)
	}
	latency.With("GET /b").Observe(0.02)

	fams := parse(t, scrapeOf(t, &r))

	want := map[string]dto.MetricType{
		"app_requests_total": dto.MetricType_COUNTER, "app_open": dto.MetricType_GAUGE,
		"app_latency_seconds":    dto.MetricType_HISTOGRAM,
		"go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_gc_gogc_percent": dto.MetricType_GAUGE,
		"go_gc_gomemlimit_bytes": dto.MetricType_GAUGE, "go_goroutines": dto.MetricType_GAUGE,
		"go_info": dto.MetricType_GAUGE, "go_sched_gomaxprocs_threads": dto.MetricType_GAUGE,
		"go_threads": dto.MetricType_GAUGE,
	}
	for _, m := range (goRuntime{}).familyNames() {
		if strings.HasPrefix(m, "go_memstats_") {
			want[m] = dto.MetricType_GAUGE
			if strings.HasSuffix(m, "_total") {
				want[m] = dto.MetricType_COUNTER
			}
		}
	}
	for _, m := range (process{}).familyNames() {
		want[m] = dto.MetricType_GAUGE
		if strings.HasSuffix(m, "_total") {
			want[m] = dto.MetricType_COUNTER
		}
	}
	// GOGC as the caller read it ("off"), not the test process's environment.
	if g := fams["go_gc_gogc_percent"].GetMetric(); len(g) != 1 || g[0].GetGauge().GetValue() != -1 {
		t.Errorf("go_gc_gogc_percent = %v, want -1 for GOGC=off", g)
	}
	for name, typ := range want {
		f, ok := fams[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
		if f.GetHelp() == "" {
			t.Errorf("%s has no HELP", name)
		}
	}
	if len(fams) != len(want) {
		for name := range fams {
			if _, ok := want[name]; !ok {
				t.Errorf("unexpected family %s (a family without samples must be left out)", name)
			}
		}
	}

	counts := map[[2]string]float64{}
	for _, m := range fams["app_requests_total"].GetMetric() {
		l := labels(m)
		counts[[2]string{l["route"], l["code"]}] = m.GetCounter().GetValue()
	}
	for k, n := range map[[2]string]float64{{"GET /a", "200"}: 2, {"GET /b", "404"}: 1, {"quote\" back\\slash\nline", "500"}: 1} {
		if counts[k] != n {
			t.Errorf("app_requests_total%v = %v, want %v (all: %v)", k, counts[k], n, counts)
		}
	}
	if g := fams["app_open"].GetMetric()[0].GetGauge().GetValue(); g != 1 {
		t.Errorf("app_open = %v, want 1", g)
	}

	var a *dto.Histogram
	for _, m := range fams["app_latency_seconds"].GetMetric() {
		if labels(m)["route"] == "GET /a" {
			a = m.GetHistogram()
		}
	}
	if a == nil {
		t.Fatal(`app_latency_seconds{route="GET /a"} missing`)
	}
	// Cumulative, bounds inclusive: 0.005 falls in le="0.005".
	wantBuckets := []struct {
		le float64
		n  uint64
	}{{.005, 2}, {.01, 2}, {.1, 2}, {1, 3}, {10, 4}, {math.Inf(1), 5}}
	if len(a.GetBucket()) != len(wantBuckets) {
		t.Fatalf("%d buckets, want %d: %v", len(a.GetBucket()), len(wantBuckets), a.GetBucket())
	}
	for i, b := range a.GetBucket() {
		if b.GetUpperBound() != wantBuckets[i].le || b.GetCumulativeCount() != wantBuckets[i].n {
			t.Errorf("bucket %d = le %v: %d, want le %v: %d", i, b.GetUpperBound(), b.GetCumulativeCount(), wantBuckets[i].le, wantBuckets[i].n)
		}
	}
	if a.GetSampleCount() != 5 || math.Abs(a.GetSampleSum()-107.208) > 1e-9 {
		t.Errorf("count %d sum %v, want 5 and 107.208", a.GetSampleCount(), a.GetSampleSum())
	}

	if q := fams["go_gc_duration_seconds"].GetMetric()[0].GetSummary().GetQuantile(); len(q) != 5 {
		t.Errorf("go_gc_duration_seconds has %d quantiles, want 5", len(q))
	}
	if v := labels(fams["go_info"].GetMetric()[0])["version"]; !strings.HasPrefix(v, "go") && !strings.HasPrefix(v, "devel") {
		t.Errorf("go_info version = %q", v)
	}
}

func TestScrapeTextIsTheClientsLayout(t *testing.T) {
	var r Registry
	c := NewCounterVec("x_total", "Help with \\ and\nnewline.", "b", "a")
	h := NewHistogramVec("y_seconds", "Y.", []float64{0.5, 1}, "k")
	if err := r.Register(h, c); err != nil {
		t.Fatal(err)
	}
	c.With("B", "A").Inc()
	h.With("v").Observe(0.75)
	want := `# HELP x_total Help with \\ and\nnewline.
# TYPE x_total counter
x_total{a="A",b="B"} 1
# HELP y_seconds Y.
# TYPE y_seconds histogram
y_seconds_bucket{k="v",le="0.5"} 0
y_seconds_bucket{k="v",le="1"} 1
y_seconds_bucket{k="v",le="+Inf"} 1
y_seconds_sum{k="v"} 0.75
y_seconds_count{k="v"} 1
`
	if got := string(scrapeOf(t, &r)); got != want {
		t.Errorf("scrape:\n%s\nwant:\n%s", got, want)
	}
}

func TestRegisterRefusesAFamilyTwice(t *testing.T) {
	var r Registry
	if err := r.Register(NewGauge("g", "G.")); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(NewCounterVec("c_total", "C."), NewGauge("g", "Again.")); err == nil {
		t.Error("a second g was registered")
	}
	if err := r.Register(NewCounterVec("c_total", "C.")); err != nil {
		t.Errorf("c_total, refused with the duplicate before, is now refused too: %v", err)
	}
}

func TestHandler(t *testing.T) {
	var r Registry
	g := NewGauge("g", "G.")
	if err := r.Register(g); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		accept string
		gzip   bool
	}{{"", false}, {"gzip", true}, {"deflate, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false}} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		rec := httptest.NewRecorder()
		r.Handler().ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}
		body := rec.Body.Bytes()
		if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != c.gzip {
			t.Errorf("Accept-Encoding %q: gzipped = %v, want %v", c.accept, gz, c.gzip)
		} else if gz {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Contains(body, []byte("\ng 0\n")) {
			t.Errorf("Accept-Encoding %q: body %q", c.accept, body)
		}
	}
}

func TestGCPercent(t *testing.T) {
	for env, want := range map[string]float64{"": 100, "off": -1, "50": 50, "2000": 2000, "junk": 100} {
		if got := gcPercent(env); got != want {
			t.Errorf("gcPercent(%q) = %v, want %v", env, got, want)
		}
	}
}
