package opendata

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// A reader of the parts of an XLSX workbook (ECMA-376 SpreadsheetML) that a
// preview needs: the sheet list, the active sheet, shared strings, the
// number formats that make a number a date or a percentage, and the first
// rows of one sheet, read as a stream. It replaced excelize, whose package
// init alone cost every `toolport` start 1.3 MB and ~3 ms (a third of all
// package init, and a garbage collection at start-up; see BENCHMARKS.md).
// Formulas, styles beyond number formats, merged cells and charts are not
// read: a preview shows the stored values.

// errXLSX is wrapped by every error of the reader; xlsxError words them.
var errXLSX = errors.New("xlsx")

// boundError is a workbook beyond the reader's bounds: UNSUPPORTED rather
// than damaged. what says which bound.
type boundError struct{ what string }

func (e *boundError) Error() string { return "xlsx: too large to preview: " + e.what }

func (e *boundError) Unwrap() error { return errXLSX }

func xlsxBound(format string, args ...any) error {
	return &boundError{what: fmt.Sprintf(format, args...)}
}

// maxSheetColumn is the widest column a worksheet may have (XFD).
const maxSheetColumn = 16384

// Bounds of the reader, beyond those of the archive (xlsx.go). encoding/xml
// keeps a stack entry per open element and a whole text run or tag in
// memory, and allocates per token: 35 KB of nested elements, or of empty
// shared strings, inflate to 64 MiB of XML that took 500 MiB and many seconds
// to read. What the reader keeps is bounded too: a preview shows at most
// maxPreviewCellBytes of a cell, and a sheet's first rows name the first
// shared strings (writers number them in order of first use).
const (
	// xlsxMaxDepth bounds the nesting of elements; SpreadsheetML nests about
	// ten deep.
	xlsxMaxDepth = 64
	// xlsxMaxTokens bounds the XML tokens read from all parts of a
	// workbook, and so the CPU time (about 0.2 µs and 100 bytes of garbage
	// a token): a workbook's styles, its shared strings up to their bound
	// and its first rows take far fewer.
	xlsxMaxTokens = 1 << 21
	// xlsxMaxTokenBytes bounds the bytes between two < or > of a part,
	// that is one text run or tag: the most encoding/xml holds at once. A
	// cell holds at most 32,767 characters.
	xlsxMaxTokenBytes = 1 << 20
	// xlsxMaxSharedStrings and xlsxSharedTextBytes bound the shared strings
	// kept: the table's first strings up to either bound, each cut to
	// xlsxStringBytes. A cell naming a string beyond them fails.
	xlsxMaxSharedStrings = 1 << 17
	xlsxSharedTextBytes  = 8 << 20
	// xlsxStringBytes is the text kept of a string or value: more than a
	// preview shows, so that the preview knows to cut it.
	xlsxStringBytes = maxPreviewCellBytes + 8
	// xlsxMaxSheets bounds the sheets and xlsxMaxRelationships the
	// relationships of a part that are kept; xlsxMaxFormats the cell styles
	// and custom number formats.
	xlsxMaxSheets        = 1024
	xlsxMaxRelationships = 4096
	xlsxMaxFormats       = 1 << 16
	xlsxMaxCustomFormats = 4096
	// xlsxMaxFormatCode is the longest number format code read (Excel's is
	// 255 characters).
	xlsxMaxFormatCode = 1 << 10
	// xlsxMaxPartName is the longest relationship target kept.
	xlsxMaxPartName = 1 << 10
)

// xlsxBook is a parsed XLSX archive, before any sheet is read.
type xlsxBook struct {
	parts    map[string]*zip.File
	sheets   []sheetRef
	active   int
	date1904 bool
	strings  []sharedString
	// stringsCut says the shared strings table goes on beyond those kept.
	stringsCut bool
	// formats maps a cell style index (the s attribute) to how its numbers
	// show.
	formats []numberKind
	// tokens counts the XML tokens read, against xlsxMaxTokens.
	tokens int
}

