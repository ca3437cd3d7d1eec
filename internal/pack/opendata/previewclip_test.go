package opendata

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/tooltest"
)

// sharedStringBook builds a workbook whose sheet has rows rows (the header
// included) of cols cells, every one naming shared string 0, s: a few
// kilobytes however large the preview it would make.
func sharedStringBook(t testing.TB, s string, rows, cols int) []byte {
	t.Helper()
	var sheet strings.Builder
	sheet.WriteString(`<worksheet><sheetData>`)
	for range rows {
		sheet.WriteString(`<row>`)
		for range cols {
			sheet.WriteString(`<c t="s"><v>0</v></c>`)
		}
		sheet.WriteString(`</row>`)
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	return zipParts(t, map[string]string{
		"xl/workbook.xml":            `<workbook><sheets><sheet name="s" r:id="r1" xmlns:r="urn:r"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="r1" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/sharedStrings.xml":       `<sst><si><t>` + s + `</t></si></sst>`,
		"xl/worksheets/sheet1.xml":   sheet.String(),
	})
}

// checkClipped checks a previewed table against the text bounds: every
// value and name within its bound and valid UTF-8, the rows' text within
// the budget (give or take the cell that spent it).
func checkClipped(t *testing.T, tab table) {
	t.Helper()
	total := 0
	for _, c := range tab.columns {
		if len(c.Name) > maxPreviewNameBytes+8 || !utf8.ValidString(c.Name) {
			t.Fatalf("column name of %d bytes (valid UTF-8: %v)", len(c.Name), utf8.ValidString(c.Name))
		}
	}
	for _, row := range tab.rows {
		for k, v := range row {
			s, _ := v.(string)
			if len(s) > maxPreviewCellBytes || !utf8.ValidString(s) {
				t.Fatalf("cell of %d bytes (valid UTF-8: %v)", len(s), utf8.ValidString(s))
			}
			total += len(k) + len(s)
		}
	}
	// The budget is spent cell by cell: past it, a row stops, so only the
	// last cell's column name can go beyond it.
	if total > maxPreviewTextBytes+maxPreviewNameBytes {
		t.Errorf("the rows hold %d bytes of text, over the %d bound", total, maxPreviewTextBytes)
	}
}

// Cells that all name one large shared string are cut, each marked, and
// the preview stops at the row whose text reaches the budget; the result
// says so. (It used to hold every cell whole: 64 MiB here.)
func TestPreviewXLSXSharedStringAmplification(t *testing.T) {
	big := strings.Repeat("אב", 32<<10) // 64 KiB
	tab, err := parseXLSX(sharedStringBook(t, big, 21, 50), "", 20)
	if err != nil {
		t.Fatal(err)
	}
	checkClipped(t, tab.table)
	if !tab.clipped || !strings.Contains(tab.clipNote, "were cut") || !strings.Contains(tab.clipNote, "reached the 1024 KiB") || !tab.more {
		t.Errorf("clipped %v, more %v, note %q", tab.clipped, tab.more, tab.clipNote)
	}
	if len(tab.rows) == 0 || len(tab.rows) >= 20 {
		t.Errorf("%d rows; the budget should stop it between 1 and 20", len(tab.rows))
	}
	v := tab.rows[0][tab.columns[0].Name].(string)
	if !strings.HasSuffix(v, clipMark) || !strings.HasPrefix(big, strings.TrimSuffix(v, clipMark)) {
		t.Errorf("cell %.40q… is not a marked prefix of the string", v)
	}
}

// The hostile workbook of the issue at full size: 101 rows × 500 cells of
// one 1 MiB shared string (50 GB of preview), through the tool, allocates
// a bounded amount and returns about the budget.
func TestPreviewXLSXSharedStringAmplificationFull(t *testing.T) {
	big := strings.Repeat("ABCDEFGH", 128<<10) // 1 MiB, upper case: lower-casing it would copy it
	book := sharedStringBook(t, big, 101, 500)
	if len(book) > 64<<10 {
		t.Fatalf("the workbook is %d bytes; it should be a few KB", len(book))
	}
	fp := newFilePortal(t, map[string]http.HandlerFunc{"bomb.xlsx": tooltest.Respond(200, xlsxType, book)}, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _ := call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/bomb.xlsx","rows":100}`)
	runtime.ReadMemStats(&after)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if !out.Clipped || !out.HasMoreRows || len(out.Rows) == 0 || !strings.Contains(out.Note, "were cut") {
		t.Errorf("clipped %v, more %v, %d rows, note %q", out.Clipped, out.HasMoreRows, len(out.Rows), out.Note)
	}
	if n := len(res.JSON); n > maxPreviewTextBytes*3/2 {
		t.Errorf("the result is %d bytes", n)
	}
	// The shared string, the result and its checks: a few MiB, not 50 GB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the preview allocated %d MiB", alloc>>20)
	}
}

// CSV and JSON cells are cut the same way, on character boundaries, and a
// nested JSON value too large for a cell becomes its cut JSON text.
func TestPreviewCellsAreClipped(t *testing.T) {
	long := strings.Repeat("ש", 5000) // 10,000 bytes
	csv := "name,text\nא," + long + "\n"
	tab, err := parseDelimited(csv, ',', 5)
	if err != nil {
		t.Fatal(err)
	}
	checkClipped(t, tab)
	if v := tab.rows[0]["text"].(string); len(v) != maxPreviewCellBytes-len(clipMark)+len(clipMark) && len(v) != maxPreviewCellBytes-1 ||
		!strings.HasSuffix(v, clipMark) || !tab.clipped || !strings.Contains(tab.clipNote, "1 cells or column names were cut") {
		t.Errorf("cell of %d bytes ending %q, clipped %v, note %q", len(v), v[max(len(v)-6, 0):], tab.clipped, tab.clipNote)
	}
	if tab.more || strings.Contains(tab.clipNote, "reached") {
		t.Errorf("one row: more %v, note %q", tab.more, tab.clipNote)
	}

	js := `[{"a":"` + long + `","n":{"deep":["` + long + `"]},"small":{"x":1},"` + strings.Repeat("k", 300) + `":1}]`
	tab, err = parseJSONTable(js, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	checkClipped(t, tab)
	row := tab.rows[0]
	if n, ok := row["n"].(string); !ok || !strings.HasPrefix(n, `{"deep":["שש`) || !strings.HasSuffix(n, clipMark) {
		t.Errorf("nested value = %.40v", row["n"])
	}
	if _, ok := row["small"].(map[string]any); !ok {
		t.Errorf("a small nested value stays a value: %v", row["small"])
	}
	if got := fmt.Sprint(tab.columns); !strings.Contains(got, "{small json}") || !strings.Contains(got, "{n string}") ||
		!strings.Contains(got, strings.Repeat("k", 200)) || strings.Contains(got, strings.Repeat("k", 300)) {
		t.Errorf("columns %.300s", got)
	}
}

// A CSV file within the download bound but over the text budget is shown
// up to the row that reaches it.
func TestPreviewDelimitedTextBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,c,d,e\n")
	cell := strings.Repeat("x", 4000)
	for range 100 {
		b.WriteString(strings.Repeat(cell+",", 4) + cell + "\n") // 20 KB a row, 2 MB in all
	}
	tab, err := parseDelimited(b.String(), ',', 100)
	if err != nil {
		t.Fatal(err)
	}
	checkClipped(t, tab)
	if len(tab.rows) < 40 || len(tab.rows) > 60 || !tab.more || !tab.clipped || !strings.Contains(tab.clipNote, fmt.Sprintf("only %d rows are shown", len(tab.rows))) {
		t.Errorf("%d rows, more %v, clipped %v, note %q", len(tab.rows), tab.more, tab.clipped, tab.clipNote)
	}
}

// A row that spends the budget stops there: the cells after it would add
// only their column names, which with 500 long names overran the bound by
// 67 KB (FuzzXLSXParts found it through a workbook; every format shares it).
func TestPreviewBudgetStopsMidRow(t *testing.T) {
	var b strings.Builder
	for i := range maxPreviewColumns {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%03d%s", i, strings.Repeat("n", maxPreviewNameBytes-3))
	}
	b.WriteByte('\n')
	cells := make([]string, maxPreviewColumns)
	for i := range cells {
		cells[i] = strings.Repeat("v", maxPreviewCellBytes)
	}
	b.WriteString(strings.Join(cells, ",") + "\n") // 2.1 MB of text in one row
	b.WriteString(strings.Join(cells, ",") + "\n")
	tab, err := parseDelimited(b.String(), ',', 10)
	if err != nil {
		t.Fatal(err)
	}
	checkClipped(t, tab)
	if len(tab.rows) != 1 || !tab.more || !tab.clipped {
		t.Errorf("%d rows, more %v, clipped %v", len(tab.rows), tab.more, tab.clipped)
	}
}

// Guessing a column's type reads each sample only as far as it needs: long
// values are not copied (lower-cased, or kept in a parser's error).
func TestGuessTypeDoesNotCopyLongValues(t *testing.T) {
	samples := make([]any, 100)
	for i := range samples {
		samples[i] = strings.Repeat("NOT A DATE ", 400) // 4.4 KB
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	typ := guessType(samples)
	runtime.ReadMemStats(&after)
	if typ != "string" {
		t.Errorf("type %s", typ)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<10 {
		t.Errorf("guessType allocated %d KiB for %d samples", alloc>>10, len(samples))
	}
}
