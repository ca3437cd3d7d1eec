package metric

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// desc names a family and its labels.
type desc struct {
	name, help string
	labels     []string // sorted, as the Prometheus client writes them
	perm       []int    // labels[i] is the perm[i]-th name given to the constructor
}

func newDesc(name, help string, labels []string) desc {
	perm := make([]int, len(labels))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	sorted := make([]string, len(labels))
	for i, j := range perm {
		sorted[i] = labels[j]
	}
	return desc{name: name, help: help, labels: sorted, perm: perm}
}

func (d *desc) familyNames() []string { return []string{d.name} }

// series keeps one child per label-value tuple.
type series[T any] struct {
	mu       sync.Mutex
	children map[string]*child[T]
}

type child[T any] struct {
	values []string
	v      T
}

// get returns the child for values, created on first use. A wrong number
// of values is a programming error, as with the Prometheus client.
func (s *series[T]) get(d *desc, values []string, init func(*T)) *T {
	if len(values) != len(d.labels) {
		panic(fmt.Sprintf("metric: %s has %d labels, got %d values", d.name, len(d.labels), len(values)))
	}
	vs := make([]string, len(values))
	for i, j := range d.perm {
		vs[i] = values[j]
	}
	key := strings.Join(vs, "\xff")
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.children[key]
	if !ok {
		if s.children == nil {
			s.children = map[string]*child[T]{}
		}
		c = &child[T]{values: vs}
		if init != nil {
			init(&c.v)
		}
		s.children[key] = c
	}
	return &c.v
}

// sorted returns the children ordered by label values, the order the
// Prometheus client writes them in.
func (s *series[T]) sorted() []*child[T] {
	s.mu.Lock()
	cs := make([]*child[T], 0, len(s.children))
	for _, c := range s.children {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	slices.SortFunc(cs, func(a, b *child[T]) int { return slices.Compare(a.values, b.values) })
	return cs
}

// A CounterVec is a family of counters, one per label-value tuple.
type CounterVec struct {
	desc
	s series[Counter]
}

// A Counter only goes up.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// NewCounterVec returns a counter family with the given label names.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{desc: newDesc(name, help, labels)}
}

// With returns the counter for the label values, in the order of the names.
func (v *CounterVec) With(values ...string) *Counter { return v.s.get(&v.desc, values, nil) }

func (v *CounterVec) collect(s *scrape) {
	cs := v.s.sorted()
	if len(cs) == 0 {
		return // a family without samples is left out, as the Prometheus client does
	}
	var b []byte
	for _, c := range cs {
		b = appendSample(b, v.name, v.labels, c.values, "", "", float64(c.v.n.Load()))
	}
	s.add(v.name, v.help, "counter", b)
}

// A Gauge goes up and down.
type Gauge struct {
	desc
	n atomic.Int64
}

// NewGauge returns a gauge without labels.
func NewGauge(name, help string) *Gauge { return &Gauge{desc: desc{name: name, help: help}} }

// Inc adds one.
func (g *Gauge) Inc() { g.n.Add(1) }

// Dec subtracts one.
func (g *Gauge) Dec() { g.n.Add(-1) }

func (g *Gauge) collect(s *scrape) { s.value(g.name, g.help, "gauge", float64(g.n.Load())) }

// A HistogramVec is a family of histograms with the same upper bounds,
// one per label-value tuple.
type HistogramVec struct {
	desc
	bounds []float64
	s      series[Histogram]
}

// A Histogram counts observations in buckets of fixed upper bounds.
type Histogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	count  uint64
}

// NewHistogramVec returns a histogram family. bounds are the buckets' upper
// bounds (inclusive), strictly increasing; +Inf is implied.
func NewHistogramVec(name, help string, bounds []float64, labels ...string) *HistogramVec {
	bounds = slices.Clone(bounds)
	if n := len(bounds); n > 0 && math.IsInf(bounds[n-1], 1) {
		bounds = bounds[:n-1]
	}
	if !slices.IsSorted(bounds) || len(slices.Compact(slices.Clone(bounds))) != len(bounds) {
		panic(fmt.Sprintf("metric: %s: bucket bounds %v are not strictly increasing", name, bounds))
	}
	return &HistogramVec{desc: newDesc(name, help, labels), bounds: bounds}
}

// With returns the histogram for the label values, in the order of the names.
func (v *HistogramVec) With(values ...string) *Histogram {
	return v.s.get(&v.desc, values, func(h *Histogram) {
		h.bounds = v.bounds
		h.counts = make([]uint64, len(v.bounds)+1)
	})
}

// Observe counts v in the first bucket whose bound is at least v (NaN in
// +Inf's, as the Prometheus client does).
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v)
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

func (v *HistogramVec) collect(s *scrape) {
	var b []byte
	cs := v.s.sorted()
	if len(cs) == 0 {
		return
	}
	bucket, sum, count := v.name+"_bucket", v.name+"_sum", v.name+"_count"
	for _, c := range cs {
		h := &c.v
		h.mu.Lock()
		counts := slices.Clone(h.counts)
		hsum, hcount := h.sum, h.count
		h.mu.Unlock()
		var cum uint64
		for i, n := range counts {
			cum += n
			le := math.Inf(1)
			if i < len(v.bounds) {
				le = v.bounds[i]
			}
			b = appendSample(b, bucket, v.labels, c.values, "le", formatFloat(le), float64(cum))
		}
		b = appendSample(b, sum, v.labels, c.values, "", "", hsum)
		b = appendSample(b, count, v.labels, c.values, "", "", float64(hcount))
	}
	s.add(v.name, v.help, "histogram", b)
}