// sharedString is a shared string as kept: cut to xlsxStringBytes, and
// whether the whole string is blank (so that telling a blank row costs
// nothing per cell, however long the string).
type sharedString struct {
	text  string
	blank bool
}

type sheetRef struct{ name, part string }

// numberKind is how a cell's number is shown.
type numberKind uint8

const (
	numberPlain numberKind = iota
	numberDate
	numberDateTime
	numberTime
	numberPercent
)

// openWorkbook reads the workbook parts of an archive (see checkXLSXArchive
// for its bounds).
func openWorkbook(zr *zip.Reader) (*xlsxBook, error) {
	wb := &xlsxBook{parts: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		wb.parts[strings.TrimPrefix(f.Name, "/")] = f
	}
	if err := wb.readWorkbook(); err != nil {
		return nil, err
	}
	if err := wb.readSharedStrings(); err != nil {
		return nil, err
	}
	if err := wb.readStyles(); err != nil {
		return nil, err
	}
	return wb, nil
}

// xmlReader reads one part's tokens within the workbook's bounds.
type xmlReader struct {
	d     *xml.Decoder
	wb    *xlsxBook
	depth int
	buf   []byte // text being gathered, reused: a string is then copied once
}

func (wb *xlsxBook) xml(r io.Reader) *xmlReader {
	return &xmlReader{d: xml.NewDecoder(&markupReader{r: r}), wb: wb}
}

// token is the next token; it fails beyond xlsxMaxTokens or xlsxMaxDepth.
func (x *xmlReader) token() (xml.Token, error) {
	if x.wb.tokens >= xlsxMaxTokens {
		return nil, xlsxBound("the workbook's XML has more than %d tokens", xlsxMaxTokens)
	}
	x.wb.tokens++
	tok, err := x.d.Token()
	if err != nil {
		return nil, err
	}
	switch tok.(type) {
	case xml.StartElement:
		if x.depth++; x.depth > xlsxMaxDepth {
			return nil, xlsxBound("elements nested more than %d deep", xlsxMaxDepth)
		}
	case xml.EndElement:
		x.depth--
	}
	return tok, nil
}

// skip reads past the end of the element whose start was just read.
func (x *xmlReader) skip() error {
	for depth := 1; depth > 0; {
		tok, err := x.token()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// text reads the element whose start was just read to its end and returns
// its own character data, the first limit bytes of it.
func (x *xmlReader) text(limit int) (string, error) {
	b := x.buf[:0]
	for depth := 1; depth > 0; {
		tok, err := x.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 1 {
				b = append(b, t[:min(len(t), max(limit-len(b), 0))]...)
			}
		}
	}
	x.buf = b
	return string(b), nil
}

// markupReader fails a part with more than xlsxMaxTokenBytes between two
// markup delimiters (< or >): encoding/xml holds a whole text run or tag in
// a buffer that grows by doubling, so one 60 MiB text took 190 MiB.
type markupReader struct {
	r   io.Reader
	run int // bytes since the last < or >
}

func (m *markupReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	for b := p[:n]; ; {
		i := bytes.IndexAny(b, "<>")
		if i < 0 {
			m.run += len(b)
			break
		}
		if m.run += i; m.run > xlsxMaxTokenBytes {
			break
		}
		m.run, b = 0, b[i+1:]
	}
	if m.run > xlsxMaxTokenBytes {
		return 0, xlsxBound("a text or tag longer than %d MiB", xlsxMaxTokenBytes>>20)
	}
	return n, err
}

// open opens a part; a missing part is (nil, nil) for the caller to judge.
func (wb *xlsxBook) open(name string) (io.ReadCloser, error) {
	f := wb.parts[name]
	if f == nil {
		return nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errXLSX, name, err)
	}
	return rc, nil
}

