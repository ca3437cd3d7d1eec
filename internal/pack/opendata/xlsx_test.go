package opendata

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// workbook builds a real XLSX file with excelize, the way a ministry's
// export looks: a title row left blank, a Hebrew header, numbers, dates,
// and a second sheet.
func workbook(t testing.TB, rows int) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	const first = "ערים"
	if err := f.SetSheetName("Sheet1", first); err != nil {
		t.Fatal(err)
	}
	set := func(sheet, cell string, v any) {
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			t.Fatal(err)
		}
	}
	// Row 1 blank; header on row 2.
	for i, h := range []string{"שם ישוב", "סמל ישוב", "אוכלוסייה", "תאריך עדכון"} {
		set(first, fmt.Sprintf("%c2", 'A'+i), h)
	}
	cities := []string{"ירושלים", "תל אביב-יפו", "חיפה", "באר שבע"}
	for r := range rows {
		row := r + 3
		set(first, fmt.Sprintf("A%d", row), cities[r%len(cities)])
		set(first, fmt.Sprintf("B%d", row), 3000+r)
		set(first, fmt.Sprintf("C%d", row), 100000+r*17)
		set(first, fmt.Sprintf("D%d", row), "2025-01-31")
	}
	if _, err := f.NewSheet("מקרא"); err != nil {
		t.Fatal(err)
	}
	set("מקרא", "A1", "שדה")
	set("מקרא", "B1", "הסבר")
	set("מקרא", "A2", "סמל ישוב")
	set("מקרא", "B2", "קוד הלמ\"ס")
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

func TestPreviewResourceXLSX(t *testing.T) {
	book := workbook(t, 30)
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"cities.xlsx": tooltest.Respond(200, xlsxType, book),
		// No extension and a generic type: the bytes say XLSX.
		"download": tooltest.Respond(200, "application/octet-stream", book),
	}, map[string]map[string]any{
		// Portals label XLSX files "XLS"; the bytes decide.
		"r-cities": {"id": "r-cities", "url": "{srv}/files/download", "format": "XLS"},
	})
	for _, args := range []string{
		`{"url":"` + fp.srv.URL + `/files/cities.xlsx","rows":5}`,
		`{"resourceId":"r-cities","rows":5}`,
	} {
		res, env := call(t, fp.reg, "previewResource", args)
		var out PreviewResourceOutput
		mustOK(t, res, &out)
		if out.Format != "xlsx" || out.Sheet != "ערים" || strings.Join(out.Sheets, ",") != "ערים,מקרא" ||
			len(out.Rows) != 5 || !out.HasMoreRows || out.Truncated || out.BytesRead != len(book) {
			t.Errorf("%s: format %s sheet %q sheets %q, %d rows, more %v, truncated %v, %d bytes", args,
				out.Format, out.Sheet, out.Sheets, len(out.Rows), out.HasMoreRows, out.Truncated, out.BytesRead)
		}
		want := "[{שם ישוב string} {סמל ישוב integer} {אוכלוסייה integer} {תאריך עדכון date}]"
		if got := fmt.Sprint(out.Columns); got != want {
			t.Errorf("columns %s, want %s", got, want)
		}
		if r := out.Rows[2]; r["שם ישוב"] != "חיפה" || r["סמל ישוב"] != "3002" || r["אוכלוסייה"] != "100034" {
			t.Errorf("third row = %v", r)
		}
		if !strings.Contains(out.Note, `the workbook has 2 sheets, this is "ערים"`) {
			t.Errorf("note = %q", out.Note)
		}
		if s, _ := env["summary"].(string); !strings.HasPrefix(s, `5 rows × 4 columns (xlsx, utf-8): "שם ישוב string"`) {
			t.Errorf("summary = %q", s)
		}
	}

	res, _ := call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/cities.xlsx","sheet":"מקרא"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if out.Sheet != "מקרא" || len(out.Rows) != 1 || out.Rows[0]["הסבר"] != `קוד הלמ"ס` || out.HasMoreRows {
		t.Errorf("second sheet: %+v", out)
	}
	res, _ = call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/cities.xlsx","sheet":"אין"}`)
	if e := mustFail(t, res, tool.CodeValidation); e.Message != `sheet: the workbook has no sheet "אין"; it has ערים, מקרא` {
		t.Errorf("message = %q", e.Message)
	}
}

