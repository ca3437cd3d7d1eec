package music

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/store"
)

// The loaded index (the engine and the audio features search filters use) is
// saved in the store as a snapshot by whichever process builds it from the
// records (serve's [Service.Load], or the first search after a write), so
// that a process that searches once, such as `toolport call semanticSearch`,
// loads it in a few milliseconds instead of analysing and coding every
// record. Writers (`toolport index add`) leave it stale instead of building
// an engine they do not search: their memory stays bounded by a batch. A snapshot
// is keyed by the store's index version and the engine's snapshot tag (its
// format, analyser and embedder): any write to the index, or a change to
// how the engine is built, makes the key differ and the snapshot unused
// (and replaced by the next load from the records). A snapshot that does not decode is
// ignored the same way: the records are the truth, the snapshot a cache.

const (
	engineSnapshotName  = "engine"
	musicSnapshotMagic  = "TPMUSNAP"
	musicSnapshotFormat = 1
)

// snapshotKey is what a snapshot of the engine built with emb from the
// index at version v is saved and looked up under.
func snapshotKey(emb embedding.Embedder, v store.IndexVersion) string {
	return fmt.Sprintf("music%d/%s/%d/%s", musicSnapshotFormat, index.NewEngine(emb).SnapshotTag(),
		v.Count, v.Updated.UTC().Format(time.RFC3339Nano))
}

// loadSnapshot returns the engine and features saved for version v, if the
// store keeps snapshots and has a usable one.
func loadSnapshot(ctx context.Context, db Store, emb embedding.Embedder, v store.IndexVersion) (*index.Engine, map[string]featureVec, bool) {
	snaps, ok := db.(store.IndexSnapshots)
	if !ok {
		return nil, nil, false
	}
	snap, found, err := snaps.IndexSnapshot(ctx, engineSnapshotName, snapshotKey(emb, v))
	if err != nil || !found {
		return nil, nil, false // the full load reports a store that fails
	}
	eng, feats, err := decodeMusicSnapshot(emb, snap.Data)
	if err != nil || eng.Len() != v.Count {
		return nil, nil, false
	}
	return eng, feats, true
}

// saveSnapshot saves the engine and features as the snapshot of version v.
func saveSnapshot(ctx context.Context, db Store, emb embedding.Embedder, v store.IndexVersion, eng *index.Engine, feats map[string]featureVec) error {
	snaps, ok := db.(store.IndexSnapshots)
	if !ok {
		return nil
	}
	data, err := encodeMusicSnapshot(eng, feats)
	if errors.Is(err, errSnapshotTooBig) || len(data) > store.MaxSnapshotBytes {
		return nil // too big to keep: every process builds its own
	}
	if err != nil {
		return fmt.Errorf("music: encoding the index snapshot: %w", err)
	}
	err = snaps.SaveIndexSnapshot(ctx, store.IndexSnapshot{Name: engineSnapshotName, Key: snapshotKey(emb, v), Data: data})
	if err != nil {
		return fmt.Errorf("music: saving the index snapshot: %w", err)
	}
	return nil
}

// encodeMusicSnapshot frames the engine snapshot with the features: magic,
// format, the engine's bytes (uvarint length, checksummed by the engine),
// the feature count, per track its ISRC and the features as f32 (NaN
// unknown), then the CRC-32C of the features part.
//
// It makes one allocation of the snapshot's size: the engine writes
// straight into it (a snapshot of a large index is hundreds of megabytes,
// and building it in one buffer and framing it in another held two or three
// copies at once). The engine's length goes before its bytes and is known
// only after them, so they are written past room for the longest length and
// moved back over the unused part.
func encodeMusicSnapshot(eng *index.Engine, feats map[string]featureVec) ([]byte, error) {
	featBytes := uvarintLen(uint64(len(feats))) + 4
	for isrc := range feats {
		featBytes += uvarintLen(uint64(len(isrc))) + len(isrc) + 4*numFeatures
	}
	head := len(musicSnapshotMagic) + uvarintLen(musicSnapshotFormat)
	size := head + binary.MaxVarintLen64 + eng.SnapshotSize() + featBytes
	if size > store.MaxSnapshotBytes {
		return nil, errSnapshotTooBig
	}
	b := make([]byte, 0, size)
	b = append(b, musicSnapshotMagic...)
	b = binary.AppendUvarint(b, musicSnapshotFormat)
	w := &appendWriter{b: b[:head+binary.MaxVarintLen64]}
	n, err := eng.WriteSnapshot(w)
	if err != nil {
		return nil, err
	}
	b = w.b
	at := binary.AppendUvarint(b[head:head], uint64(n)) // over the room left for it
	moved := copy(b[head+len(at):], b[head+binary.MaxVarintLen64:])
	b = b[:head+len(at)+moved]
	start := len(b)
	b = binary.AppendUvarint(b, uint64(len(feats)))
	for isrc, fv := range feats {
		b = binary.AppendUvarint(b, uint64(len(isrc)))
		b = append(b, isrc...)
		for _, f := range fv {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli())), nil
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// castagnoli is built on first use: MakeTable fills the SSE 4.2 tables,
// 1.3 M instructions that every toolport command paid at start-up.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

var (
	errMusicSnapshot  = errors.New("music: unusable index snapshot")
	errSnapshotTooBig = errors.New("music: the index snapshot would be larger than the store keeps")
)

func decodeMusicSnapshot(emb embedding.Embedder, data []byte) (*index.Engine, map[string]featureVec, error) {
	if len(data) < len(musicSnapshotMagic)+4 || string(data[:len(musicSnapshotMagic)]) != musicSnapshotMagic {
		return nil, nil, errMusicSnapshot
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	b := body[len(musicSnapshotMagic):]
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	if f, ok := uvarint(); !ok || f != musicSnapshotFormat {
		return nil, nil, errMusicSnapshot
	}
	n, ok := uvarint()
	if !ok || n > uint64(len(b)) {
		return nil, nil, errMusicSnapshot
	}
	eng, err := index.LoadSnapshot(emb, b[:n])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errMusicSnapshot, err)
	}
	b = b[n:]
	if crc32.Checksum(b, castagnoli()) != sum {
		return nil, nil, errMusicSnapshot
	}
	const perTrack = 1 + 4*numFeatures
	count, ok := uvarint()
	if !ok || count > uint64(len(b)/perTrack) {
		return nil, nil, errMusicSnapshot
	}
	feats := make(map[string]featureVec, count)
	for range count {
		l, ok := uvarint()
		if !ok || l == 0 || l > store.MaxISRCLen || uint64(len(b)) < l+4*numFeatures {
			return nil, nil, errMusicSnapshot
		}
		isrc := string(b[:l])
		b = b[l:]
		var fv featureVec
		for i := range fv {
			fv[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		b = b[4*numFeatures:]
		feats[isrc] = fv
	}
	if len(b) != 0 {
		return nil, nil, errMusicSnapshot
	}
	return eng, feats, nil
}
