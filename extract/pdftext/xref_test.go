package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// TestReadXrefChainRealFiles: the cross-reference streams of the real
// test documents decode into tables that place their objects where the
// files have them.
func TestReadXrefChainRealFiles(t *testing.T) {
	for _, name := range []string{"walden.pdf", "hybrid.pdf", "adobe-errata.pdf", "blank-scan.pdf", "walden-encrypted-rc4.pdf"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			table, _, err := readXrefChain(data)
			if err != nil {
				t.Fatal(err)
			}
			inFile, compressed := 0, 0
			for num, e := range table {
				switch e.kind {
				case 1:
					inFile++
					if !bytes.HasPrefix(data[e.a:], fmt.Appendf(nil, "%d ", num)) {
						t.Errorf("object %d: offset %d holds %.20q", num, e.a, data[e.a:])
					}
				case 2:
					compressed++
					if c := table[e.a]; c.kind != 1 || !bytes.Contains(data[c.a:min(int(c.a)+200, len(data))], []byte("/ObjStm")) {
						t.Errorf("object %d: in %d, which is not an object stream in the file", num, e.a)
					}
				}
			}
			if inFile == 0 || compressed == 0 {
				t.Errorf("%d objects in the file, %d in object streams; want both", inFile, compressed)
			}
			if err := checkXref(data); err != nil {
				t.Error(err)
			}
		})
	}
}

// pngEncode filters rows of columns bytes with PNG filter tags, cycling
// through all five (PNG 9.2), written from the PNG specification
// independently of unpredictPNG.
func pngEncode(raw []byte, columns int) []byte {
	var out []byte
	prior := make([]byte, columns)
	for r := 0; len(raw) > 0; r++ {
		row := raw[:columns]
		raw = raw[columns:]
		tag := byte(r % 5)
		out = append(out, tag)
		for i, x := range row {
			var a, c byte
			if i > 0 {
				a, c = row[i-1], prior[i-1]
			}
			b := prior[i]
			switch tag {
			case 1:
				x -= a
			case 2:
				x -= b
			case 3:
				x -= byte((int(a) + int(b)) / 2)
			case 4:
				p := int(a) + int(b) - int(c)
				pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
				switch {
				case pa <= pb && pa <= pc:
					x -= a
				case pb <= pc:
					x -= b
				default:
					x -= c
				}
			}
			out = append(out, x)
		}
		prior = row
	}
	return out
}

func TestUnpredictPNG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, columns := range []int{1, 4, 7} {
		raw := make([]byte, columns*23)
		for i := range raw {
			raw[i] = byte(rng.IntN(256))
		}
		if got := unpredictPNG(pngEncode(raw, columns), columns); !bytes.Equal(got, raw) {
			t.Errorf("columns %d: decoded %x, want %x", columns, got, raw)
		}
	}
}

