package server

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestResumePoint(t *testing.T) {
	tests := []struct {
		header, query string
		turn          string
		seq           int64
		ok            bool
	}{
		{"", "", "", 0, true},
		{"abc:7", "", "abc", 7, true},
		{"7", "", "", 7, true},
		{" abc:0 ", "", "abc", 0, true},
		{"", "abc:3", "abc", 3, true}, // an EventSource's first request
		{"abc:7", "abc:3", "abc", 7, true},
		{"abc:-1", "", "", 0, false},
		{"abc:", "", "", 0, false},
		{":5", "", "", 0, false},
		{"a b:5", "", "", 0, false},
		{"abc:1099511627777", "", "", 0, false},
		{strings.Repeat("a", 130) + ":1", "", "", 0, false},
		{"abc:x", "", "", 0, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/x", nil)
		if tt.header != "" {
			r.Header.Set("Last-Event-ID", tt.header)
		}
		if tt.query != "" {
			q := r.URL.Query()
			q.Set("lastEventId", tt.query)
			r.URL.RawQuery = q.Encode()
		}
		turn, seq, ok := resumePoint(r)
		if turn != tt.turn || seq != tt.seq || ok != tt.ok {
			t.Errorf("resumePoint(%q, %q) = %q, %d, %v; want %q, %d, %v", tt.header, tt.query, turn, seq, ok, tt.turn, tt.seq, tt.ok)
		}
	}
}

// FuzzResumePoint feeds any Last-Event-ID: it never panics, and what it
// accepts is within bounds.
func FuzzResumePoint(f *testing.F) {
	for _, s := range []string{"abc:7", "7", "", "a:b:3", ":1", "x:-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/x", nil)
		r.Header["Last-Event-Id"] = []string{v}
		turn, seq, ok := resumePoint(r)
		if !ok {
			return
		}
		if seq < 0 || seq > maxResumeSeq || len(turn) > 128 || strings.ContainsAny(turn, " \t\r\n:") {
			t.Errorf("resumePoint(%q) accepted %q, %d", v, turn, seq)
		}
	})
}
