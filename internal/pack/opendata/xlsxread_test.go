package opendata

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// The reader shows what excelize (the library it replaced, kept in the
// tests as the reference) shows for text, integers, decimals, booleans and
// inline and rich text, and ISO 8601 for dates and times.
func TestXLSXReaderAgreesWithExcelize(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	const sh = "Sheet1"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	values := []any{"שם", "tab\there", 42, -7, 3.25, 1e-7, 123456789012, true, false, "", "  spaced  ", "line\nbreak", "&<>\"'"}
	for i, v := range values {
		must(f.SetCellValue(sh, cellName(t, i+1, 2), v))
	}
	must(f.SetCellRichText(sh, "A3", []excelize.RichTextRun{{Text: "bold "}, {Text: "and plain"}}))
	must(f.SetCellValue(sh, "C3", "after a gap"))
	day := time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC)
	must(f.SetCellValue(sh, "A4", day))
	must(f.SetCellValue(sh, "B4", time.Date(2024, 2, 29, 13, 45, 30, 0, time.UTC)))
	pct, err := f.NewStyle(&excelize.Style{NumFmt: 9})
	must(err)
	must(f.SetCellValue(sh, "C4", 0.125))
	must(f.SetCellStyle(sh, "C4", "C4", pct))
	custom := "dd/mm/yyyy"
	dmy, err := f.NewStyle(&excelize.Style{CustomNumFmt: &custom})
	must(err)
	must(f.SetCellValue(sh, "D4", 45688))
	must(f.SetCellStyle(sh, "D4", "D4", dmy))
	var buf bytes.Buffer
	must(f.Write(&buf))

	want, err := f.GetRows(sh, excelize.Options{RawCellValue: true})
	must(err)
	want = want[1:] // excelize lists the absent row 1 as empty; the reader, the rows there are
	// Booleans show as Excel shows them, not as stored (1 and 0).
	want[0][7], want[0][8] = "TRUE", "FALSE"
	wb, err := openTestBook(buf.Bytes())
	must(err)
	var got [][]string
	must(wb.rows(0, 100, func(cells []string, _, _ bool) bool { got = append(got, cells); return true }))
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("rows: got %d, excelize %d", len(got), len(want))
	}
	// Rows 2–3: the same text as excelize's stored values.
	for r := 0; r < 2; r++ {
		w := trimTrailingBlank(want[r])
		g := trimTrailingBlank(got[r])
		if fmt.Sprintf("%q", g) != fmt.Sprintf("%q", w) {
			t.Errorf("row %d:\n got %q\nwant %q", r+2, g, w)
		}
	}
	if w := []string{"2025-01-31", "2024-02-29 13:45:30", "12.5%", "2025-01-31"}; fmt.Sprint(got[2]) != fmt.Sprint(w) {
		t.Errorf("dates and percentages = %q, want %q", got[2], w)
	}
}

// openTestBook opens a workbook as parseXLSX does.
func openTestBook(body []byte) (*xlsxBook, error) {
	zr, err := checkXLSXArchive(body)
	if err != nil {
		return nil, err
	}
	return openWorkbook(zr)
}

