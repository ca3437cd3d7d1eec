package doctor

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// FuzzReadRESPLine feeds arbitrary server bytes to the Redis reply reader:
// it returns a value or an error, never panics, and keeps an error reply's
// text printable and short.
func FuzzReadRESPLine(f *testing.F) {
	for _, s := range []string{"+PONG\r\n", "+OK\r\n", "-NOAUTH Authentication required.\r\n", "$4\r\nPONG\r\n", "+PO\rNG\r\n", "+", "\r\n", strings.Repeat("+", 600) + "\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := readRESPLine(bufio.NewReaderSize(bytes.NewReader(b), maxRESPLine))
		if err == nil && strings.ContainsAny(v, "\r\n") {
			t.Fatalf("simple string %q holds a line break", v)
		}
		if re, ok := err.(*errRedis); ok {
			if len(re.msg) > 200 {
				t.Fatalf("error text of %d bytes", len(re.msg))
			}
			for _, c := range []byte(re.msg) {
				if c < 0x20 || c > 0x7e {
					t.Fatalf("unprintable byte %q in %q", c, re.msg)
				}
			}
		}
	})
}

func TestParseRESPLine(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"+PONG\r\n", "PONG", ""},
		{"-WRONGPASS bad\r\n", "", "redis: WRONGPASS bad"},
		{"$4\r\n", "", "unexpected reply type"},
		{"+PONG\n", "", "malformed"},
		{"+PO\rNG\r\n", "", "stray line break"},
	}
	for _, tt := range tests {
		got, err := parseRESPLine([]byte(tt.in))
		if got != tt.want || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("parseRESPLine(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
