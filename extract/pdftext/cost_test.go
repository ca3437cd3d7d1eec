package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// costlyPDF is a small document whose page 1 shows 200 000 character
// codes in a font whose lookups the library makes by linear scan (a
// 20 000-entry ToUnicode map, or a /Differences array of 60 000 names without a Unicode value, each looked at for every byte);
// page 2 is ordinary.
func costlyPDF(t testing.TB, differences bool) []byte {
	t.Helper()
	flate := func(b string) []byte {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write([]byte(b))
		zw.Close()
		return z.Bytes()
	}
	d := newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R 7 0 R]/Count 2>>")
	d.obj(3, "<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>")
	z := flate("BT /F1 12 Tf (" + strings.Repeat("\xff\xfe", 100_000) + ") Tj ET")
	d.offsets[4] = d.b.Len()
	fmt.Fprintf(&d.b, "4 0 obj\n<</Length %d/Filter/FlateDecode>>\nstream\n%s\nendstream\nendobj\n", len(z), z)
	var cm strings.Builder
	cm.WriteString("begincmap\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n20000 beginbfchar\n")
	for i := range 20_000 {
		fmt.Fprintf(&cm, "<%04X> <0041>\n", i+1)
	}
	cm.WriteString("endbfchar\nendcmap\n")
	if differences {
		d.obj(5, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding<</Differences[0"+strings.Repeat("/zz", 60_000)+"]>>>>")
	} else {
		d.obj(5, "<</Type/Font/Subtype/Type0/BaseFont/X/Encoding/Identity-H/ToUnicode 6 0 R>>")
	}
	z = flate(cm.String())
	d.offsets[6] = d.b.Len()
	fmt.Fprintf(&d.b, "6 0 obj\n<</Length %d/Filter/FlateDecode>>\nstream\n%s\nendstream\nendobj\n", len(z), z)
	d.obj(7, "<</Type/Page/Parent 2 0 R/Contents 8 0 R/Resources<</Font<</F1 9 0 R>>>>>>")
	d.stream(8, "", []byte("BT /F1 12 Tf 72 700 Td (Page two) Tj ET"))
	d.obj(9, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	return d.end(d.table(""))
}

// TestDecodeWork: a page whose text the library would take minutes to
// decode, in memory where the guard cannot stop it, is skipped up front
// (before the bound it held its worker for 41 s, twice the deadline).
func TestDecodeWork(t *testing.T) {
	for _, differences := range []bool{false, true} {
		t.Run(fmt.Sprintf("differences=%v", differences), func(t *testing.T) {
			data := costlyPDF(t, differences)
			if len(data) > 256<<10 {
				t.Fatalf("%d bytes; want a small document", len(data))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			doc, err := New(Options{Timeout: 20 * time.Second}).Extract(ctx, data)
			if err != nil {
				t.Fatalf("%v after %v", err, time.Since(start))
			}
			if len(doc.Skipped) != 1 || doc.Skipped[0] != 1 || !strings.Contains(doc.Markdown, "<!-- page 1 skipped: its text would take too long to decode -->") ||
				!strings.Contains(doc.Markdown, "Page two") {
				t.Errorf("skipped %v, markdown:\n%.300s", doc.Skipped, doc.Markdown)
			}
			t.Logf("%d bytes read in %v", len(data), time.Since(start))
		})
	}
}

// endlessPDF has a page 1 whose content stream (or its font's ToUnicode
// map) ends inside a <hex string>, on which the library's tokenizer spins
// for ever without reading the file, and an ordinary page 2.
func endlessPDF(inCMap bool) []byte {
	d := newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R 7 0 R]/Count 2>>")
	d.obj(3, "<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>")
	if inCMap {
		d.stream(4, "", []byte("BT /F1 12 Tf 72 700 Td <0041> Tj ET"))
		d.obj(5, "<</Type/Font/Subtype/Type0/BaseFont/X/Encoding/Identity-H/ToUnicode 6 0 R>>")
		d.stream(6, "", []byte("begincmap\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n1 beginbfchar\n<0041> <00"))
	} else {
		d.stream(4, "", []byte("BT /F1 12 Tf 72 700 Td (Hello) Tj <41 4"))
		d.obj(5, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	}
	d.obj(7, "<</Type/Page/Parent 2 0 R/Contents 8 0 R/Resources<</Font<</F1 9 0 R>>>>>>")
	d.stream(8, "", []byte("BT /F1 12 Tf 72 700 Td (Page two) Tj ET"))
	d.obj(9, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	return d.end(d.table(""))
}

// TestEndlessStreams: such a page is skipped and the rest is read; before,
// the worker spun for good past its deadline (its loop never reads the
// file, so the guard cannot stop it).
func TestEndlessStreams(t *testing.T) {
	for _, inCMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("cmap=%v", inCMap), func(t *testing.T) {
			x := New(Options{MaxWorkers: 1, Timeout: 10 * time.Second})
			doc, err := x.Extract(context.Background(), endlessPDF(inCMap))
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Skipped) != 1 || doc.Skipped[0] != 1 || !strings.Contains(doc.Markdown, "<!-- page 1 skipped: its content ends inside a hex string -->") ||
				!strings.Contains(doc.Markdown, "Page two") {
				t.Errorf("skipped %v, markdown:\n%.300s", doc.Skipped, doc.Markdown)
			}
		})
	}
}

