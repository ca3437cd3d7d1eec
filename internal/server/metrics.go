package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/toolport/toolport/internal/metric"
	"github.com/toolport/toolport/tool"
)

// metrics are the server's collectors, on a registry of its own.
type metrics struct {
	requests     *metric.CounterVec
	latency      *metric.HistogramVec
	streamsOpen  *metric.Gauge
	toolCalls    *metric.CounterVec
	toolErrors   *metric.CounterVec
	toolDuration *metric.HistogramVec
}

func newMetrics(reg *metric.Registry, gogc string) (*metrics, error) {
	m := &metrics{
		requests: metric.NewCounterVec("toolport_http_requests_total",
			"HTTP requests by route pattern and status code.", "route", "code"),
		latency: metric.NewHistogramVec("toolport_http_request_duration_seconds",
			"HTTP request latency by route pattern (a chat stream's whole duration).",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}, "route"),
		streamsOpen: metric.NewGauge("toolport_chat_streams_open", "Chat streams in progress."),
		toolCalls: metric.NewCounterVec("toolport_tool_calls_total",
			"Tool calls (chat and direct) by tool.", "tool"),
		toolErrors: metric.NewCounterVec("toolport_tool_errors_total",
			"Failed tool calls by tool and error code.", "tool", "code"),
		toolDuration: metric.NewHistogramVec("toolport_tool_duration_seconds",
			"Tool call latency by tool, retries included.",
			[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "tool"),
	}
	err := reg.Register(m.requests, m.latency, m.streamsOpen, m.toolCalls, m.toolErrors, m.toolDuration,
		metric.GoRuntime(gogc), metric.Process())
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observeTool(name string, res *tool.Result) {
	m.toolCalls.With(name).Inc()
	m.toolDuration.With(name).Observe(res.Duration.Seconds())
	if res.Err != nil {
		m.toolErrors.With(name, string(res.Err.Code)).Inc()
	}
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
		m.requests.With(route, strconv.Itoa(sw.status)).Inc()
		m.latency.With(route).Observe(time.Since(start).Seconds())
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