// A workbook first seen as text (no extension, no type) is read again,
// whole, once its bytes show it is XLSX; one larger than the bound is
// refused without being parsed.
func TestPreviewResourceXLSXSize(t *testing.T) {
	book := workbook(t, 400)
	fp := newFilePortal(t, map[string]http.HandlerFunc{"blob": tooltest.Respond(200, "", book)}, nil)
	allow := safehttp.NewClient(safehttp.Options{Policy: safehttp.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}).HTTPClient()
	u := `{"url":"` + fp.srv.URL + `/files/blob","rows":3}`

	reg := newRegistry(t, Config{BaseURL: fp.srv.URL, HTTPClient: fp.srv.Client(), PortalHTTPClient: allow, PreviewMaxBytes: 1024})
	res, _ := call(t, reg, "previewResource", u)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if out.Format != "xlsx" || len(out.Rows) != 3 || out.BytesRead != len(book) {
		t.Errorf("format %s, %d rows, %d of %d bytes", out.Format, len(out.Rows), out.BytesRead, len(book))
	}

	reg = newRegistry(t, Config{BaseURL: fp.srv.URL, HTTPClient: fp.srv.Client(), PortalHTTPClient: allow,
		PreviewMaxBytes: 1024, PreviewXLSXMaxBytes: len(book) - 1})
	res, _ = call(t, reg, "previewResource", u)
	if e := mustFail(t, res, tool.CodeUnsupported); !strings.HasPrefix(e.Message, "the XLSX file is larger than") {
		t.Errorf("message = %q", e.Message)
	}
}

// zipOf writes a ZIP archive of raw entries; sizes and CRCs are the
// caller's, so that an entry can lie about how much it inflates to.
func zipOf(t testing.TB, entries ...*zip.FileHeader) func(data ...[]byte) []byte {
	return func(data ...[]byte) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i, h := range entries {
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data[i])
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
}

// deflate compresses n zero bytes.
func deflate(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "z", Method: zip.Deflate})
	w.Write(make([]byte, n))
	zw.Close()
	r, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.File[0].OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.ReadFrom(raw)
	return out.Bytes()
}

// Zip bombs: small files that inflate far beyond their size are refused
// before or while inflating, within the bound, never by running out of
// memory.
func TestParseXLSXBombs(t *testing.T) {
	const big = 80 << 20 // more than xlsxUnzipBytes
	zeros := deflate(t, big)
	if len(zeros) > 200<<10 {
		t.Fatalf("the bomb is %d bytes; deflate should shrink zeros ~1000:1", len(zeros))
	}
	crc := crc32.ChecksumIEEE(make([]byte, big))
	honest := zipOf(t, &zip.FileHeader{Name: "xl/worksheets/sheet1.xml", Method: zip.Deflate,
		CompressedSize64: uint64(len(zeros)), UncompressedSize64: big, CRC32: crc})(zeros)
	// The header claims 100 bytes; the data inflates to 80 MiB.
	lying := zipOf(t, &zip.FileHeader{Name: "xl/worksheets/sheet1.xml", Method: zip.Deflate,
		CompressedSize64: uint64(len(zeros)), UncompressedSize64: 100, CRC32: crc})(zeros)
	var many []*zip.FileHeader
	var empties [][]byte
	for i := range xlsxMaxParts + 1 {
		many = append(many, &zip.FileHeader{Name: fmt.Sprintf("p%d", i), Method: zip.Store})
		empties = append(empties, nil)
	}
	manyParts := zipOf(t, many...)(empties...)

	tests := []struct {
		name    string
		body    []byte
		code    tool.Code
		message string
	}{
		{"declared too large", honest, tool.CodeUnsupported, "xlsx: the workbook decompresses to more than 64 MiB"},
		{"lying header", lying, tool.CodeParse, "xlsx: the workbook cannot be read"},
		{"too many parts", manyParts, tool.CodeParse, "xlsx: the archive has 10001 parts"},
		{"not a zip", []byte("שם,סמל\nחיפה,4000\n"), tool.CodeParse, "xlsx: the file is not a ZIP archive"},
		{"a zip but no workbook", zipOf(t, &zip.FileHeader{Name: "a.txt", Method: zip.Store})([]byte("x")), tool.CodeParse, "xlsx: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseXLSX(tt.body, "", 10)
			te, ok := err.(*tool.Error)
			if !ok || te.Code != tt.code || !strings.HasPrefix(te.Message, tt.message) {
				t.Errorf("err = %v, want %s %q", err, tt.code, tt.message)
			}
		})
	}
}

