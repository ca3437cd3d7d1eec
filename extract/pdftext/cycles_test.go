package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"
)

// hostileDoc writes a PDF (CONSTRUCTED here) object by object, keeping
// offsets, so that cross-reference sections can point anywhere,
// including back at themselves.
type hostileDoc struct {
	b       bytes.Buffer
	offsets map[int]int
}

func newHostile() *hostileDoc {
	d := &hostileDoc{offsets: map[int]int{}}
	d.b.WriteString("%PDF-1.5\n")
	return d
}

// obj writes "num 0 obj body endobj".
func (d *hostileDoc) obj(num int, body string) {
	d.offsets[num] = d.b.Len()
	fmt.Fprintf(&d.b, "%d 0 obj\n%s\nendobj\n", num, body)
}

// stream writes a stream object with no filter.
func (d *hostileDoc) stream(num int, dict string, data []byte) {
	d.offsets[num] = d.b.Len()
	fmt.Fprintf(&d.b, "%d 0 obj\n<<%s/Length %d>>\nstream\n", num, dict, len(data))
	d.b.Write(data)
	d.b.WriteString("\nendstream\nendobj\n")
}

// table writes a classic cross-reference section of every object so far,
// with trailer entries extra (which may hold "/Prev %010d" placeholders
// for patch), and returns its offset.
func (d *hostileDoc) table(extra string) int {
	off := d.b.Len()
	size := 0
	for n := range d.offsets {
		size = max(size, n+1)
	}
	fmt.Fprintf(&d.b, "xref\n0 %d\n0000000000 65535 f \n", size)
	for n := 1; n < size; n++ {
		if o, ok := d.offsets[n]; ok {
			fmt.Fprintf(&d.b, "%010d 00000 n \n", o)
		} else {
			d.b.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&d.b, "trailer\n<</Size %d/Root 1 0 R%s>>\n", size, extra)
	return off
}

// xrefEntry is a cross-reference stream row: type, then two fields.
type xrefRow struct{ kind, f2, f3 int }

// xrefStream writes object num as a cross-reference stream (no filter,
// W [1 4 2]) of rows, with dictionary entries extra, and returns its
// offset.
func (d *hostileDoc) xrefStream(num int, rows map[int]xrefRow, extra string) int {
	nums := make([]int, 0, len(rows)+1)
	rows[num] = xrefRow{1, d.b.Len(), 0}
	for n := range rows {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	var data []byte
	index := ""
	for _, n := range nums {
		r := rows[n]
		data = append(data, byte(r.kind), byte(r.f2>>24), byte(r.f2>>16), byte(r.f2>>8), byte(r.f2), byte(r.f3>>8), byte(r.f3))
		index += fmt.Sprintf("%d 1 ", n)
	}
	off := d.b.Len()
	d.stream(num, fmt.Sprintf("/Type/XRef/Size %d/W[1 4 2]/Index[%s]/Root 1 0 R%s", nums[len(nums)-1]+1, index, extra), data)
	return off
}

// end writes startxref and %%EOF.
func (d *hostileDoc) end(startxref int) []byte {
	fmt.Fprintf(&d.b, "startxref\n%d\n%%%%EOF\n", startxref)
	return d.b.Bytes()
}

// patch replaces the first "/Prev 0000000000" placeholder at or after
// from with off.
func (d *hostileDoc) patch(from, off int) {
	b := d.b.Bytes()
	i := bytes.Index(b[from:], []byte("/Prev 0000000000"))
	copy(b[from+i:], fmt.Sprintf("/Prev %010d", off))
}

// onePage writes a catalog (1), page tree (2) and one page (3) with text.
func (d *hostileDoc) onePage() {
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R]/Count 1>>")
	d.obj(3, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>")
	d.stream(4, "", []byte("BT /F1 12 Tf 72 700 Td (Hello) Tj ET"))
	d.obj(5, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
}

// objStm is an object stream's data (no filter) holding objs by number,
// with /First.
func objStm(objs map[int]string) (data []byte, first int) {
	nums := make([]int, 0, len(objs))
	for n := range objs {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	var head, body strings.Builder
	for _, n := range nums {
		fmt.Fprintf(&head, "%d %d ", n, body.Len())
		body.WriteString(objs[n] + " ")
	}
	return []byte(head.String() + body.String()), head.Len()
}

// hostilePDFs are documents whose references loop, one per kind of loop
// the library would follow forever (or recurse on until the process
// dies), each under a kilobyte.
func hostilePDFs() map[string][]byte {
	docs := map[string][]byte{}

	// The newest table's /Prev names an older one whose /Prev names the
	// newest again.
	d := newHostile()
	d.onePage()
	a := d.table("/Prev 0000000000")
	b := d.table(fmt.Sprintf("/Prev %d", a))
	d.patch(a, b)
	docs["xref table Prev cycle"] = d.end(a)

	// A table whose /Prev is itself.
	d = newHostile()
	d.onePage()
	a = d.table("/Prev 0000000000")
	d.patch(a, a)
	docs["xref table Prev self-loop"] = d.end(a)

	// Two cross-reference streams whose /Prev name each other.
	d = newHostile()
	d.onePage()
	rows := func() map[int]xrefRow {
		r := map[int]xrefRow{0: {0, 0, 65535}}
		for n := 1; n <= 5; n++ {
			r[n] = xrefRow{1, d.offsets[n], 0}
		}
		return r
	}
	a = d.xrefStream(6, rows(), "/Prev 0000000000")
	b = d.xrefStream(7, rows(), fmt.Sprintf("/Prev %d", a))
	d.patch(a, b)
	docs["xref stream Prev cycle"] = d.end(b)

	// The root of the page tree is its own kid.
	d = newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[2 0 R]/Count 1>>")
	docs["Kids self-cycle"] = d.end(d.table(""))

	// Two page-tree nodes, each the other's kid, below the root.
	d = newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R]/Count 1>>")
	d.obj(3, "<</Type/Pages/Kids[4 0 R]/Count 1/Parent 2 0 R>>")
	d.obj(4, "<</Type/Pages/Kids[3 0 R]/Count 1/Parent 3 0 R>>")
	docs["mutual Kids cycle"] = d.end(d.table(""))

	// A page without resources whose /Parent chain loops above it: the
	// lookup of inherited /Resources never ends.
	d = newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R]/Count 1>>")
	d.obj(3, "<</Type/Page/Parent 4 0 R/MediaBox[0 0 612 792]/Contents 6 0 R>>")
	d.obj(4, "<</Type/Pages/Parent 5 0 R>>")
	d.obj(5, "<</Type/Pages/Parent 4 0 R>>")
	d.stream(6, "", []byte("BT (Hello) Tj ET"))
	docs["Parent cycle"] = d.end(d.table(""))

	// The catalog is in object stream 5, which the cross-reference stream
	// says is stored in object stream 5: the library recurses without
	// reading anything until the stack overflows.
	d = newHostile()
	data, first := objStm(map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>"})
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 1/First %d", first), data)
	docs["object stream inside itself"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {2, 5, 0}}, ""))

	// Object 1 is said to be in object stream 5, which holds only object
	// 9 and /Extends 6, which holds only 9 and /Extends 5.
	d = newHostile()
	data, first = objStm(map[int]string{9: "null"})
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 1/First %d/Extends 6 0 R", first), data)
	d.stream(6, fmt.Sprintf("/Type/ObjStm/N 1/First %d/Extends 5 0 R", first), data)
	docs["object stream Extends cycle"] = d.end(d.xrefStream(7, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}, 6: {1, d.offsets[6], 0}}, ""))

	// Object stream 5's /N is object 7, which is in object stream 5: each
	// lookup of /N reads stream 5 and looks /N up again.
	d = newHostile()
	data, first = objStm(map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>", 7: "2"})
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 7 0 R/First %d", first), data)
	docs["object stream N inside itself"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}, 7: {2, 5, 1}}, ""))

	// The same with /First: the checks do not look at it, and the guard
	// stops the recursion at its depth bound (object 7's value is never
	// reached).
	d = newHostile()
	data, _ = objStm(map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>", 7: "9"})
	d.stream(5, "/Type/ObjStm/N 2/First 7 0 R", data)
	docs["object stream First inside itself"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}, 7: {2, 5, 1}}, ""))

	// The catalog, in object stream 5, is an unterminated <hex string> at
	// the end of the stream's data: the tokenizer reads white space for
	// ever there, without reading the file.
	d = newHostile()
	data, first = objStm(map[int]string{1: "<41"})
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 1/First %d", first), bytes.TrimSpace(data))
	docs["object stream ends inside a hex string"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}}, ""))

	// The same, the stream's data ASCII85-encoded.
	d = newHostile()
	data, first = objStm(map[int]string{1: "<41"})
	a85 := make([]byte, ascii85.MaxEncodedLen(len(data)))
	a85 = append(a85[:ascii85.Encode(a85, data)], "~>"...)
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 1/First %d/Filter/ASCII85Decode", first), a85)
	docs["object stream in ASCII85 ends inside a hex string"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}}, ""))

	// Object stream 5 claims 10^15 objects; looking for the catalog, the
	// library counts through them at the end of the data, without reading.
	d = newHostile()
	data, first = objStm(map[int]string{9: "null"})
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 999999999999999/First %d", first), data)
	docs["object stream with a huge N"] = d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}}, ""))
	return docs
}