func TestTailWatch(t *testing.T) {
	for _, tt := range []struct {
		chunks []string
		want   bool
	}{
		{[]string{"BT (a) Tj ET"}, false},
		{[]string{"<41 42>"}, false},
		{[]string{"<"}, true},
		{[]string{"(x) Tj <4", "1 4", "2\n \n"}, true},
		{[]string{"<41", "> Tj", "\n"}, false},
		{[]string{"<41", "  ", ""}, true},
		{[]string{"<<41"}, true}, // an unclosed dictionary: malformed, flagged too
		{[]string{"<4g"}, false}, // the tokenizer stops with an error at g
	} {
		var w tailWatch
		for _, c := range tt.chunks {
			w.Write([]byte(c))
		}
		if got := w.endsInHexString(); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.chunks, got, tt.want)
		}
	}
}

// TestCMapBomb: a ToUnicode map of a few bytes that claims 10^9 entries
// (the library appends as many as the count says, 32 GB here, and the
// runtime's out-of-memory error ends the process) puts its page over the
// decoding bound, and the page is skipped; so is one that repeats
// endbfchar after a modest count, and one that hides the count behind a
// def'd name. A real map's bound is its size.
func TestCMapBomb(t *testing.T) {
	for name, cmap := range map[string]string{
		"count":    "begincmap 1000000000 beginbfchar endbfchar endcmap",
		"repeated": "begincmap 100 beginbfchar" + strings.Repeat(" endbfchar", 20_000) + " endcmap",
		"def'd":    "/CIDInit /ProcSet findresource begin 12 dict begin /n 999999999 def begincmap n beginbfchar endbfchar endcmap end end",
	} {
		t.Run(name, func(t *testing.T) {
			d := newHostile()
			d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
			d.obj(2, "<</Type/Pages/Kids[3 0 R 7 0 R]/Count 2>>")
			d.obj(3, "<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>")
			d.stream(4, "", []byte("BT /F1 12 Tf 72 700 Td <0041> Tj ET"))
			d.obj(5, "<</Type/Font/Subtype/Type0/BaseFont/X/Encoding/Identity-H/ToUnicode 6 0 R>>")
			d.stream(6, "", []byte(cmap))
			d.obj(7, "<</Type/Page/Parent 2 0 R/Contents 8 0 R/Resources<</Font<</F1 9 0 R>>>>>>")
			d.stream(8, "", []byte("BT /F1 12 Tf 72 700 Td (Page two) Tj ET"))
			d.obj(9, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
			doc, err := New(Options{}).Extract(context.Background(), d.end(d.table("")))
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Skipped) != 1 || doc.Skipped[0] != 1 || !strings.Contains(doc.Markdown, "Page two") {
				t.Errorf("skipped %v, markdown:\n%.300s", doc.Skipped, doc.Markdown)
			}
		})
	}
	var w cmapWatch
	w.Write([]byte("/CMapName /X def 2 begincodespacerange <00> <FF> endcodespacerange 2 beginbfchar <01> <0041> <02> (B) endbfchar 1 beginbfrange <10> <20> <0061> endbfrange"))
	if got := w.entries(); got != 4 {
		t.Errorf("a real map: bound %d, want 4 (the largest count, 2, times two end operators)", got)
	}
}