// FuzzParseXLSX: any bytes give a table or a PARSE_ERROR/UNSUPPORTED/
// VALIDATION tool error, never a panic, and never more rows than asked.
func FuzzParseXLSX(f *testing.F) {
	f.Add(workbook(f, 3), "", 2)
	f.Add(workbook(f, 1), "מקרא", 5)
	f.Add([]byte("PK\x03\x04"), "", 1)
	f.Add([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, "", 1)
	// Cells naming one long shared string, and nesting (FuzzXLSXParts
	// fuzzes such parts as XML).
	f.Add(sharedStringBook(f, strings.Repeat("AB", 3000), 4, 30), "", 3)
	f.Add(hostileBook(f, map[string]string{"xl/sharedStrings.xml": nested(`<sst><si>`, `</si></sst>`, 70)}), "", 2)
	f.Add(hostileBook(f, map[string]string{"xl/worksheets/sheet1.xml": nested(`<worksheet><sheetData><row><c t="s"><v>0</v></c></row>`, `</sheetData></worksheet>`, 30)}), "s", 2)
	f.Fuzz(func(t *testing.T, body []byte, sheet string, n int) {
		n = 1 + abs(n)%100
		tab, err := parseXLSX(body, sheet, n)
		if err != nil {
			te, ok := err.(*tool.Error)
			if !ok || (te.Code != tool.CodeParse && te.Code != tool.CodeUnsupported && te.Code != tool.CodeValidation) || te.Message == "" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if len(tab.rows) > n {
			t.Fatalf("%d rows, asked for %d", len(tab.rows), n)
		}
		checkClipped(t, tab.table)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Workbooks are read a bounded number at a time; a preview that waits too
// long for its turn fails with a retryable RATE_LIMIT.
func TestPreviewXLSXConcurrencyBound(t *testing.T) {
	book := workbook(t, 3)
	p := &pack{xlsxSlots: make(chan struct{}, 1), xlsxWait: 20 * time.Millisecond, xlsxBytes: DefaultPreviewXLSXBytes}
	in := PreviewResourceInput{Rows: 2}

	p.xlsxSlots <- struct{}{} // another workbook is being read
	_, err := p.previewXLSX(context.Background(), PreviewResourceOutput{}, book, false, p.xlsxBytes, in)
	if te, ok := err.(*tool.Error); !ok || te.Code != tool.CodeRateLimit || !te.Retryable {
		t.Fatalf("err = %v, want a retryable RATE_LIMIT", err)
	}
	<-p.xlsxSlots

	out, err := p.previewXLSX(context.Background(), PreviewResourceOutput{}, book, false, p.xlsxBytes, in)
	if err != nil || len(out.Rows) != 2 || len(p.xlsxSlots) != 0 {
		t.Fatalf("free slot: err %v, %d rows, %d slots held after", err, len(out.Rows), len(p.xlsxSlots))
	}
}
