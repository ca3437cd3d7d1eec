package store

import "context"

// IndexSnapshot is a saved product of the track index, such as a search
// engine's built state, that a process can load instead of building it from
// every record again. The store keeps it as it is given; the writer decides
// what Key covers (the index version it was built from, its format) and a
// reader uses the snapshot only when its own key is the same, so that a
// stale snapshot is never used.
type IndexSnapshot struct {
	Name string // which product ("engine"); one snapshot per name
	Key  string
	Data []byte
}

// IndexSnapshots keeps index snapshots. It is optional: a store without it
// makes every process build its index from the records.
type IndexSnapshots interface {
	// SaveIndexSnapshot stores s in place of any snapshot of the same name.
	SaveIndexSnapshot(ctx context.Context, s IndexSnapshot) error
	// IndexSnapshot returns the snapshot named name if its key is key;
	// found is false when there is none or it has another key (its data
	// is then not read).
	IndexSnapshot(ctx context.Context, name, key string) (s IndexSnapshot, found bool, err error)
}

// Bounds on index snapshots.
const (
	MaxSnapshotNameLen = 64
	MaxSnapshotKeyLen  = 256
	// MaxSnapshotBytes bounds a snapshot (a million 384-d tracks take
	// about 1.7 GB); PostgreSQL's bytea holds at most 1 GB.
	MaxSnapshotBytes = 1 << 30
)
