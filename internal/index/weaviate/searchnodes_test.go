package weaviate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// An empty search answer from one node is asked of the next node before it
// is believed; an answer with hits, or an empty one from every node, ends it.
func TestSearchNodesAsksTheNextNodeAfterAnEmptyAnswer(t *testing.T) {
	down := wrap("search", errors.New("connection refused"))
	if !errors.Is(down, ErrUnavailable) {
		t.Fatalf("a refused connection is %v, want ErrUnavailable", down)
	}
	tests := []struct {
		name    string
		answers []func() (int, error) // node i's answer, in the order asked
		wantErr error
		asked   int
	}{
		{"hits at once", []func() (int, error){hits(3), hits(3), hits(3)}, nil, 1},
		{"empty, then hits", []func() (int, error){hits(0), hits(3), hits(3)}, nil, 2},
		{"empty everywhere", []func() (int, error){hits(0), hits(0), hits(0)}, nil, 3},
		{"empty, then the rest down", []func() (int, error){hits(0), fail(down), fail(down)}, nil, 3},
		{"down, then empty, then hits", []func() (int, error){fail(down), hits(0), hits(2)}, nil, 3},
		{"every node down", []func() (int, error){fail(down), fail(down), fail(down)}, ErrUnavailable, 3},
		{"a bad query is not retried", []func() (int, error){fail(errBadQuery), hits(3), hits(3)}, errBadQuery, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Backend{cfg: Config{Timeout: time.Second}, eps: make([]*endpoint, len(tt.answers))}
			for i := range b.eps {
				b.eps[i] = &endpoint{}
			}
			asked := 0
			err := b.searchNodes(context.Background(), func(context.Context, *endpoint) (int, error) {
				asked++
				return tt.answers[asked-1]()
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if asked != tt.asked {
				t.Errorf("asked %d nodes, want %d", asked, tt.asked)
			}
		})
	}
}

var errBadQuery = errors.New("weaviate search: invalid filter")

func hits(n int) func() (int, error)     { return func() (int, error) { return n, nil } }
func fail(err error) func() (int, error) { return func() (int, error) { return 0, err } }
