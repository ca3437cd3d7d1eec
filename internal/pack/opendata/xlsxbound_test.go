package opendata

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/toolport/toolport/tool"
)

// hostileBook builds a workbook with a cell naming shared string 0 and the
// given parts replacing or adding to the minimal ones.
func hostileBook(t testing.TB, parts map[string]string) []byte {
	t.Helper()
	return minimalBook(t, parts, zip.Deflate)
}

// minimalBook is hostileBook with its parts compressed by method.
func minimalBook(t testing.TB, parts map[string]string, method uint16) []byte {
	t.Helper()
	all := map[string]string{
		"xl/workbook.xml":            `<workbook><sheets><sheet name="s" r:id="r1" xmlns:r="urn:r"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="r1" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/sharedStrings.xml":       `<sst><si><t>name</t></si></sst>`,
		"xl/worksheets/sheet1.xml":   `<worksheet><sheetData><row><c t="s"><v>0</v></c></row><row><c><v>1</v></c></row></sheetData></worksheet>`,
	}
	for k, v := range parts {
		all[k] = v
	}
	// Compressed fast: the tests build tens of MiB of parts, under -race.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	for name, body := range all {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// emptyStrings is a shared-strings part of n empty strings after "name":
// 5 bytes each, ~1000:1 compressed.
func emptyStrings(n int) string {
	return `<sst><si><t>name</t></si>` + strings.Repeat(`<si/>`, n) + `</sst>`
}

// nested is an element nested n deep inside open, then closed.
func nested(open, close string, n int) string {
	return open + strings.Repeat("<a>", n) + strings.Repeat("</a>", n) + close
}

// hostileBooks are the workbooks of the issue and their kin, each of which
// decompresses to less than the archive bound: at full size (the
// benchmark's), or at the least size that passes the reader's bounds (the
// tests', quicker to build).
func hostileBooks(t testing.TB, full bool) map[string][]byte {
	n, deep, long, rows := 12<<20, 3<<20, 60<<20, 10<<20 // 60 MiB of <si/>, 36 of <a>, 60 of text, 60 of <row/>
	if !full {
		n, deep, long, rows = 1<<20, 1<<16, 2<<20, 1
	}
	return map[string][]byte{
		"empty shared strings": hostileBook(t, map[string]string{"xl/sharedStrings.xml": emptyStrings(n)}),
		"deep shared string":   hostileBook(t, map[string]string{"xl/sharedStrings.xml": nested(`<sst><si><t>name</t></si><si>`, `</si></sst>`, deep)}),
		"deep sheet":           hostileBook(t, map[string]string{"xl/worksheets/sheet1.xml": nested(`<worksheet><sheetData><row><c t="s"><v>0</v></c></row><row><c><v>1</v></c>`, `</row></sheetData></worksheet>`, deep)}),
		"deep workbook":        hostileBook(t, map[string]string{"xl/workbook.xml": nested(`<workbook><sheets><sheet name="s" r:id="r1" xmlns:r="urn:r"/></sheets>`, `</workbook>`, deep)}),
		"empty rows":           hostileBook(t, map[string]string{"xl/worksheets/sheet1.xml": `<worksheet><sheetData>` + strings.Repeat(`<row/>`, rows) + `</sheetData></worksheet>`}),
		"one long text":        hostileBook(t, map[string]string{"xl/sharedStrings.xml": `<sst><si><t>` + strings.Repeat("x", long) + `</t></si></sst>`}),
		// Not refused: the most shared-string text the reader keeps.
		"most strings kept": hostileBook(t, map[string]string{"xl/sharedStrings.xml": `<sst><si><t>name</t></si>` +
			strings.Repeat(`<si><t>`+strings.Repeat("0123456789abcdef", 260)+`</t></si>`, n/4096) + `</sst>`}),
	}
}

// peakRSS runs f and returns how far the process's resident memory rose
// above what it was before (Linux: VmHWM after clear_refs), in bytes.
func peakRSS(tb testing.TB, f func()) uint64 {
	tb.Helper()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Skipf("no peak RSS here: %v", err)
	}
	base := procStatus(tb, "VmRSS:")
	f()
	return max(procStatus(tb, "VmHWM:"), base) - base
}

func procStatus(tb testing.TB, field string) uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip(err)
	}
	for line := range bytes.Lines(raw) {
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkHostileXLSX reports, for each hostile workbook, the peak rise in
// resident memory and the heap allocated while parseXLSX reads it.
func BenchmarkHostileXLSX(b *testing.B) {
	for name, book := range hostileBooks(b, true) {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			var peak uint64
			var err error
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				peak = max(peak, peakRSS(b, func() { _, err = parseXLSX(book, "", 100) }))
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), "alloc-MiB/op")
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(len(book))/1024, "file-KiB")
			b.Logf("%s: %v", name, errText(err))
		})
	}
}

func errText(err error) string {
	if err == nil {
		return "read"
	}
	return fmt.Sprintf("%.120s", err.Error())
}

// allocated returns the bytes f allocates: an upper bound of how far it
// raises the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The hostile workbooks of the issue are read, or refused as UNSUPPORTED
// naming the bound, at a bounded cost. Before the reader's bounds, each
// took 190–690 MiB of memory (peak RSS) and 2–17 s of CPU.
func TestHostileXLSXIsBounded(t *testing.T) {
	books := hostileBooks(t, false)
	tests := []struct {
		name  string
		err   string // "" when the workbook is read
		alloc uint64 // the most the read may allocate
	}{
		{"empty shared strings", "", 64 << 20},
		{"deep shared string", "nested more than 64 deep", 1 << 20},
		{"deep sheet", "nested more than 64 deep", 1 << 20},
		{"deep workbook", "nested more than 64 deep", 1 << 20},
		{"one long text", "a text or tag longer than 1 MiB", 8 << 20},
		// "empty rows" is refused at xlsxMaxTokens: TestXLSXTokenBound.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tab xlsxTable
			var err error
			alloc := allocated(func() { tab, err = parseXLSX(books[tt.name], "", 100) })
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.err == "" && (len(tab.columns) != 1 || tab.columns[0].Name != "name" || len(tab.rows) != 1):
				t.Errorf("columns %v, rows %v", tab.columns, tab.rows)
			case tt.err != "":
				te, ok := err.(*tool.Error)
				if !ok || te.Code != tool.CodeUnsupported || !strings.Contains(te.Message, tt.err) {
					t.Fatalf("err = %v, want UNSUPPORTED saying %q", err, tt.err)
				}
			}
			if alloc > tt.alloc {
				t.Errorf("allocated %d MiB, want at most %d", alloc>>20, tt.alloc>>20)
			}
		})
	}
}

// A table with more shared strings than the reader keeps is read as far as
// its bound: cells naming the strings kept show them, a cell naming one
// beyond fails saying so.
func TestSharedStringsBeyondTheBound(t *testing.T) {
	var sst strings.Builder
	sst.WriteString(`<sst><si><t>name</t></si>`)
	for i := range xlsxMaxSharedStrings + 10 {
		fmt.Fprintf(&sst, `<si><t>s%d</t></si>`, i+1)
	}
	sst.WriteString(`</sst>`)
	sheet := func(i int) string {
		return fmt.Sprintf(`<worksheet><sheetData><row><c t="s"><v>0</v></c></row><row><c t="s"><v>%d</v></c></row></sheetData></worksheet>`, i)
	}
	last := xlsxMaxSharedStrings - 1
	wb, err := openTestBook(hostileBook(t, map[string]string{
		"xl/workbook.xml":            `<workbook><sheets><sheet name="s" r:id="r1" xmlns:r="urn:r"/><sheet name="t" r:id="r2" xmlns:r="urn:r"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="r1" Target="worksheets/sheet1.xml"/><Relationship Id="r2" Target="worksheets/sheet2.xml"/></Relationships>`,
		"xl/sharedStrings.xml":       sst.String(),
		"xl/worksheets/sheet1.xml":   sheet(last),
		"xl/worksheets/sheet2.xml":   sheet(last + 1),
	}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = wb.rows(0, 5, func(cells []string, _, _ bool) bool { got = append(got, cells...); return true })
	if err != nil || fmt.Sprint(got) != fmt.Sprintf("[name s%d]", last) {
		t.Fatalf("the last string kept: err %v, cells %q", err, got)
	}
	err = wb.rows(1, 5, func([]string, bool, bool) bool { return true })
	if te, ok := xlsxError(err).(*tool.Error); !ok || te.Code != tool.CodeUnsupported ||
		!strings.Contains(te.Message, fmt.Sprintf("names shared string %d; a preview reads the first %d", last+1, last+1)) {
		t.Fatalf("beyond the bound: err = %v", err)
	}
}

// A workbook is read up to xlsxMaxTokens tokens in all its parts: a sheet
// of millions of empty rows (each a token or two, and as blank as no row)
// is refused there rather than read for seconds. The reader starts this
// test near the bound; BenchmarkHostileXLSX/empty_rows reads the whole way.
func TestXLSXTokenBound(t *testing.T) {
	book := hostileBook(t, map[string]string{"xl/worksheets/sheet1.xml": `<worksheet><sheetData>` + strings.Repeat(`<row/>`, 1000) + `</sheetData></worksheet>`})
	wb, err := openTestBook(book)
	if err != nil {
		t.Fatal(err)
	}
	start := wb.tokens
	if err := wb.rows(0, 10, func([]string, bool, bool) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if read := wb.tokens - start; read < 2000 || read > 2010 {
		t.Fatalf("%d tokens counted for 1000 empty rows", read)
	}
	wb.tokens = xlsxMaxTokens - 1500
	err = wb.rows(0, 10, func([]string, bool, bool) bool { return true })
	if te, ok := xlsxError(err).(*tool.Error); !ok || te.Code != tool.CodeUnsupported || !strings.Contains(te.Message, "more than 2097152 tokens") {
		t.Fatalf("err = %v", err)
	}
}

// The most a workbook makes the reader hold: shared strings up to the
// bound on their text (8 MiB, in strings a little longer than a cell shows),
// in a larger table (12 MiB). The read allocates little more than what it
// keeps (the text and its index), which, with the file, is the memory
// SECURITY.md states.
func TestXLSXReaderMemoryBound(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 260) // 4,160 bytes, kept 4,104
	sst := `<sst><si><t>name</t></si>` + strings.Repeat(`<si><t>`+long+`</t></si>`, (12<<20)/len(long)) + `</sst>`
	book := hostileBook(t, map[string]string{"xl/sharedStrings.xml": sst})
	var tab xlsxTable
	var err error
	alloc := allocated(func() { tab, err = parseXLSX(book, "", 5) })
	if err != nil || len(tab.rows) != 1 {
		t.Fatalf("err %v, rows %v", err, tab.rows)
	}
	t.Logf("a workbook of %d KiB: %d MiB allocated", len(book)>>10, alloc>>20)
	if alloc > xlsxSharedTextBytes*3/2 {
		t.Errorf("reading a workbook of %d KiB allocated %d MiB", len(book)>>10, alloc>>20)
	}
	wb, err := openTestBook(book)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, s := range wb.strings {
		kept += len(s.text)
	}
	if !wb.stringsCut || kept > xlsxSharedTextBytes+xlsxStringBytes || kept < xlsxSharedTextBytes {
		t.Errorf("kept %d strings, %d bytes; cut %v", len(wb.strings), kept, wb.stringsCut)
	}
}

// FuzzXLSXParts fuzzes the reader with the XML of a workbook's shared
// strings and sheet (the bytes FuzzParseXLSX rarely reaches, behind a ZIP
// archive): any parts give a table within the preview's bounds, or an
// UNSUPPORTED or PARSE_ERROR tool error, never a panic. Seeds: cells that
// name one long string, rich and inline text, deep nesting.
func FuzzXLSXParts(f *testing.F) {
	row := func(cells string, n int) string { return "<row>" + strings.Repeat(cells, n) + "</row>" }
	sheet := func(rows string) string { return "<worksheet><sheetData>" + rows + "</sheetData></worksheet>" }
	f.Add(`<sst><si><t>name</t></si><si><t>`+strings.Repeat("ABCD", 3000)+`</t></si></sst>`,
		sheet(row(`<c t="s"><v>0</v></c>`, 3)+strings.Repeat(row(`<c t="s"><v>1</v></c>`, 40), 10)), 5)
	f.Add(`<sst><si><r><t>a</t></r><r><t xml:space="preserve"> b</t></r><rPh><t>x</t></rPh></si>`+strings.Repeat(`<si/>`, 100)+`</sst>`,
		sheet(row(`<c t="s"><v>0</v></c><c t="inlineStr"><is><t>`+strings.Repeat("ש", 3000)+`</t></is></c>`, 1)+row(`<c t="s"><v>50</v></c><c><v>1.5</v></c>`, 2)), 3)
	f.Add(`<sst><si>`+strings.Repeat("<a>", 100)+strings.Repeat("</a>", 100)+`</si></sst>`, sheet(row(`<c t="s"><v>0</v></c>`, 1)), 1)
	f.Add(`<sst><si><t>h</t></si></sst>`, sheet(row(`<c t="s"><v>0</v></c>`, 1)+row(`<c t="b"><v>1</v></c><c t="e"><v>#N/A</v></c><c r="XFD1"><v>2</v></c>`, 1)), 2)
	f.Add(`<sst><si><t>   </t></si><si><t>h</t></si></sst>`, sheet(strings.Repeat(row(`<c t="s"><v>0</v></c>`, 5), 50)+row(`<c t="s"><v>1</v></c>`, 1)), 2)
	f.Fuzz(func(t *testing.T, sst, sheetXML string, n int) {
		n = 1 + abs(n)%100
		// Stored, not compressed: the fuzzer's time goes to the reader.
		book := minimalBook(t, map[string]string{"xl/sharedStrings.xml": sst, "xl/worksheets/sheet1.xml": sheetXML}, zip.Store)
		tab, err := parseXLSX(book, "", n)
		if err != nil {
			te, ok := err.(*tool.Error)
			if !ok || (te.Code != tool.CodeParse && te.Code != tool.CodeUnsupported) || te.Message == "" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if len(tab.rows) > n {
			t.Fatalf("%d rows, asked for %d", len(tab.rows), n)
		}
		checkClipped(t, tab.table)
		wb, err := openTestBook(book)
		if err != nil {
			t.Fatalf("parseXLSX read what openWorkbook refuses: %v", err)
		}
		if len(wb.strings) > xlsxMaxSharedStrings || wb.tokens > xlsxMaxTokens {
			t.Fatalf("%d shared strings, %d tokens", len(wb.strings), wb.tokens)
		}
		for _, s := range wb.strings {
			if len(s.text) > xlsxStringBytes || s.blank != (strings.TrimSpace(s.text) == "") && len(s.text) < xlsxStringBytes {
				t.Fatalf("shared string of %d bytes, blank %v: %.40q", len(s.text), s.blank, s.text)
			}
		}
	})
}
