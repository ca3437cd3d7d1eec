package tool_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolport/toolport/tool"
)

// fixedCache answers every Get with the record the call's context carries,
// as a shared cache another party wrote to (or damaged) might.
type fixedCache struct{}

type recordKey struct{}

func (fixedCache) Get(ctx context.Context, _ string) ([]byte, bool, error) {
	rec, _ := ctx.Value(recordKey{}).([]byte)
	return rec, true, nil
}
func (fixedCache) Set(context.Context, string, []byte, time.Duration) error {
	return nil
}
func (fixedCache) TryLock(context.Context, string, time.Duration) (func(), bool, error) {
	return func() {}, true, nil
}

// FuzzCachedRecord: whatever bytes the cache holds, a call ends in a
// well-formed envelope; a record used as a hit fits the output schema.
func FuzzCachedRecord(f *testing.F) {
	stamp := func(body string) []byte {
		rec := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()))
		rec = binary.BigEndian.AppendUint32(rec, 9)
		return append(append(rec, "3 results"...), body...)
	}
	f.Add(stamp(`{"echo":{"query":"go","rows":10,"sort":"asc"},"total":3}`))
	f.Add(stamp(`{"echo":{"query":"go"},"total":"3"}`))
	f.Add(stamp(`{"echo":{},"total":1,"extra":true}`))
	f.Add(stamp(` {"total":1} `))
	f.Add(stamp(`{"total":1}{"total":2}`))
	f.Add([]byte{1, 2, 3})
	reg := tool.NewRegistry(tool.WithResultCache(fixedCache{}, map[string]tool.CachePolicy{"search": {TTL: time.Hour}}))
	if err := reg.Register(newSearchF(f)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		res := reg.Call(context.WithValue(context.Background(), recordKey{}, rec), "search", []byte(`{"query":"go"}`))
		var env map[string]any
		if err := json.Unmarshal(res.JSON, &env); err != nil {
			t.Fatalf("envelope is not JSON: %v: %s", err, res.JSON)
		}
		if !res.OK() {
			t.Fatalf("call failed: %s", res.JSON)
		}
		if res.Cached {
			if _, extra := env["extra"]; extra || env["cached"] != true {
				t.Fatalf("hit: %s", res.JSON)
			}
		}
	})
}

func newSearchF(f *testing.F) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{Name: "search", Description: "Searches."},
		func(_ context.Context, in searchInput) (searchOutput, error) {
			return searchOutput{Echo: in, Total: in.Rows}, nil
		}))
}
