package music

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// filler reads as n bytes of 'a' without holding them, and counts what was
// read of it.
type filler struct{ n, read int64 }

func (f *filler) Read(p []byte) (int, error) {
	if f.read >= f.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), f.n-f.read)]
	for i := range p {
		p[i] = 'a'
	}
	f.read += int64(len(p))
	return len(p), nil
}

// readItems reads a library file, returning the good items' titles, the
// bad lines and the error.
func readItems(r io.Reader, format string) (titles []string, bad []int, err error) {
	err = ReadLibraryItems(r, format, func(line int, it LibraryItem, err error) error {
		if err != nil {
			bad = append(bad, line)
		} else {
			titles = append(titles, it.Track.Title)
		}
		return nil
	})
	return titles, bad, err
}

// A CSV field of 300 MB is not read into memory: the read stops about
// MaxLineBytes into its record, naming the record's line, and what came
// before it was read.
func TestCSVRecordIsBounded(t *testing.T) {
	huge := &filler{n: 300 << 20}
	in := io.MultiReader(strings.NewReader("isrc,title\nUSRC17607839,One\n\n\"USRC17607840\",\"two\nlines\"\n\nUSRC17607841,\""),
		huge, strings.NewReader("\"\nUSRC17607842,After\n"))
	titles, bad, err := readItems(in, "csv")
	if !errors.Is(err, errRecordTooLong) || !strings.Contains(err.Error(), "line 7:") {
		t.Fatalf("err = %v, want a record too long on line 7", err)
	}
	if fmt.Sprint(titles) != "[One two\nlines]" || len(bad) != 0 {
		t.Errorf("before the long record: titles %q, bad lines %v", titles, bad)
	}
	if huge.read > MaxLineBytes+64<<10 {
		t.Errorf("read %d bytes of the long field; the bound is %d", huge.read, MaxLineBytes)
	}
	// A parse error in the part read (a bare quote) does not hide it, nor
	// does the rest of the line go on as records of its own.
	huge = &filler{n: 3 * MaxLineBytes}
	in = io.MultiReader(strings.NewReader("isrc,title\nUSRC17607839,a\"b"), huge, strings.NewReader("\nUSRC17607842,After\n"))
	titles, bad, err = readItems(in, "csv")
	if !errors.Is(err, errRecordTooLong) || !strings.Contains(err.Error(), "line 2:") || len(titles)+len(bad) != 0 {
		t.Fatalf("bare quote: titles %q, bad lines %v, err %v", titles, bad, err)
	}
}

// A record of exactly MaxLineBytes is read (and its too long title
// reported as a bad line); the read goes on after it.
func TestCSVRecordAtTheBound(t *testing.T) {
	head := "isrc,title\n"
	row := "USRC17607839,"
	long := row + strings.Repeat("b", MaxLineBytes-len(row)-1) + "\n"
	titles, bad, err := readItems(strings.NewReader(head+long+"USRC17607840,Next\n"), "csv")
	if err != nil || fmt.Sprint(titles) != "[Next]" || fmt.Sprint(bad) != "[2]" {
		t.Fatalf("titles %q, bad lines %v, err %v", titles, bad, err)
	}
	_, _, err = readItems(strings.NewReader(head+"x"+long), "csv")
	if !errors.Is(err, errRecordTooLong) || !strings.Contains(err.Error(), "line 2:") {
		t.Fatalf("one byte more: err = %v", err)
	}
}

// Excel saves "Unicode text" as UTF-16 and CSV with a UTF-8 byte order
// mark; either is decoded, with its mark or (UTF-16) without.
func TestLibraryFileEncodings(t *testing.T) {
	const csvText = "isrc,title,artist\nUSRC17607839,שיר ראשון,זמר\n"
	const jsonlText = `{"isrc":"USRC17607839","title":"שיר ראשון","artist":"זמר"}` + "\n"
	utf16 := func(e unicode.Endianness, bom unicode.BOMPolicy, s string) []byte {
		b, err := unicode.UTF16(e, bom).NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, format := range []string{"csv", "jsonl"} {
		text := csvText
		if format == "jsonl" {
			text = jsonlText
		}
		for name, raw := range map[string][]byte{
			"utf-8":             []byte(text),
			"utf-8 with BOM":    append([]byte("\ufeff"), text...),
			"utf-16le with BOM": utf16(unicode.LittleEndian, unicode.UseBOM, text),
			"utf-16be with BOM": utf16(unicode.BigEndian, unicode.UseBOM, text),
			"utf-16le":          utf16(unicode.LittleEndian, unicode.IgnoreBOM, text),
			"utf-16be":          utf16(unicode.BigEndian, unicode.IgnoreBOM, text),
		} {
			titles, bad, err := readItems(bytes.NewReader(raw), format)
			if err != nil || fmt.Sprint(titles) != "[שיר ראשון]" || len(bad) != 0 {
				t.Errorf("%s %s: titles %q, bad lines %v, err %v", format, name, titles, bad, err)
			}
		}
	}
}

// FuzzRecordLimiter: under the bound the limiter is invisible to
// csv.Reader (the same records and errors as without it); the first record
// that ends more than the bound past the one before trips it (csv.Reader
// may report a parse error in the part it read instead, which is why
// eachCSVItem asks the limiter), and none before it does.
func FuzzRecordLimiter(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n\n\"x\ny\",3\n"), uint8(8))
	f.Add([]byte("a,\"b\nc\"\"\"\r\n1,2"), uint8(3))
	f.Add([]byte("a\"b,c\n1"), uint8(4))
	f.Add([]byte("00000"), uint8(4)) // the fuzzer's find: a last record at the bound, with no line end
	f.Fuzz(func(t *testing.T, in []byte, bound uint8) {
		max := int64(bound) + 1
		type result struct {
			rec string
			err string
		}
		var plain []result
		var ends []int64
		cr := csv.NewReader(bytes.NewReader(in))
		cr.FieldsPerRecord = -1
		for {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			plain = append(plain, result{fmt.Sprint(rec), fmt.Sprint(err)})
			ends = append(ends, cr.InputOffset())
			if err != nil && !errors.As(err, new(*csv.ParseError)) {
				break
			}
		}
		lim := &recordLimiter{r: bytes.NewReader(in), max: max}
		lr := csv.NewReader(lim)
		lr.FieldsPerRecord = -1
		prev := int64(0)
		for i, want := range plain {
			rec, err := lr.Read()
			if ends[i]-prev > max {
				if !lim.failed {
					t.Fatalf("record %d, %d bytes past the last, bound %d: %v, %v", i, ends[i]-prev, max, rec, err)
				}
				return
			}
			if lim.failed {
				t.Fatalf("record %d, %d bytes past the last, bound %d: too long", i, ends[i]-prev, max)
			}
			if got := (result{fmt.Sprint(rec), fmt.Sprint(err)}); got != want {
				t.Fatalf("record %d: %+v, want %+v", i, got, want)
			}
			lim.next(lr.InputOffset())
			prev = ends[i]
		}
	})
}
