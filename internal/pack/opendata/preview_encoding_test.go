package opendata

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// Excel's "Unicode text" is UTF-16, with a byte order mark or without;
// read as Windows-1255 it was noise. A body cut by the download bound keeps
// its whole lines, two bytes each line end.
func TestDecodeTextUTF16(t *testing.T) {
	const text = "שם,עיר\nדנה,חיפה\nיוסי,באר שבע\n"
	for _, tc := range []struct {
		name string
		e    unicode.Endianness
		bom  unicode.BOMPolicy
		want string
	}{
		{"le with BOM", unicode.LittleEndian, unicode.UseBOM, "utf-16le"},
		{"be with BOM", unicode.BigEndian, unicode.UseBOM, "utf-16be"},
		{"le", unicode.LittleEndian, unicode.IgnoreBOM, "utf-16le"},
		{"be", unicode.BigEndian, unicode.IgnoreBOM, "utf-16be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := unicode.UTF16(tc.e, tc.bom).NewEncoder().Bytes([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if got, enc := decodeText(body); got != text || enc != tc.want {
				t.Errorf("decodeText: %q, %q; want %q, %q", got, enc, text, tc.want)
			}
			// Cut within "באר שבע" and within a character's two bytes.
			cut := body[:len(body)-7]
			if got, _ := decodeText(wholeLines(cut)); got != "שם,עיר\nדנה,חיפה\n" {
				t.Errorf("cut body: %q", got)
			}
		})
	}
	if got := string(wholeLines([]byte("a,b\n1,2\n3,"))); got != "a,b\n1,2\n" {
		t.Errorf("UTF-8 cut: %q", got)
	}
	if got, enc := decodeText([]byte("a,b\n")); got != "a,b\n" || enc != "utf-8" {
		t.Errorf("plain UTF-8: %q, %q", got, enc)
	}
	if strings.Contains(func() string { s, _ := decodeText([]byte{0xF9, 0xEC, 0xE5, 0xED}); return s }(), "\uFFFD") {
		t.Error("Windows-1255 no longer decoded")
	}
}
