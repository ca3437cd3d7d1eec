package tooltest

import (
	"errors"
	"testing"
)

// Seed adds the recorded answers in pkg/testdata matching pattern (see
// Fixtures) and the extra bodies to f's seed corpus.
func Seed(f *testing.F, pkg, pattern string, extra ...string) {
	f.Helper()
	for _, b := range Fixtures(f, pkg, pattern) {
		f.Add(b)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// FuzzDecode fuzzes a package's decoder with the bodies of f's corpus: each
// one decodes or fails with an error that is an E (the package's parse
// error, as errors.As finds it), never another error or a panic. check, when
// not nil, examines what decoded.
func FuzzDecode[E error, T any](f *testing.F, decode func(body []byte) (T, error), check func(t *testing.T, v T)) {
	f.Helper()
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := decode(body)
		if err != nil {
			var want E
			if !errors.As(err, &want) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if check != nil {
			check(t, v)
		}
	})
}