// workbookPart finds the workbook part through the package relationships,
// falling back to its usual name.
func (wb *xlsxBook) workbookPart() (string, error) {
	rels, err := wb.relationships("_rels/.rels", "")
	if err != nil {
		return "", err
	}
	for _, r := range rels {
		if strings.HasSuffix(r.kind, "/officeDocument") {
			return r.target, nil
		}
	}
	return "xl/workbook.xml", nil
}

type relationship struct{ id, kind, target string }

// relationships reads a .rels part; targets are resolved against dir.
func (wb *xlsxBook) relationships(name, dir string) ([]relationship, error) {
	rc, err := wb.open(name)
	if rc == nil || err != nil {
		return nil, err
	}
	defer rc.Close()
	var out []relationship
	err = wb.each(rc, func(x *xmlReader, se xml.StartElement) error {
		if se.Name.Local != "Relationship" {
			return nil
		}
		if len(out) == xlsxMaxRelationships {
			return xlsxBound("more than %d relationships", xlsxMaxRelationships)
		}
		r := relationship{id: attr(se, "Id"), kind: attr(se, "Type"), target: attr(se, "Target")}
		if attr(se, "TargetMode") == "External" || r.target == "" || len(r.target) > xlsxMaxPartName {
			return nil
		}
		if strings.HasPrefix(r.target, "/") {
			r.target = strings.TrimPrefix(path.Clean(r.target), "/")
		} else {
			r.target = strings.TrimPrefix(path.Join("/", dir, r.target), "/")
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errXLSX, name, err)
	}
	return out, nil
}

func (wb *xlsxBook) readWorkbook() error {
	part, err := wb.workbookPart()
	if err != nil {
		return err
	}
	rc, err := wb.open(part)
	if err != nil {
		return err
	}
	if rc == nil {
		return fmt.Errorf("%w: the archive holds no workbook part (%s)", errXLSX, part)
	}
	defer rc.Close()
	dir := path.Dir(part)
	rels, err := wb.relationships(path.Join(dir, "_rels", path.Base(part)+".rels"), dir)
	if err != nil {
		return err
	}
	targets := make(map[string]string, len(rels))
	for _, r := range rels {
		targets[r.id] = r.target
	}
	err = wb.each(rc, func(x *xmlReader, se xml.StartElement) error {
		switch se.Name.Local {
		case "workbookPr":
			wb.date1904 = truthy(attr(se, "date1904"))
		case "workbookView":
			if n, err := strconv.Atoi(attr(se, "activeTab")); err == nil && n >= 0 {
				wb.active = n
			}
		case "sheet":
			if len(wb.sheets) == xlsxMaxSheets {
				return xlsxBound("more than %d sheets", xlsxMaxSheets)
			}
			id := ""
			for _, a := range se.Attr {
				// r:id, whatever prefix the relationships namespace has.
				if a.Name.Local == "id" && a.Name.Space != "" {
					id = a.Value
				}
			}
			// Names are shown and quoted: cut as column names are (Excel's
			// are at most 31 characters).
			name, _ := clipCell(attr(se, "name"), maxPreviewNameBytes)
			wb.sheets = append(wb.sheets, sheetRef{name: name, part: targets[id]})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errXLSX, part, err)
	}
	if wb.active >= len(wb.sheets) {
		wb.active = 0
	}
	return nil
}

func (wb *xlsxBook) readSharedStrings() error {
	rc, err := wb.open("xl/sharedStrings.xml")
	if rc == nil || err != nil {
		return err
	}
	defer rc.Close()
	kept := 0 // bytes of text
	err = wb.each(rc, func(x *xmlReader, se xml.StartElement) error {
		if se.Name.Local != "si" {
			return nil
		}
		if len(wb.strings) == xlsxMaxSharedStrings || kept >= xlsxSharedTextBytes {
			wb.stringsCut = true
			return errStop
		}
		s, blank, err := x.richText(xlsxStringBytes)
		wb.strings = append(wb.strings, sharedString{text: s, blank: blank})
		kept += len(s)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: shared strings: %w", errXLSX, err)
	}
	return nil
}

// richText reads the text of the <si> or <is> element whose start was just
// read: its <t> runs, without the phonetic guides (<rPh>) East Asian
// workbooks add; the first limit bytes of it, and whether all of it is
// blank.
func (x *xmlReader) richText(limit int) (_ string, blank bool, _ error) {
	b := x.buf[:0]
	blank = true
	depth, inT, skip := 1, false, 0
	for depth > 0 {
		tok, err := x.token()
		if err != nil {
			return "", false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case skip > 0:
				skip++
			case t.Name.Local == "rPh":
				skip = 1
			case t.Name.Local == "t":
				inT = true
			}
		case xml.EndElement:
			depth--
			switch {
			case skip > 0:
				skip--
			case t.Name.Local == "t":
				inT = false
			}
		case xml.CharData:
			if inT && skip == 0 {
				b = append(b, t[:min(len(t), max(limit-len(b), 0))]...)
				blank = blank && len(bytes.TrimSpace(t)) == 0
			}
		}
	}
	x.buf = b
	return string(b), blank, nil
}

// errStop ends wb.each early, without an error.
var errStop = errors.New("stop")

func (wb *xlsxBook) readStyles() error {
	rc, err := wb.open("xl/styles.xml")
	if rc == nil || err != nil {
		return err
	}
	defer rc.Close()
	custom := make(map[int]string)
	inXfs := false
	var xfs []int
	err = wb.eachEnd(rc, func(x *xmlReader, se xml.StartElement) error {
		switch se.Name.Local {
		case "numFmt":
			// Beyond the bounds, formats are plain numbers: no workbook
			// has that many.
			code := attr(se, "formatCode")
			if id, err := strconv.Atoi(attr(se, "numFmtId")); err == nil && len(custom) < xlsxMaxCustomFormats && len(code) <= xlsxMaxFormatCode {
				custom[id] = code
			}
		case "cellXfs":
			inXfs = true
		case "xf":
			if inXfs && len(xfs) < xlsxMaxFormats {
				id, _ := strconv.Atoi(attr(se, "numFmtId"))
				xfs = append(xfs, id)
			}
		}
		return nil
	}, func(ee xml.EndElement) {
		if ee.Name.Local == "cellXfs" {
			inXfs = false
		}
	})
	if err != nil {
		return fmt.Errorf("%w: styles: %w", errXLSX, err)
	}
	kinds := make(map[int]numberKind, len(custom)) // each code classified once
	for id, code := range custom {
		kinds[id] = formatKind(code)
	}
	wb.formats = make([]numberKind, len(xfs))
	for i, id := range xfs {
		kind, ok := kinds[id]
		if !ok {
			kind = builtinKind(id)
		}
		wb.formats[i] = kind
	}
	return nil
}

// builtinKind is the kind of a built-in number format (ECMA-376 Part 1,
// 18.8.30): 9–10 percentages, 14–17 and 27–36, 50–58 (East Asian) dates,
// 18–21 and 45–47 times, 22 a date and time.
func builtinKind(id int) numberKind {
	switch {
	case id == 9 || id == 10:
		return numberPercent
	case id >= 14 && id <= 17, id >= 27 && id <= 36, id >= 50 && id <= 58:
		return numberDate
	case id >= 18 && id <= 21, id >= 45 && id <= 47:
		return numberTime
	case id == 22:
		return numberDateTime
	}
	return numberPlain
}

// formatKind classifies a custom format code: date and time parts outside
// quoted text, escapes and [colour]/[$-locale] brackets make a date or a
// time; a % a percentage. Only the first section (positive numbers) counts.
func formatKind(code string) numberKind {
	var date, clock, percent bool
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case ';':
			i = len(code)
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				i = len(code)
			}
		case '\\', '_', '*':
			i++ // the next character is literal (or padding)
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				i = len(code)
				break
			}
			// [h], [mm], [ss]: elapsed time.
			if inner := strings.ToLower(code[i+1 : i+j]); inner != "" && strings.Trim(inner, "hms") == "" {
				clock = true
			}
			i += j
		case '%':
			percent = true
		case 'a', 'A':
			switch rest := code[i:]; {
			case len(rest) >= 5 && strings.EqualFold(rest[:5], "am/pm"):
				clock, i = true, i+4
			case len(rest) >= 3 && strings.EqualFold(rest[:3], "a/p"):
				clock, i = true, i+2
			}
		case 'y', 'Y', 'd', 'D':
			date = true
		case 'h', 'H', 's', 'S':
			clock = true
		case 'm', 'M':
			// Months, or minutes when next to hours or seconds.
			if minutes(code, i) {
				clock = true
			} else {
				date = true
			}
		}
	}
	switch {
	case date && clock:
		return numberDateTime
	case date:
		return numberDate
	case clock:
		return numberTime
	case percent:
		return numberPercent
	}
	return numberPlain
}