func cellName(t *testing.T, col, row int) string {
	t.Helper()
	n, err := excelize.CoordinatesToCellName(col, row)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func trimTrailingBlank(cells []string) []string {
	for len(cells) > 0 && cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

func TestNumberFormatKinds(t *testing.T) {
	tests := []struct {
		code string
		want numberKind
	}{
		{"General", numberPlain},
		{"0.00", numberPlain},
		{"#,##0", numberPlain},
		{"0.0%", numberPercent},
		{"dd/mm/yyyy", numberDate},
		{"[$-409]mmmm d, yyyy;@", numberDate},
		{"yyyy-mm-dd hh:mm", numberDateTime},
		{"h:mm:ss AM/PM", numberTime},
		{"[h]:mm", numberTime},
		{"mm:ss", numberTime},
		{`"day" 0`, numberPlain},
		{`0\d`, numberPlain},
		{"[Red]0.00;[Blue]-0.00", numberPlain},
		{`0.00 "%"`, numberPlain},
		{"0;dd/mm", numberPlain},
	}
	for _, tt := range tests {
		if got := formatKind(tt.code); got != tt.want {
			t.Errorf("formatKind(%q) = %d, want %d", tt.code, got, tt.want)
		}
	}
}

func TestSerialDates(t *testing.T) {
	tests := []struct {
		serial   float64
		date1904 bool
		want     string
	}{
		{1, false, "1900-01-01 00:00:00"},
		{59, false, "1900-02-28 00:00:00"},
		{61, false, "1900-03-01 00:00:00"},
		{45688, false, "2025-01-31 00:00:00"},
		{45688.75, false, "2025-01-31 18:00:00"},
		{0, true, "1904-01-01 00:00:00"},
		{44226, true, "2025-01-31 00:00:00"},
	}
	for _, tt := range tests {
		got, ok := serialTime(tt.serial, tt.date1904)
		if !ok || got.Format("2006-01-02 15:04:05") != tt.want {
			t.Errorf("serialTime(%v, %v) = %v, %v; want %s", tt.serial, tt.date1904, got, ok, tt.want)
		}
	}
	for _, bad := range []float64{-1, 3e6} {
		if _, ok := serialTime(bad, false); ok {
			t.Errorf("serialTime(%v) accepted", bad)
		}
	}
}

// Hand-written parts, as other producers than Excel write them: no shared
// strings, inline strings, cells without references, a relationship with an
// absolute target, the active tab, the 1904 date system, phonetic guides.
func TestXLSXReaderOtherProducers(t *testing.T) {
	parts := map[string]string{
		"_rels/.rels": `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml": `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:rel="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
<workbookPr date1904="true"/><bookViews><workbookView activeTab="1"/></bookViews>
<sheets><sheet name="first" sheetId="1" rel:id="a"/><sheet name="second" sheetId="2" rel:id="b"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="a" Type="worksheet" Target="worksheets/one.xml"/><Relationship Id="b" Type="worksheet" Target="/xl/worksheets/two.xml"/></Relationships>`,
		"xl/styles.xml":         `<styleSheet><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>`,
		"xl/sharedStrings.xml":  `<sst><si><t>漢字</t><rPh sb="0" eb="2"><t>かんじ</t></rPh></si></sst>`,
		"xl/worksheets/one.xml": `<worksheet><sheetData><row><c><v>1</v></c></row></sheetData></worksheet>`,
		"xl/worksheets/two.xml": `<worksheet><sheetData>
<row r="1"><c t="inlineStr"><is><t>name</t></is></c><c t="s"><v>0</v></c><c r="D1" s="1"><v>0</v></c></row>
<row r="2"><c r="B2" t="b"><v>1</v></c><c r="C2" t="e"><v>#N/A</v></c><c t="str"><v>formula text</v></c></row>
</sheetData></worksheet>`,
	}
	wb, err := openTestBook(zipParts(t, parts))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(wb.sheetNames()) != "[first second]" || wb.active != 1 || !wb.date1904 {
		t.Fatalf("sheets %v, active %d, 1904 %v", wb.sheetNames(), wb.active, wb.date1904)
	}
	var got []string
	if err := wb.rows(1, 10, func(cells []string, _, _ bool) bool { got = append(got, fmt.Sprintf("%q", cells)); return true }); err != nil {
		t.Fatal(err)
	}
	want := []string{`["name" "漢字" "" "1904-01-01"]`, `["" "TRUE" "#N/A" "formula text"]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Hostile parts fail as errors: a shared string index out of range, a cell
// beyond the last column, malformed XML, a sheet the workbook names but
// does not hold.
func TestXLSXReaderRefusesBadParts(t *testing.T) {
	base := map[string]string{
		"xl/workbook.xml":            `<workbook><sheets><sheet name="s" r:id="r1" xmlns:r="urn:r"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="r1" Target="worksheets/sheet1.xml"/></Relationships>`,
	}
	tests := []struct {
		name, sheet, want string
	}{
		{"shared string out of range", `<worksheet><sheetData><row><c t="s"><v>7</v></c></row></sheetData></worksheet>`, "shared string"},
		{"beyond the last column", `<worksheet><sheetData><row><c r="ZZZZ1"><v>1</v></c></row></sheetData></worksheet>`, "beyond the last column"},
		{"malformed", `<worksheet><sheetData><row><c><v>1</c></row>`, "sheet"},
		{"missing sheet", "", "does not contain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := map[string]string{}
			for k, v := range base {
				parts[k] = v
			}
			if tt.sheet != "" {
				parts["xl/worksheets/sheet1.xml"] = tt.sheet
			}
			_, err := parseXLSX(zipParts(t, parts), "", 5)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func zipParts(t testing.TB, parts map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range parts {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkParseXLSX reads the first 100 rows of a 2,000-row workbook with
// the reader and, for comparison, with excelize as parseXLSX used it.
func BenchmarkParseXLSX(b *testing.B) {
	book := workbook(b, 2000)
	b.Run("reader", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseXLSX(book, "", 100); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("excelize", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f, err := excelize.OpenReader(bytes.NewReader(book), excelize.Options{UnzipSizeLimit: xlsxUnzipBytes, UnzipXMLSizeLimit: xlsxUnzipBytes})
			if err != nil {
				b.Fatal(err)
			}
			rows, err := f.Rows(f.GetSheetName(f.GetActiveSheetIndex()))
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < 102 && rows.Next(); n++ {
				if _, err := rows.Columns(); err != nil {
					b.Fatal(err)
				}
			}
			rows.Close()
			f.Close()
		}
	})
}
