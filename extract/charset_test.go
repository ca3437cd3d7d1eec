package extract

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

func encode(t *testing.T, e encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

func TestDecodeHTML(t *testing.T) {
	const french = "Le café où l’on déjeune, à côté de l’église — « très » bien."
	const japaneseText = "日本語のテキストです。東京は晴れ、気温は二十度でした。"
	page := func(head, text string) string {
		return "<html><head>" + head + "<title>t</title></head><body><p>" + text + "</p></body></html>"
	}
	tests := []struct {
		name        string
		body        []byte
		contentType string
		want        string // must appear in the output
	}{
		{
			name:        "windows-1252 from the header",
			body:        encode(t, charmap.Windows1252, page("", french)),
			contentType: "text/html; charset=windows-1252",
			want:        french,
		},
		{
			name: "windows-1252 from meta charset only",
			body: encode(t, charmap.Windows1252, page(`<meta charset="windows-1252">`, french)),
			want: french,
		},
		{
			name: "iso-8859-1 label from meta http-equiv means windows-1252",
			body: encode(t, charmap.Windows1252, page(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">`, french)),
			want: french,
		},
		{
			name:        "shift_jis from the header",
			body:        encode(t, japanese.ShiftJIS, page("", japaneseText)),
			contentType: "text/html; charset=Shift_JIS",
			want:        japaneseText,
		},
		{
			name: "shift_jis from meta",
			body: encode(t, japanese.ShiftJIS, page(`<meta http-equiv="content-type" content="text/html;charset=shift_jis">`, japaneseText)),
			want: japaneseText,
		},
		{
			name: "shift_jis undeclared is sniffed",
			body: encode(t, japanese.ShiftJIS, page("", strings.Repeat(japaneseText, 4))),
			want: japaneseText,
		},
		{
			name:        "utf-8 BOM wins over a header",
			body:        append([]byte("\xef\xbb\xbf"), page("", french)...),
			contentType: "text/html; charset=windows-1252",
			want:        "<html>" + "<head><title>t</title></head><body><p>" + french,
		},
		{
			name: "utf-16le BOM",
			body: encode(t, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), page("", french)),
			want: french,
		},
		{
			name: "utf-16be BOM",
			body: encode(t, unicode.UTF16(unicode.BigEndian, unicode.UseBOM), page("", japaneseText)),
			want: japaneseText,
		},
		{
			name:        "header lies: says windows-1252, bytes are UTF-8",
			body:        []byte(page("", french)),
			contentType: "text/html; charset=windows-1252",
			want:        french,
		},
		{
			name: "meta lies: says shift_jis, bytes are windows-1252",
			body: encode(t, charmap.Windows1252, page(`<meta charset="shift_jis">`, french)),
			want: french,
		},
		{
			name: "meta lies: says utf-8, bytes are windows-1252",
			body: encode(t, charmap.Windows1252, page(`<meta charset="utf-8">`, french)),
			want: french,
		},
		{
			name:        "unknown label falls back",
			body:        encode(t, charmap.Windows1252, page(`<meta charset="no-such-charset">`, french)),
			contentType: "text/html; charset=bogus",
			want:        french,
		},
		{
			name: "meta utf-16 on an ASCII page means utf-8",
			body: []byte(page(`<meta charset="utf-16">`, "plain ascii text")),
			want: "plain ascii text",
		},
		{
			name: "plain utf-8",
			body: []byte(page(`<meta charset="utf-8">`, japaneseText)),
			want: japaneseText,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeHTML(tt.body, tt.contentType)
			if err != nil {
				t.Fatalf("DecodeHTML: %v", err)
			}
			if !utf8.Valid(got) {
				t.Errorf("output is not valid UTF-8")
			}
			if bytes.HasPrefix(got, []byte("\xef\xbb\xbf")) {
				t.Errorf("BOM kept")
			}
			if !strings.Contains(string(got), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, got)
			}
		})
	}
}

// TestDecodeThenExtract checks the whole path on a legacy-charset page.
func TestDecodeThenExtract(t *testing.T) {
	const text = "Le café où l’on déjeune est à côté de l’église, et le menu du jour change chaque matin selon le marché."
	raw := encode(t, charmap.Windows1252, article("<p>"+text+"</p>"))
	page, err := DecodeHTML(raw, "text/html; charset=windows-1252")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Extract(context.Background(), page, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Markdown, text) {
		t.Errorf("Markdown lacks the decoded text:\n%s", doc.Markdown)
	}
}

// BenchmarkDecodeLegacy decodes a 100 KB windows-1252 page declared in its
// header, and the same page undeclared (the statistical sniff runs): the
// difference is what trying declarations first saves.
func BenchmarkDecodeLegacy(b *testing.B) {
	para := "<p>Le café crème coûte trois euros cinquante à Paris, dit-on, et c’est « très cher » pour un café.</p>\n"
	page, err := charmap.Windows1252.NewEncoder().String("<html><body>" + strings.Repeat(para, 1000) + "</body></html>")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, contentType string }{
		{"declared", "text/html; charset=windows-1252"},
		{"undeclared", "text/html"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := DecodeHTML([]byte(page), bc.contentType); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
