package record

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkScrub scrubs bodies whose every secret leaves a marker that
// spells the secret again ("]000000" with the secret "]000"), beside bodies
// of the same size with the secret once. MB/s that holds as the body grows
// is what shows the rewriting linear; an upstream chooses both the body and,
// through a field named "token", the secret.
func BenchmarkScrub(b *testing.B) {
	for _, size := range []int{64 << 10, 512 << 10, 4 << 20} {
		for _, body := range []struct {
			name string
			b    []byte
		}{
			{"chains", bytes.Repeat([]byte("]000000"), size/7)},
			{"once", append(bytes.Repeat([]byte("x"), size-4), "]000"...)},
		} {
			b.Run(fmt.Sprintf("%s/%dKiB", body.name, size>>10), func(b *testing.B) {
				s := NewScrubber("]000")
				b.SetBytes(int64(len(body.b)))
				for b.Loop() {
					s.Bytes(body.b)
				}
			})
		}
	}
}