// wantReason is how each of hostilePDFs is refused.
var wantReason = map[string]string{
	"xref table Prev cycle":                             "/Prev chain comes back",
	"xref table Prev self-loop":                         "/Prev chain comes back",
	"xref stream Prev cycle":                            "/Prev chain comes back",
	"Kids self-cycle":                                   "page tree is over 256 levels deep",
	"mutual Kids cycle":                                 "page tree is over 256 levels deep",
	"Parent cycle":                                      "/Parent chain",
	"object stream inside itself":                       "itself in an object stream",
	"object stream Extends cycle":                       "/Extends chain",
	"object stream N inside itself":                     "/N is not a number",
	"object stream First inside itself":                 "recursed over 512 calls deep",
	"object stream ends inside a hex string":            "ends inside a hex string",
	"object stream in ASCII85 ends inside a hex string": "ends inside a hex string",
	"object stream with a huge N":                       "/N is not a number",
}

// TestReferenceCycles: each document is refused as malformed at once, and
// the extractor's one worker is free for the next document. Before the
// checks, each of these held its worker for good (Extract gave up at
// Options.Timeout and every later call failed with ErrBusy), and the two
// object-stream recursions ended the process with a stack overflow.
func TestReferenceCycles(t *testing.T) {
	good := newHostile()
	good.onePage()
	goodPDF := good.end(good.table(""))
	for name, data := range hostilePDFs() {
		t.Run(name, func(t *testing.T) {
			if len(data) > 1024 {
				t.Fatalf("%d bytes; want a small document", len(data))
			}
			x := New(Options{MaxWorkers: 1, Timeout: 10 * time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := x.Extract(ctx, data)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("got %v after %v, want ErrMalformed", err, time.Since(start))
			}
			t.Logf("%v in %v", err, time.Since(start))
			if want := wantReason[name]; !strings.Contains(err.Error(), want) {
				t.Errorf("refused for %q, want %q", err, want)
			}
			// The worker must be back: a good document is read, not
			// refused as busy.
			doc, err := x.Extract(ctx, goodPDF)
			if err != nil || !strings.Contains(doc.Markdown, "Hello") {
				t.Fatalf("the next document: %v", err)
			}
		})
	}
}

// TestGuardStopsParser: a loop the checks did not catch still ends once
// the deadline passes, because every turn of it reads the document. Here
// the library's own lookup of inherited resources walks a /Parent cycle
// (collectPages, which refuses it, is not called) until stop is set.
func TestGuardStopsParser(t *testing.T) {
	data := hostilePDFs()["Parent cycle"]
	stop := new(atomic.Bool)
	g := &guardedReader{data: data, stop: stop}
	r, err := pdf.NewReader(g, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	page := pdf.Page{V: r.Trailer().Key("Root").Key("Pages").Key("Kids").Index(0)}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		page.Resources()
	}()
	// Let it go round the cycle many times before stopping it.
	for g.reads.Load() < 10_000 {
		runtime.Gosched()
	}
	stop.Store(true)
	select {
	case p := <-done:
		err, _ := p.(error)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(g.aborted(), context.DeadlineExceeded) {
			t.Fatalf("the parser ended with %v (aborted %v), want the deadline", p, g.aborted())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parser went on reading after stop was set")
	}
}

// TestPredictorRows: a predictor with 10^12 columns, on which the library
// allocates two rows before reading (a fatal out-of-memory error), skips
// its page when on a content stream and refuses the document when on an
// object stream.
func TestPredictorRows(t *testing.T) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("\x02BT (x) Tj ET"))
	zw.Close()
	d := newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids[3 0 R 7 0 R]/Count 2>>")
	d.obj(3, "<</Type/Page/Parent 2 0 R/Contents 4 0 R>>")
	d.stream(4, "/Filter/FlateDecode/DecodeParms<</Predictor 12/Columns 1000000000000>>", z.Bytes())
	d.obj(7, "<</Type/Page/Parent 2 0 R/Contents 8 0 R/Resources<</Font<</F1 9 0 R>>>>>>")
	d.stream(8, "", []byte("BT /F1 12 Tf 72 700 Td (Page two) Tj ET"))
	d.obj(9, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	doc, err := New(Options{}).Extract(context.Background(), d.end(d.table("")))
	if err != nil || len(doc.Skipped) != 1 || doc.Skipped[0] != 1 || !strings.Contains(doc.Markdown, "Page two") {
		t.Errorf("content stream: %v, %+v", err, doc)
	}

	d = newHostile()
	data, first := objStm(map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>"})
	z.Reset()
	zw = zlib.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	d.stream(5, fmt.Sprintf("/Type/ObjStm/N 1/First %d/Filter/FlateDecode/DecodeParms 9 0 R", first), z.Bytes())
	d.obj(9, "<</Predictor 12/Columns 1000000000000>>")
	pdfData := d.end(d.xrefStream(6, map[int]xrefRow{0: {0, 0, 65535}, 1: {2, 5, 0}, 5: {1, d.offsets[5], 0}, 9: {1, d.offsets[9], 0}}, ""))
	if _, err := New(Options{}).Extract(context.Background(), pdfData); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/Columns over") {
		t.Errorf("object stream: got %v", err)
	}
}

// TestPageTreeNodeBudget: a tree without a cycle that fans out to more
// nodes than the budget (120 references to a node that has 120 references
// to an empty node: 14 520 lookups, and no page) is refused, not walked.
func TestPageTreeNodeBudget(t *testing.T) {
	d := newHostile()
	d.obj(1, "<</Type/Catalog/Pages 2 0 R>>")
	d.obj(2, "<</Type/Pages/Kids["+strings.Repeat("3 0 R ", 120)+"]/Count 0>>")
	d.obj(3, "<</Type/Pages/Kids["+strings.Repeat("4 0 R ", 120)+"]/Count 0>>")
	d.obj(4, "<</Type/Pages/Kids[]/Count 0>>")
	_, err := New(Options{}).Extract(context.Background(), d.end(d.table("")))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "over 12000 nodes") {
		t.Fatalf("got %v", err)
	}
}
