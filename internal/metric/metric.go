// Package metric keeps counters, gauges and histograms and serves them, with
// the Go runtime's and the process's own figures, in the Prometheus text
// exposition format, version 0.0.4.
//
// It replaces the Prometheus Go client, whose package init registers default
// collectors (and links procfs, expvar and runtime/metrics, each with an init
// of its own) in every command of the binary, served or not: about 1.6 M
// instructions at each start (BENCHMARKS.md, "Start-up, round 6"). This
// package has no init and no package state.
package metric

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the media type of the text exposition format written here.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// A Collector contributes metric families to a [Registry]. The counters,
// gauges and histograms of this package, [GoRuntime] and [Process] are
// collectors.
type Collector interface {
	// familyNames lists the families collect writes, for Register's
	// uniqueness check.
	familyNames() []string
	collect(s *scrape)
}

// A Registry holds collectors and writes their families sorted by name.
// Its zero value is ready to use.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
	names      map[string]bool
}

// Register adds collectors. A family name already registered is an error,
// and then none of cs is added.
func (r *Registry) Register(cs ...Collector) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, c := range cs {
		for _, n := range c.familyNames() {
			if r.names[n] || seen[n] {
				return fmt.Errorf("metric: %s registered twice", n)
			}
			seen[n] = true
		}
	}
	if r.names == nil {
		r.names = map[string]bool{}
	}
	for n := range seen {
		r.names[n] = true
	}
	r.collectors = append(r.collectors, cs...)
	return nil
}

// WriteTo writes every family in the text exposition format.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	var s scrape
	for _, c := range cs {
		c.collect(&s)
	}
	slices.SortFunc(s.families, func(a, b family) int { return strings.Compare(a.name, b.name) })
	var n int64
	for _, f := range s.families {
		m, err := w.Write(f.text)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Handler serves the registry's families, gzipped when the client accepts
// it (Prometheus does).
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var buf bytes.Buffer
		r.WriteTo(&buf) // a bytes.Buffer never fails
		h := w.Header()
		h.Set("Content-Type", ContentType)
		h.Add("Vary", "Accept-Encoding")
		if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
			w.Write(buf.Bytes())
			return
		}
		h.Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(buf.Bytes())
		zw.Close()
	})
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		// "gzip;q=0" refuses it.
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// scrape gathers the families' text during one WriteTo.
type scrape struct {
	families []family
}

type family struct {
	name string
	text []byte
}

// add appends a family whose sample lines are in samples.
func (s *scrape) add(name, help, typ string, samples []byte) {
	b := make([]byte, 0, len(name)*2+len(help)+len(typ)+len(samples)+20)
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	b = append(b, samples...)
	s.families = append(s.families, family{name, b})
}

// value adds a family of one unlabelled sample.
func (s *scrape) value(name, help, typ string, v float64) {
	s.add(name, help, typ, appendSample(nil, name, nil, nil, "", "", v))
}

// appendSample appends one sample line: name{labels…,extra="extraValue"} v.
// extra is the histogram's le or the summary's quantile, written last as
// the Prometheus client does.
func appendSample(b []byte, name string, labels, values []string, extra, extraValue string, v float64) []byte {
	b = append(b, name...)
	if len(labels) > 0 || extra != "" {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLabel(b, l, values[i])
		}
		if extra != "" {
			if len(labels) > 0 {
				b = append(b, ',')
			}
			b = appendLabel(b, extra, extraValue)
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendEscaped(b, value, true)
	return append(b, '"')
}

// appendEscaped escapes as the format requires: backslash and newline in
// HELP, and the double quote too in label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func formatFloat(v float64) string { return string(appendFloat(nil, v)) }
