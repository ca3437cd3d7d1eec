package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolport/toolport/tool"
)

// metrics are the server's Prometheus collectors, on a registry of its own.
type metrics struct {
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	streamsOpen  prometheus.Gauge
	toolCalls    *prometheus.CounterVec
	toolErrors   *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolport_http_requests_total", Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolport_http_request_duration_seconds", Help: "HTTP request latency by route pattern (a chat stream's whole duration).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"route"}),
		streamsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolport_chat_streams_open", Help: "Chat streams in progress.",
		}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolport_tool_calls_total", Help: "Tool calls (chat and direct) by tool.",
		}, []string{"tool"}),
		toolErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolport_tool_errors_total", Help: "Failed tool calls by tool and error code.",
		}, []string{"tool", "code"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolport_tool_duration_seconds", Help: "Tool call latency by tool, retries included.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.streamsOpen, m.toolCalls, m.toolErrors, m.toolDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observeTool(name string, res *tool.Result) {
	m.toolCalls.WithLabelValues(name).Inc()
	m.toolDuration.WithLabelValues(name).Observe(res.Duration.Seconds())
	if res.Err != nil {
		m.toolErrors.WithLabelValues(name, string(res.Err.Code)).Inc()
	}
}

func (m *metrics) handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// instrument counts requests and their latency by the mux's route pattern
// (never the raw path, whose ids would make the label set unbounded).
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusWriter remembers the status code. Unwrap lets http.ResponseController
// reach the connection's Flush and SetWriteDeadline.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
