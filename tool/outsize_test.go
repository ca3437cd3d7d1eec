package tool

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type sizeInner struct {
	A string `json:"a,omitempty"`
	B []int  `json:"b"`
}

type sizeEmbedded struct {
	E string
}

type sizeOuter struct {
	sizeEmbedded
	*sizeInner
	Name    string            `json:"name"`
	Skip    string            `json:"-"`
	hidden  string            // unexported: not encoded
	Opt     *sizeInner        `json:"opt,omitempty"`
	Zero    time.Time         `json:"zero,omitzero"`
	When    time.Time         `json:"when"`
	Raw     json.RawMessage   `json:"raw"`
	Bytes   []byte            `json:"bytes"`
	Map     map[string]any    `json:"map"`
	IntKeys map[int]string    `json:"intKeys"`
	Arr     [3]bool           `json:"arr"`
	Any     any               `json:"any"`
	Nested  map[string][]byte `json:"nested,omitempty"`
}

// jsonSizeAtLeast never exceeds the size encoding/json makes, and for
// text-heavy values comes close to it.
func TestJSONSizeAtLeastIsALowerBound(t *testing.T) {
	long := strings.Repeat("שלום ", 1000)
	values := []any{
		nil, true, 12345, 3.25, "", "a\"b\\c\x01", long, []string(nil), []string{}, []string{"a", "b"},
		map[string]any{"k": []any{1, "x", nil, map[string]any{}}},
		sizeOuter{},
		sizeOuter{sizeEmbedded: sizeEmbedded{E: "e"}, sizeInner: &sizeInner{A: "a", B: []int{1, 2}}, Name: long, Skip: long, hidden: long,
			Opt: &sizeInner{}, When: time.Now(), Raw: json.RawMessage(`{"x":[1,2,3]}`), Bytes: []byte(long),
			Map: map[string]any{"a": long, "b": []any{long, 1}}, IntKeys: map[int]string{7: long}, Any: &sizeInner{A: long},
			Nested: map[string][]byte{"n": []byte("abc")}},
		&sizeOuter{Name: "p"},
	}
	for i, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		n := jsonSizeAtLeast(reflect.ValueOf(v), 1<<30)
		if n > len(raw) {
			t.Errorf("value %d: estimate %d > %d encoded: %.200s", i, n, len(raw), raw)
		}
		if len(raw) > 4000 && n < len(raw)*3/4 {
			t.Errorf("value %d: estimate %d, far below %d encoded", i, n, len(raw))
		}
	}
}

// The walk stops once past the limit: many references to one string cost
// a few steps, and a pointer cycle ends.
func TestJSONSizeAtLeastStops(t *testing.T) {
	s := strings.Repeat("x", 1<<20)
	huge := make([]string, 1<<20) // a terabyte as JSON
	for i := range huge {
		huge[i] = s
	}
	allocs := testing.AllocsPerRun(3, func() {
		if n := jsonSizeAtLeast(reflect.ValueOf(huge), 16<<20); n <= 16<<20 || n > 18<<20 {
			t.Errorf("estimate %d, want just past 16 MiB", n)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations", allocs)
	}
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	if n := jsonSizeAtLeast(reflect.ValueOf(loop), 1<<20); n == 0 {
		t.Errorf("a cycle measured %d", n)
	}
}
