package tidal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"PT3M", 3 * time.Minute, true},
		{"PT2H16S", 2*time.Hour + 16*time.Second, true},
		{"PT4M5S", 4*time.Minute + 5*time.Second, true},
		{"PT1H2M3S", time.Hour + 2*time.Minute + 3*time.Second, true},
		{"PT0S", 0, true},
		{"PT45S", 45 * time.Second, true},
		{"PT1.5S", 1500 * time.Millisecond, true},
		{"PT0,25S", 250 * time.Millisecond, true},
		{"P1D", 24 * time.Hour, true},
		{"P1DT1H", 25 * time.Hour, true},
		{"P2W", 14 * 24 * time.Hour, true},
		{"PT90M", 90 * time.Minute, true},
		{"", 0, false},
		{"P", 0, false},
		{"PT", 0, false},
		{"P1DT", 0, false},
		{"3M", 0, false},
		{"pt3m", 0, false},
		{"PT3", 0, false},
		{"PTM", 0, false},
		{"PT5S3M", 0, false}, // wrong order
		{"PT3M3M", 0, false}, // repeated unit
		{"P3H", 0, false},    // hours need T
		{"PT1D", 0, false},   // days must precede T
		{"P1Y", 0, false},    // years have no fixed length
		{"P1M", 0, false},    // months neither
		{"PT1.5M", 0, false}, // fraction only on seconds
		{"PT1.S", 0, false},  // empty fraction
		{"PT.5S", 0, false},  // no integer part
		{"PTT3M", 0, false},  // repeated T
		{"-PT3M", 0, false},  // negative
		{"PT-3M", 0, false},  // negative component
		{"PT3M ", 0, false},  // trailing junk
		{"PT99999999999999999999H", 0, false},
		{"PT9999999999999H", 0, false}, // overflows time.Duration
		{"PT" + string(make([]byte, 100)), 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestPickArtwork(t *testing.T) {
	sizes := func(ws ...int) []Artwork {
		var out []Artwork
		for _, w := range ws {
			out = append(out, Artwork{URL: fmt.Sprintf("https://img/%dx%d.jpg", w, w), Width: w, Height: w})
		}
		return out
	}
	tests := []struct {
		name  string
		files []Artwork
		want  int // width of the pick; 0 for none
	}{
		{"TIDAL's ladder picks 640", sizes(1280, 1080, 750, 640, 320, 160, 80), 640},
		{"no 640: next larger", sizes(1280, 750, 320), 750},
		{"ascending order", sizes(80, 320, 750, 1280), 750},
		{"all small: the largest", sizes(80, 320, 160), 320},
		{"one file", sizes(80), 80},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		got := pickArtwork(tt.files)
		want := ""
		for _, f := range tt.files {
			if f.Width == tt.want {
				want = f.URL
			}
		}
		if got != want {
			t.Errorf("%s: picked %q, want %q", tt.name, got, want)
		}
	}
}

// fakeTime drives the bucket: sleeping advances the clock instead of waiting.
type fakeTime struct {
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeTime) Now() time.Time { return f.now }

func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return nil
}

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestBucketDefaultsBeforeAnyHeader(t *testing.T) {
	ft := &fakeTime{now: time.Unix(1e9, 0)}
	b := newBucket(ft.Now, ft.Sleep)
	for i := range defaultBurst {
		if err := b.wait(context.Background()); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if len(ft.sleeps) != 0 {
		t.Fatalf("slept %v within the default burst", ft.sleeps)
	}
	must(t, b.wait(context.Background()))
	if want := []time.Duration{time.Second / defaultReplenish}; len(ft.sleeps) != 1 || ft.sleeps[0] != want[0] {
		t.Errorf("sleeps = %v, want %v", ft.sleeps, want)
	}
}

func TestBucketFollowsHeaders(t *testing.T) {
	tests := []struct {
		name       string
		h          http.Header
		wantSleeps []time.Duration // for the next two requests
	}{
		{"remaining 0 at 4/s", headers("X-Ratelimit-Remaining", "0", "X-Ratelimit-Burst-Capacity", "20", "X-Ratelimit-Replenish-Rate", "4"),
			[]time.Duration{250 * time.Millisecond, 250 * time.Millisecond}},
		{"one left at 10/s", headers("X-Ratelimit-Remaining", "1", "X-Ratelimit-Replenish-Rate", "10"),
			[]time.Duration{100 * time.Millisecond}},
		{"plenty left", headers("X-Ratelimit-Remaining", "5", "X-Ratelimit-Burst-Capacity", "5"), nil},
		{"requests cost 2 tokens", headers("X-Ratelimit-Remaining", "2", "X-Ratelimit-Replenish-Rate", "2", "X-Ratelimit-Requested-Tokens", "2"),
			[]time.Duration{time.Second}},
		{"garbage headers are ignored", headers("X-Ratelimit-Remaining", "lots", "X-Ratelimit-Replenish-Rate", "-1", "X-Ratelimit-Burst-Capacity", "NaN"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTime{now: time.Unix(1e9, 0)}
			b := newBucket(ft.Now, ft.Sleep)
			b.observe(tt.h)
			for range 2 {
				must(t, b.wait(context.Background()))
			}
			if len(ft.sleeps) != len(tt.wantSleeps) {
				t.Fatalf("sleeps = %v, want %v", ft.sleeps, tt.wantSleeps)
			}
			for i := range ft.sleeps {
				if ft.sleeps[i] != tt.wantSleeps[i] {
					t.Errorf("sleeps = %v, want %v", ft.sleeps, tt.wantSleeps)
				}
			}
		})
	}
}

func TestBucketRefillsOverTime(t *testing.T) {
	ft := &fakeTime{now: time.Unix(1e9, 0)}
	b := newBucket(ft.Now, ft.Sleep)
	b.observe(headers("X-Ratelimit-Remaining", "0", "X-Ratelimit-Burst-Capacity", "3", "X-Ratelimit-Replenish-Rate", "1"))
	ft.now = ft.now.Add(time.Hour) // refills to capacity, not beyond
	for range 3 {
		must(t, b.wait(context.Background()))
	}
	must(t, b.wait(context.Background()))
	if len(ft.sleeps) != 1 || ft.sleeps[0] != time.Second {
		t.Errorf("sleeps = %v, want one of 1s after the burst of 3", ft.sleeps)
	}
}

func TestBucketHonoursContextAndBounds(t *testing.T) {
	ft := &fakeTime{now: time.Unix(1e9, 0)}
	b := newBucket(ft.Now, ft.Sleep)
	b.observe(headers("X-Ratelimit-Remaining", "0", "X-Ratelimit-Replenish-Rate", "1"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}

	dl, cancel := context.WithDeadline(context.Background(), ft.now.Add(500*time.Millisecond))
	defer cancel()
	var rw errRateWait
	if err := b.wait(dl); !errors.As(err, &rw) || rw.d != time.Second {
		t.Errorf("deadline before the next token: %v", err)
	}

	b.observe(headers("X-Ratelimit-Remaining", "0", "X-Ratelimit-Replenish-Rate", "0.01"))
	if err := b.wait(context.Background()); !errors.As(err, &rw) {
		t.Errorf("wait beyond maxRateWait: %v", err)
	}
	if len(ft.sleeps) != 0 {
		t.Errorf("slept %v though no wait was possible", ft.sleeps)
	}
}

func TestBucketAfter429(t *testing.T) {
	ft := &fakeTime{now: time.Unix(1e9, 0)}
	b := newBucket(ft.Now, ft.Sleep)
	if d := b.exhausted(); d != time.Second/defaultReplenish {
		t.Errorf("exhausted() = %v", d)
	}
	must(t, b.wait(context.Background()))
	if len(ft.sleeps) != 1 {
		t.Errorf("request after a 429 did not wait: %v", ft.sleeps)
	}
}
