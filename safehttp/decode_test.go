package safehttp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadAllWithHint(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 1000)
	for _, hint := range []int64{0, 1, 9999, 10000, 10001, 1 << 20} {
		got, err := readAll(iotest.HalfReader(bytes.NewReader(body)), hint)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("hint %d: got %d bytes, %v; want the %d-byte body", hint, len(got), err, len(body))
		}
	}
	// An exact hint reads the body without growing the buffer.
	got, _ := readAll(bytes.NewReader(body), int64(len(body)))
	if cap(got) != len(body)+1 {
		t.Errorf("exact hint: cap %d, want %d", cap(got), len(body)+1)
	}
	boom := errors.New("boom")
	if _, err := readAll(io.MultiReader(bytes.NewReader(body), iotest.ErrReader(boom)), 10); !errors.Is(err, boom) {
		t.Errorf("read error lost: %v", err)
	}
}
