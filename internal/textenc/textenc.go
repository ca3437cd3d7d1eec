// Package textenc recognises how the text files people export from
// spreadsheets are encoded before they are read as UTF-8: UTF-8 with the
// byte order mark Excel writes, and UTF-16 (Excel's "Unicode text"), with
// a byte order mark or without one.
package textenc

import (
	"bufio"
	"bytes"
	"io"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Sniffed is how many bytes of a file [Detect] needs to see.
const Sniffed = 512

// Names of the encodings [Detect] recognises.
const (
	UTF8BOM = "utf-8 with BOM"
	UTF16LE = "utf-16le"
	UTF16BE = "utf-16be"
)

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// Detect names the encoding of a file that starts with head (its first
// [Sniffed] bytes, or all of it if shorter) and returns a decoder to UTF-8
// for it that also drops the byte order mark. It returns nil when the file
// has no byte order mark and does not look like UTF-16: it is then UTF-8,
// or some single-byte code page the caller may guess.
//
// UTF-16 without a byte order mark is recognised by its zero bytes: text
// with ASCII in it (digits, separators, line ends, Latin letters) has a zero
// as the high byte of each such character, on one side of every pair, and
// no UTF-8 or single-byte text holds zero bytes at all. Text with no ASCII
// character (a file of Hebrew words alone) is not recognised.
func Detect(head []byte) (encoding.Encoding, string) {
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		return unicode.UTF8BOM, UTF8BOM
	case bytes.HasPrefix(head, bomUTF16LE):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), UTF16LE
	case bytes.HasPrefix(head, bomUTF16BE):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), UTF16BE
	}
	head = head[:min(len(head), Sniffed)&^1]
	var even, odd int // zero bytes at even and odd offsets
	for i := 0; i < len(head); i += 2 {
		if head[i] == 0 {
			even++
		}
		if head[i+1] == 0 {
			odd++
		}
	}
	// Some ASCII (a Hebrew CSV may have little more than its commas and
	// line ends: one character in sixteen, and two at least), and zeros on
	// one side only (a character U+xx00 puts one on the other side now and
	// then).
	least := max(2, len(head)/2/16)
	switch {
	case odd >= least && even*8 <= odd:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), UTF16LE
	case even >= least && odd*8 <= even:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), UTF16BE
	}
	return nil, ""
}

// NewReader returns a reader of r's text as UTF-8, decoded when [Detect]
// recognises its start, and the encoding's name ("" when r is passed on as
// it is). An error is one reading the start of r.
func NewReader(r io.Reader) (io.Reader, string, error) {
	br := bufio.NewReaderSize(r, Sniffed)
	head, err := br.Peek(Sniffed)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, "", err
	}
	enc, name := Detect(head)
	if enc == nil {
		return br, "", nil
	}
	return transform.NewReader(br, enc.NewDecoder()), name, nil
}
