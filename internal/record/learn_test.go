package record

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// An upstream makes secrets of whatever it names "token": a body of
// hundreds of thousands of them, at the recorder's bound, must be learnt
// only up to MaxLearntPerBody, and still reach the disk with none of them,
// in work linear in its size.
func TestLearningFromOneBodyIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("records an 8 MiB answer")
	}
	steps := map[int]int64{}
	for _, size := range []int{1 << 20, MaxBodyBytes} {
		body := tokenBody(size)
		dir := t.TempDir()
		rec := recordAnswer(t, dir, body)
		fields := bytes.Count(body, []byte(`"token"`))
		if got := rec.scrub.learnt; got != MaxLearntPerBody {
			t.Errorf("%d KiB: learnt %d values, want the bound %d", size>>10, got, MaxLearntPerBody)
		}
		if got := rec.scrub.learnSkipped.Load(); got != int64(fields-MaxLearntPerBody) {
			t.Errorf("%d KiB: %d values left out, want %d", size>>10, got, fields-MaxLearntPerBody)
		}
		if err := rec.Err(); err == nil || !strings.Contains(err.Error(), "more than the 256 learnt") {
			t.Errorf("%d KiB: Err() = %v, want the recording reported incomplete", size>>10, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "up", "*.json"))
		if len(files) != 1 {
			t.Fatalf("%d KiB: body files %v", size>>10, files)
		}
		got, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if v := regexp.MustCompile(`t-\d{8}-x{8}`).Find(got); v != nil {
			t.Errorf("%d KiB: the recorded body holds the token %s", size>>10, v)
		}
		if n := bytes.Count(got, []byte(`"token":"[REDACTED]"`)); n != fields {
			t.Errorf("%d KiB: %d of %d token fields redacted", size>>10, n, fields)
		}
		steps[size] = rec.scrub.steps.Load()
	}
	// The automaton's transitions grow with the body, not with the body
	// times the secrets: 8 times the body, about 8 times the work (a
	// quadratic scrubber would take 64 times).
	small, large := steps[1<<20], steps[MaxBodyBytes]
	t.Logf("automaton transitions: %d for 1 MiB, %d for 8 MiB", small, large)
	if large > 10*small || large > 4*MaxBodyBytes {
		t.Errorf("automaton transitions: %d for 1 MiB, %d for 8 MiB", small, large)
	}
}

