package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

func TestIndexSnapshots(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		if _, found, err := db.IndexSnapshot(ctx, "engine", "k1"); err != nil || found {
			t.Fatalf("empty store: found %v, err %v", found, err)
		}
		data := bytes.Repeat([]byte{0, 1, 2, 0xff}, 300_000) // binary, NULs included, 1.2 MB
		if err := db.SaveIndexSnapshot(ctx, store.IndexSnapshot{Name: "engine", Key: "k1", Data: data}); err != nil {
			t.Fatal(err)
		}
		got, found, err := db.IndexSnapshot(ctx, "engine", "k1")
		if err != nil || !found || !bytes.Equal(got.Data, data) || got.Key != "k1" || got.Name != "engine" {
			t.Fatalf("round trip: found %v, err %v, %d bytes", found, err, len(got.Data))
		}
		if _, found, err := db.IndexSnapshot(ctx, "engine", "k0"); err != nil || found {
			t.Errorf("another key: found %v, err %v; want not found", found, err)
		}
		// Saving again replaces: one snapshot per name.
		if err := db.SaveIndexSnapshot(ctx, store.IndexSnapshot{Name: "engine", Key: "k2", Data: []byte("new")}); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := db.IndexSnapshot(ctx, "engine", "k1"); found {
			t.Error("the replaced snapshot is still found")
		}
		if got, found, err := db.IndexSnapshot(ctx, "engine", "k2"); err != nil || !found || string(got.Data) != "new" {
			t.Errorf("replacement: %q, %v, %v", got.Data, found, err)
		}
		for _, bad := range []store.IndexSnapshot{
			{Name: "", Key: "k"},
			{Name: strings.Repeat("n", store.MaxSnapshotNameLen+1), Key: "k"},
			{Name: "engine", Key: strings.Repeat("k", store.MaxSnapshotKeyLen+1)},
			{Name: "engine", Key: "a\x00b"},
		} {
			if err := db.SaveIndexSnapshot(ctx, bad); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Save(%.20q, %.20q) = %v, want ErrInvalid", bad.Name, bad.Key, err)
			}
		}
	})
}
