package musiccaps_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"

	"github.com/toolport/toolport/internal/musiccaps"
)

// The embedded file must be the hand-over file byte for byte (SOURCES.md).
func TestTracksAreTheOriginalBytes(t *testing.T) {
	r, err := musiccaps.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatal(err)
	}
	const wantLen, wantSum = 2414623, "0001759682c0487cfc7a9ef68e6409f7d4a15ec50c3885d5eaada52cafbae354"
	if n != wantLen || hex.EncodeToString(h.Sum(nil)) != wantSum {
		t.Fatalf("got %d bytes, sha256 %x; want %d bytes, %s", n, h.Sum(nil), wantLen, wantSum)
	}
}

func TestTracksCount(t *testing.T) {
	r, err := musiccaps.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != musiccaps.Tracks {
		t.Fatalf("%d lines, want %d", lines, musiccaps.Tracks)
	}
}