// Learning stops at MaxLearnt values in all, whichever bodies they come
// from; given secrets are not bounded, and known values do not count.
func TestLearningInAllIsBounded(t *testing.T) {
	s := NewScrubber()
	body := func(from, n int) []byte {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"access_token":"tok-` + strconv.Itoa(from+i) + `-end"}`)
		}
		b.WriteString("]")
		return []byte(b.String())
	}
	for i := 0; i < MaxLearnt; i += MaxLearntPerBody {
		if skipped := s.LearnJSON(body(i, MaxLearntPerBody)); skipped != 0 {
			t.Fatalf("body %d: %d left out within the bounds", i/MaxLearntPerBody, skipped)
		}
	}
	if skipped := s.LearnJSON(body(0, 10)); skipped != 0 {
		t.Errorf("known values counted as new: %d left out", skipped)
	}
	if skipped := s.LearnJSON(body(MaxLearnt, 3)); skipped != 3 {
		t.Errorf("past MaxLearnt: %d left out, want 3", skipped)
	}
	s.Add("given-after-the-bound")
	if got := s.String("tok-0-end tok-4095-end tok-4096-end given-after-the-bound"); got != "[REDACTED] [REDACTED] tok-4096-end [REDACTED]" {
		t.Errorf("got %q", got)
	}
}

// Overlapping secrets go as one: no byte of either is left beside the
// marker, whichever is longer. (Replacing the longer first left "ab" of
// "abcd"; replacing leftmost-longest would leave "efgh" of "cdefgh".)
func TestOverlappingSecretsGoWhole(t *testing.T) {
	s := NewScrubber("abcd", "cdefgh", "ghij-long-secret")
	for body, want := range map[string]string{
		"xxabcdefghyy":            "xx[REDACTED]yy",
		"abcdefghij-long-secret!": "[REDACTED]!",
		"abcd cdefgh":             "[REDACTED] [REDACTED]",
		"abcdabcd":                "[REDACTED][REDACTED]",
	} {
		if got := s.String(body); got != want {
			t.Errorf("%q: got %q, want %q", body, got, want)
		}
	}
}

// The credential fields are found at any depth and in document order,
// where they lie; other fields and non-string values are not.
func TestCredentialFields(t *testing.T) {
	body := []byte(`{"a":[{"token" : "one1"},{"x":{"Access-Token":"two2","token":3}}],"token":{"secret":"three"},"t":["token","four"]}`)
	values, at := credentialFields(body)
	if want := []string{"one1", "two2", "three"}; !slices.Equal(values, want) {
		t.Fatalf("values %q, want %q", values, want)
	}
	for i, sp := range at {
		if got := string(body[sp.start:sp.end]); got != `"`+values[i]+`"` {
			t.Errorf("span %d is %s", i, got)
		}
	}
	if got := string(redactFields(body, at)); got != `{"a":[{"token" : "[REDACTED]"},{"x":{"Access-Token":"[REDACTED]","token":3}}],"token":{"secret":"[REDACTED]"},"t":["token","four"]}` {
		t.Errorf("redacted: %s", got)
	}
	if v, _ := credentialFields([]byte(`{"token":"abcd"`)); v != nil {
		t.Errorf("bytes that are not JSON taught %q", v)
	}
}

// With many secrets a node has many edges (searched by halving, not in
// turn); the automaton must still find exactly what plain search finds.
func TestMatcherManySecrets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789abcdefghij"[rng.IntN(20)]
		}
		return string(b)
	}
	var secrets []string
	for range 400 {
		secrets = append(secrets, word(2+rng.IntN(6)))
	}
	m := newMatcher(secrets)
	for range 50 {
		text := []byte(word(2000))
		want := make([]bool, len(text))
		for _, sec := range secrets {
			for i := 0; ; {
				j := bytes.Index(text[i:], []byte(sec))
				if j < 0 {
					break
				}
				for k := i + j; k < i+j+len(sec); k++ {
					want[k] = true
				}
				i += j + 1
			}
		}
		got := make([]bool, len(text))
		var steps int
		for _, sp := range m.cover(text, &steps) {
			for k := sp.start; k < sp.end; k++ {
				got[k] = true
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("covered differently from plain search in %s", text)
		}
	}
}

// Rewriting markers rolls the automaton back after each replacement; bodies
// that make it replace at every few bytes, beside secrets that run deep
// through markers, still cost a bounded number of transitions per byte,
// the same at 16 KiB as at 128 KiB.
func TestScrubWorkIsLinear(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		unit    string
	}{
		{"marker spells its own secret", []string{"]000"}, "]000000"},
		{"beside a secret of markers", []string{"]000", strings.Repeat("[REDACTED]", 50) + "x"}, "]000000"},
		{"chain across markers", []string{"]D[R", "bbbb"}, "bbbbD"},
		{"deep secret of markers", []string{"TED][RED", "aaaa", strings.Repeat("aaaa[REDACTED]", 200) + "z"}, "aaaa"},
		{"deep plain secret", []string{"aaaa", strings.Repeat("a", 3000) + "b"}, "aaaa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var perByte []float64
			for _, n := range []int{16 << 10, 128 << 10} {
				s := NewScrubber(tc.secrets...)
				body := strings.Repeat(tc.unit, n/len(tc.unit))
				out := s.String(body)
				for _, sec := range tc.secrets {
					if strings.Contains(out, sec) {
						t.Fatalf("%q survives", sec)
					}
				}
				perByte = append(perByte, float64(s.steps.Load())/float64(len(body)))
			}
			if perByte[1] > 16 || perByte[1] > 1.25*perByte[0] {
				t.Errorf("transitions per byte: %.2f at 16 KiB, %.2f at 128 KiB", perByte[0], perByte[1])
			}
		})
	}
}

// A request body with more credentials than are learnt from one body is
// left out of the manifest, since some of them would be written as they are.
func TestRequestBodyPastTheBoundIsNotKept(t *testing.T) {
	dir := t.TempDir()
	rec, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hc := rec.Client("up", &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
	})})
	for _, n := range []int{MaxLearntPerBody, MaxLearntPerBody + 1} {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"password":"pw-` + strconv.Itoa(n) + "-" + strconv.Itoa(i) + `-end"}`)
		}
		b.WriteString("]")
		resp, err := hc.Post("http://up.example/login", "application/json", strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recording, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := recording.Manifest
	if len(m.Exchanges) != 2 || !strings.Contains(m.Exchanges[0].RequestBody, `{"password":"[REDACTED]"}`) || m.Exchanges[1].RequestBody != "" {
		t.Fatalf("request bodies kept: %q…, %q…", clipTest(m.Exchanges[0].RequestBody), clipTest(m.Exchanges[1].RequestBody))
	}
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if v := regexp.MustCompile(`pw-\d+-\d+-end`).Find(raw); v != nil {
		t.Errorf("the manifest holds %s", v)
	}
}

func clipTest(s string) string { return s[:min(len(s), 60)] }