// predicted writes d's cross-reference stream as FlateDecode with the
// PNG Up predictor (12), which the library decodes too.
func (d *hostileDoc) predictedXrefStream(num int, rows map[int]xrefRow) int {
	rows[num] = xrefRow{1, d.b.Len(), 0}
	size := 0
	for n := range rows {
		size = max(size, n+1)
	}
	var raw []byte
	for n := range size {
		r, ok := rows[n]
		if !ok {
			r = xrefRow{0, 0, 0}
		}
		raw = append(raw, byte(r.kind), byte(r.f2>>24), byte(r.f2>>16), byte(r.f2>>8), byte(r.f2), byte(r.f3>>8), byte(r.f3))
	}
	var up []byte
	prior := make([]byte, 7)
	for ; len(raw) > 0; raw = raw[7:] {
		up = append(up, 2)
		for i := range 7 {
			up = append(up, raw[i]-prior[i])
		}
		prior = raw[:7]
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(up)
	zw.Close()
	off := d.b.Len()
	d.stream(num, fmt.Sprintf("/Type/XRef/Size %d/W[1 4 2]/Root 1 0 R/Filter/FlateDecode/DecodeParms<</Predictor 12/Columns 7>>", size), z.Bytes())
	return off
}

// TestPredictedXrefStream: a compressed, predicted cross-reference stream
// is decoded like the library decodes it: a good document is read, and an
// object stream inside itself is still found.
func TestPredictedXrefStream(t *testing.T) {
	d := newHostile()
	data, first := objStm(map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>", 2: "<</Type/Pages/Kids[3 0 R]/Count 1>>"})
	d.stream(6, fmt.Sprintf("/Type/ObjStm/N 2/First %d", first), data)
	d.obj(3, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>")
	d.stream(4, "", []byte("BT /F1 12 Tf 72 700 Td (Predicted) Tj ET"))
	d.obj(5, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	rows := map[int]xrefRow{1: {2, 6, 0}, 2: {2, 6, 1}, 3: {1, d.offsets[3], 0}, 4: {1, d.offsets[4], 0}, 5: {1, d.offsets[5], 0}, 6: {1, d.offsets[6], 0}}
	good := d.end(d.predictedXrefStream(7, rows))
	doc, err := New(Options{}).Extract(context.Background(), good)
	if err != nil || !strings.Contains(doc.Markdown, "Predicted") {
		t.Fatalf("good document: %v", err)
	}

	d = newHostile()
	d.stream(6, fmt.Sprintf("/Type/ObjStm/N 2/First %d", first), data)
	bad := d.end(d.predictedXrefStream(7, map[int]xrefRow{1: {2, 6, 0}, 2: {2, 6, 1}, 6: {2, 6, 2}}))
	if _, err := New(Options{}).Extract(context.Background(), bad); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "itself in an object stream") {
		t.Fatalf("object stream inside itself: got %v", err)
	}
}

// TestXrefBounds: sizes the library would allocate by are refused, as are
// /Prev chains longer than maxXrefSections even without a cycle.
func TestXrefBounds(t *testing.T) {
	tests := map[string]struct {
		want  string // in the error: the bound, not the library, refused it
		build func() []byte
	}{
		"xref stream /Size": {"/Size is not a number up to", func() []byte {
			d := newHostile()
			d.onePage()
			rows := map[int]xrefRow{}
			for n := 1; n <= 5; n++ {
				rows[n] = xrefRow{1, d.offsets[n], 0}
			}
			off := d.xrefStream(6, rows, "")
			// The stream's dictionary asks for 10^10 entries.
			b := bytes.Replace(d.b.Bytes()[off:], []byte("/Size 7/"), []byte("/Size 9999999999/"), 1)
			d.b.Truncate(off)
			d.b.Write(b)
			return d.end(off)
		}},
		"table subsection": {"subsection header", func() []byte {
			d := newHostile()
			d.onePage()
			off := d.b.Len()
			d.b.WriteString("xref\n4000000000 1\n0000000009 00000 n \ntrailer\n<</Size 7/Root 1 0 R>>\n")
			return d.end(off)
		}},
		"long /Prev chain": {"over 1024 cross-reference sections", func() []byte {
			d := newHostile()
			d.onePage()
			off := d.table("")
			for range maxXrefSections {
				off = d.table(fmt.Sprintf("/Prev %d", off))
			}
			return d.end(off)
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(Options{}).Extract(context.Background(), tt.build())
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrMalformed saying %q", err, tt.want)
			}
		})
	}
}

// FuzzCheckXref: the cross-reference reader takes any bytes without a
// panic, and whatever it accepts the library parses without looping.
func FuzzCheckXref(f *testing.F) {
	for _, name := range []string{"walden.pdf", "hybrid.pdf"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[max(0, len(data)-3000):]) // the xref stream and trailer
	}
	for _, data := range hostilePDFs() {
		f.Add(data)
	}
	f.Add([]byte("xref\n0 1\n0000000000 65535 f \ntrailer\n<</Size 1/Prev 9>>\nstartxref\n0\n%%EOF" + strings.Repeat(" ", 40)))
	x := New(Options{MaxWorkers: 1, MaxPages: 20, Timeout: 10 * time.Second})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkXref(data); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("checkXref: %v, not ErrMalformed", err)
			}
			return
		}
		if !IsPDF(data) {
			return
		}
		if _, err := x.Extract(context.Background(), data); errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBusy) {
			t.Fatalf("a document the checks passed timed out: %v", err)
		}
	})
}
