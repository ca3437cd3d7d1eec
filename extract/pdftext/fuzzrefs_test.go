package pdftext

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// HostilePDFs gives the external tests (FuzzExtract's seeds) the
// documents of TestReferenceCycles.
var HostilePDFs = hostilePDFs

// refDoc builds a well-formed PDF whose references are chosen by in: the
// page tree's /Type, /Kids and /Parent entries, how many cross-reference
// sections there are and where each /Prev points, which objects live in
// object streams, and where those streams are stored and what they
// /Extend. Every byte string makes a document, so the fuzzer explores
// reference graphs (cycles included) rather than PDF syntax.
func refDoc(in []byte) []byte {
	next := func(n int) int {
		if len(in) == 0 {
			return 0
		}
		b := in[0]
		in = in[1:]
		return int(b) % n
	}
	// Objects: 1 catalog, 2–10 page-tree nodes, 11 content, 12 font,
	// 13–14 object streams, then cross-reference streams.
	ref := func() string {
		if n := next(12); n >= 2 {
			return fmt.Sprintf("%d 0 R", n) // 11: not a node
		}
		return "null"
	}
	bodies := map[int]string{1: "<</Type/Catalog/Pages 2 0 R>>"}
	for n := 2; n <= 10; n++ {
		kids := ""
		for range next(4) {
			kids += ref() + " "
		}
		typ := "Pages"
		if n > 2 && next(2) == 1 {
			typ = "Page"
		}
		bodies[n] = fmt.Sprintf("<</Type/%s/Kids[%s]/Count %d/Parent %s/Contents 11 0 R/Resources<</Font<</F1 12 0 R>>>>>>", typ, kids, next(4), ref())
	}
	d := newHostile()
	d.obj(1, bodies[1])
	for n := 2; n <= 10; n++ {
		d.obj(n, bodies[n])
	}
	d.stream(11, "", []byte("BT /F1 12 Tf 72 700 Td (Fuzzed) Tj ET"))
	d.obj(12, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")

	sections := 1 + next(3)
	prevs := make([]int, sections) // which section each one's /Prev names, or -1
	for i := range prevs {
		prevs[i] = next(sections+1) - 1
	}
	offs := make([]int, sections)
	if next(2) == 0 {
		// Classic tables only.
		for i := range sections {
			extra := ""
			if prevs[i] >= 0 {
				extra = "/Prev 0000000000"
			}
			offs[i] = d.table(extra)
		}
	} else {
		// Cross-reference streams; objects 2–10 in the file or in object
		// stream 13 or 14.
		rows := map[int]xrefRow{0: {0, 0, 65535}, 1: {1, d.offsets[1], 0}, 11: {1, d.offsets[11], 0}, 12: {1, d.offsets[12], 0}}
		held := map[int]map[int]string{13: {}, 14: {}}
		for n := 2; n <= 10; n++ {
			if s := next(3); s == 0 {
				rows[n] = xrefRow{1, d.offsets[n], 0}
			} else {
				c := 12 + s
				rows[n] = xrefRow{2, c, len(held[c])}
				held[c][n] = bodies[n]
			}
		}
		for c := 13; c <= 14; c++ {
			held[c][99] = "null" // never empty
			data, first := objStm(held[c])
			ext := ""
			if e := next(3); e > 0 {
				ext = fmt.Sprintf("/Extends %d 0 R", 12+e)
			}
			d.stream(c, fmt.Sprintf("/Type/ObjStm/N %d/First %d%s", len(held[c]), first, ext), data)
			rows[c] = xrefRow{1, d.offsets[c], 0}
			if next(4) == 0 {
				rows[c] = xrefRow{2, 27 - c, 0} // inside the other one
			}
		}
		for i := range sections {
			extra := ""
			if prevs[i] >= 0 {
				extra = "/Prev 0000000000"
			}
			r := map[int]xrefRow{}
			for k, v := range rows {
				r[k] = v
			}
			offs[i] = d.xrefStream(15+i, r, extra)
		}
	}
	for i, p := range prevs {
		if p >= 0 {
			d.patch(offs[i], offs[p])
		}
	}
	return d.end(offs[sections-1])
}

// FuzzReferences: whatever the reference graph, extraction ends with a
// document or ErrMalformed/ErrNoText, well before the deadline, and frees
// its one worker (a leaked worker fails every later input with ErrBusy).
func FuzzReferences(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 3, 0, 0, 1, 0, 2, 1, 0, 0, 0, 2})       // a page under the root
	f.Add([]byte{1, 2, 0, 0, 0})                            // the root its own kid
	f.Add([]byte{0, 0, 0, 0, 1, 1, 5, 0, 5, 4, 4, 0, 2, 1}) // /Prev back to itself
	f.Add([]byte{1, 3, 0, 0, 1, 0, 0, 9, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 2, 0, 1, 0})
	x := New(Options{MaxWorkers: 1, MaxPages: 50, Timeout: 10 * time.Second})
	f.Fuzz(func(t *testing.T, in []byte) {
		data := refDoc(in)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		doc, err := x.Extract(ctx, data)
		switch {
		case err == nil:
			if doc.PagesRead == 0 {
				t.Fatalf("no error but no pages")
			}
		case errors.Is(err, ErrMalformed), errors.Is(err, ErrNoText):
		default:
			t.Fatalf("got %v after %v\n%s", err, time.Since(start), data)
		}
	})
}
