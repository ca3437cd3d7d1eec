package record

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// tokenBody is a JSON answer of about size bytes made of distinct
// credential-named fields, the body an upstream shapes to make the recorder
// learn as many secrets as it can: {"items":[{"token":"t-00000000-…"},…]}.
func tokenBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < size-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"token":"t-%08d-%s"}`, i, strings.Repeat("x", 8))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recordAnswer records one GET whose answer is body and returns the recorder.
func recordAnswer(tb testing.TB, dir string, body []byte) *Recorder {
	tb.Helper()
	rec, err := New(dir, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	hc := rec.Client("up", &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})})
	resp, err := hc.Get("http://up.example/api")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	return rec
}

// BenchmarkRecordTokens records one answer made of distinct "token" fields:
// learning them and scrubbing the body must stay linear in the body's size
// (MB/s that holds from 64 KiB to the recorder's 8 MiB bound).
func BenchmarkRecordTokens(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20, MaxBodyBytes} {
		body := tokenBody(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				recordAnswer(b, b.TempDir(), body)
			}
		})
	}
}