// minutes tells whether the m at code[i] means minutes: the date or time
// letter before it is an h, or the one after it an s (ECMA-376's rule).
func minutes(code string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch c := code[j] | 0x20; c {
		case 'h':
			return true
		case 'y', 'd', 's':
			j = -1
		}
	}
	for j := i + 1; j < len(code); j++ {
		switch c := code[j] | 0x20; c {
		case 's':
			return true
		case 'y', 'd', 'h':
			return false
		}
	}
	return false
}

// sheetNames lists the sheets in workbook order.
func (wb *xlsxBook) sheetNames() []string {
	names := make([]string, len(wb.sheets))
	for i, s := range wb.sheets {
		names[i] = s.name
	}
	return names
}

// rows reads sheet i's rows in order, each as its cells' shown text up to
// maxColumns columns (wide reports a cell beyond; blank that every cell is
// blank), and calls fn with each until fn returns false.
func (wb *xlsxBook) rows(i, maxColumns int, fn func(cells []string, blank, wide bool) bool) error {
	ref := wb.sheets[i]
	rc, err := wb.open(ref.part)
	if err != nil {
		return err
	}
	if rc == nil {
		return fmt.Errorf("%w: the workbook names a sheet it does not contain (%q)", errXLSX, ref.name)
	}
	defer rc.Close()
	x := wb.xml(rc)
	var cells []string
	wide, blank, inRow, stop := false, true, false, false
	next := 0 // the column of a cell without an r attribute
	for !stop {
		tok, err := x.token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				inRow, cells, wide, blank, next = true, nil, false, true, 0
			case "c":
				if !inRow {
					if err := x.skip(); err != nil {
						return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
					}
					continue
				}
				col, err := cellColumn(attr(t, "r"), next)
				if err != nil {
					return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
				}
				next = col + 1
				v, vBlank, err := wb.cell(x, t)
				if err != nil {
					return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
				}
				if col >= maxColumns {
					wide = wide || v != ""
					continue
				}
				blank = blank && vBlank
				for len(cells) <= col {
					cells = append(cells, "")
				}
				cells[col] = v
			}
		case xml.EndElement:
			if t.Name.Local == "row" && inRow {
				inRow = false
				stop = !fn(cells, blank, wide)
			}
		}
	}
	return nil
}

