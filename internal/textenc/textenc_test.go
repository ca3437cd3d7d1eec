package textenc

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

func encode(t testing.TB, e unicode.Endianness, bom unicode.BOMPolicy, s string) []byte {
	t.Helper()
	b, err := unicode.UTF16(e, bom).NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDetect(t *testing.T) {
	// Long enough that NewReader cannot see it all at once.
	text := strings.Repeat("isrc,title\nUSRC17607839,שיר ראשון 😀\n", 40)
	hebrewOnly := strings.Repeat("שיר", 20)
	win1255, err := charmap.Windows1255.NewEncoder().String(strings.Repeat("isrc,title\nUSRC17607839,שיר ראשון\n", 40))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		raw        []byte
		text       string
	}{
		{"utf-8", "", []byte(text), text},
		{"utf-8 with BOM", UTF8BOM, append([]byte("\ufeff"), text...), text},
		{"utf-16le with BOM", UTF16LE, encode(t, unicode.LittleEndian, unicode.UseBOM, text), text},
		{"utf-16be with BOM", UTF16BE, encode(t, unicode.BigEndian, unicode.UseBOM, text), text},
		{"utf-16le", UTF16LE, encode(t, unicode.LittleEndian, unicode.IgnoreBOM, text), text},
		{"utf-16be", UTF16BE, encode(t, unicode.BigEndian, unicode.IgnoreBOM, text), text},
		// No ASCII, so no zero bytes: not recognised, as documented.
		{"utf-16le, Hebrew only", "", encode(t, unicode.LittleEndian, unicode.IgnoreBOM, hebrewOnly), ""},
		{"windows-1255", "", []byte(win1255), ""},
		{"one byte", "", []byte("a"), "a"},
		{"empty", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, name := Detect(tc.raw); name != tc.want {
				t.Errorf("Detect: %q, want %q", name, tc.want)
			}
			r, name, err := NewReader(bytes.NewReader(tc.raw))
			if err != nil || name != tc.want {
				t.Fatalf("NewReader: %q, %v", name, err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.text != "" && string(got) != tc.text {
				t.Errorf("read %q…, want %q…", got[:min(len(got), 40)], tc.text[:40])
			}
			if tc.text == "" && !bytes.Equal(got, tc.raw) {
				t.Errorf("an unrecognised file was changed")
			}
		})
	}
}

// FuzzDetect: text that holds no zero byte and no byte order mark is never
// taken for UTF-16, and whatever is taken for an encoding decodes.
func FuzzDetect(f *testing.F) {
	f.Add([]byte("isrc,title\n1,a\n"))
	f.Add([]byte("\xff\xfei\x00s\x00"))
	f.Add([]byte("i\x00s\x00r\x00c\x00"))
	f.Add([]byte("\x00i\x00s"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		enc, name := Detect(raw)
		if enc == nil {
			return
		}
		if !bytes.ContainsRune(raw, 0) && name != UTF8BOM && !bytes.HasPrefix(raw, bomUTF16LE) && !bytes.HasPrefix(raw, bomUTF16BE) {
			t.Fatalf("%q taken for %s", raw, name)
		}
		out, err := enc.NewDecoder().Bytes(raw)
		if err != nil || !utf8.Valid(out) {
			t.Fatalf("%s: %q decodes to %q, %v", name, raw, out, err)
		}
	})
}