// cellColumn returns the zero-based column of a cell reference such as
// "AB12"; a cell without one is in column next.
func cellColumn(ref string, next int) (int, error) {
	if ref == "" {
		if next >= maxSheetColumn {
			return 0, fmt.Errorf("a row has more than %d cells", maxSheetColumn)
		}
		return next, nil
	}
	col := 0
	i := 0
	for ; i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z'; i++ {
		col = col*26 + int(ref[i]-'A'+1)
		if col > maxSheetColumn {
			return 0, fmt.Errorf("cell %.20q is beyond the last column", ref)
		}
	}
	if i == 0 {
		return 0, fmt.Errorf("cell reference %.20q", ref)
	}
	return col - 1, nil
}

// cell reads the <c> element whose start was just read and returns the
// text it shows, at most xlsxStringBytes of it, and whether it is blank.
func (wb *xlsxBook) cell(x *xmlReader, c xml.StartElement) (string, bool, error) {
	typ := attr(c, "t")
	var v string
	var inline string
	inlineBlank := true
	for depth := 1; depth > 0; {
		tok, err := x.token()
		if err != nil {
			return "", false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "v":
				if v, err = x.text(xlsxStringBytes); err != nil {
					return "", false, err
				}
			case "is":
				if inline, inlineBlank, err = x.richText(xlsxStringBytes); err != nil {
					return "", false, err
				}
			default:
				if err := x.skip(); err != nil {
					return "", false, err
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err == nil && i >= len(wb.strings) && wb.stringsCut {
			return "", false, xlsxBound("a cell names shared string %d; a preview reads the first %d (at most %d of them, %d MiB of text)",
				i, len(wb.strings), xlsxMaxSharedStrings, xlsxSharedTextBytes>>20)
		}
		if err != nil || i < 0 || i >= len(wb.strings) {
			return "", false, fmt.Errorf("a cell names shared string %.20q of %d", v, len(wb.strings))
		}
		return wb.strings[i].text, wb.strings[i].blank, nil
	case "inlineStr":
		return inline, inlineBlank, nil
	case "b":
		if strings.TrimSpace(v) == "1" {
			return "TRUE", false, nil
		}
		return "FALSE", false, nil
	case "str", "e", "d":
		return v, strings.TrimSpace(v) == "", nil
	}
	v = wb.number(v, attr(c, "s"))
	return v, strings.TrimSpace(v) == "", nil
}

// number shows a stored number: a date, time or percentage when its style
// says so, else as stored (full precision, no thousands separators, so that
// it reads as the number it is).
func (wb *xlsxBook) number(v, style string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	kind := numberPlain
	if s, err := strconv.Atoi(style); err == nil && s >= 0 && s < len(wb.formats) {
		kind = wb.formats[s]
	}
	if kind == numberPlain {
		return v
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return v
	}
	if kind == numberPercent {
		return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
	}
	t, ok := serialTime(f, wb.date1904)
	if !ok {
		return v
	}
	switch {
	case kind == numberTime && f < 1:
		return t.Format("15:04:05")
	case kind == numberDate && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04:05")
}

// serialTime converts a spreadsheet date serial to a time: days since
// 1899-12-30 (which absorbs the 1900 system's fictitious 29 February 1900
// for every date after it) or, in the 1904 system, since 1904-01-01.
func serialTime(f float64, date1904 bool) (time.Time, bool) {
	if f < 0 || f > 2958465 { // 9999-12-31
		return time.Time{}, false
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		epoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if f < 61 {
		// Before the fictitious 1900-02-29 the serials are one day off.
		epoch = epoch.AddDate(0, 0, 1)
	}
	days := math.Floor(f)
	secs := math.Round((f - days) * 86400)
	return epoch.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second), true
}

// each calls fn with every start element of an XML part, in order, until
// fn returns an error (errStop: none).
func (wb *xlsxBook) each(r io.Reader, fn func(*xmlReader, xml.StartElement) error) error {
	return wb.eachEnd(r, fn, nil)
}

func (wb *xlsxBook) eachEnd(r io.Reader, fn func(*xmlReader, xml.StartElement) error, end func(xml.EndElement)) error {
	x := wb.xml(r)
	for {
		tok, err := x.token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(x, t); err == errStop {
				return nil
			} else if err != nil {
				return err
			}
		case xml.EndElement:
			if end != nil {
				end(t)
			}
		}
	}
}

// attr returns the value of a start element's attribute without a
// namespace, or "".
func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

func truthy(s string) bool { return s == "1" || strings.EqualFold(s, "true") }
