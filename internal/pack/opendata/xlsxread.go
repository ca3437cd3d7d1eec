package opendata

import (
	"archive/zip"
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

// maxSheetColumn is the widest column a worksheet may have (XFD).
const maxSheetColumn = 16384

// xlsxBook is a parsed XLSX archive, before any sheet is read.
type xlsxBook struct {
	parts    map[string]*zip.File
	sheets   []sheetRef
	active   int
	date1904 bool
	strings  []string
	// formats maps a cell style index (the s attribute) to how its numbers
	// show.
	formats []numberKind
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
	err = eachElement(rc, func(d *xml.Decoder, se xml.StartElement) error {
		if se.Name.Local != "Relationship" {
			return nil
		}
		r := relationship{id: attr(se, "Id"), kind: attr(se, "Type"), target: attr(se, "Target")}
		if attr(se, "TargetMode") == "External" || r.target == "" {
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
	err = eachElement(rc, func(d *xml.Decoder, se xml.StartElement) error {
		switch se.Name.Local {
		case "workbookPr":
			wb.date1904 = truthy(attr(se, "date1904"))
		case "workbookView":
			if n, err := strconv.Atoi(attr(se, "activeTab")); err == nil && n >= 0 {
				wb.active = n
			}
		case "sheet":
			id := ""
			for _, a := range se.Attr {
				// r:id, whatever prefix the relationships namespace has.
				if a.Name.Local == "id" && a.Name.Space != "" {
					id = a.Value
				}
			}
			wb.sheets = append(wb.sheets, sheetRef{name: attr(se, "name"), part: targets[id]})
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
	err = eachElement(rc, func(d *xml.Decoder, se xml.StartElement) error {
		if se.Name.Local != "si" {
			return nil
		}
		s, err := richText(d, se)
		wb.strings = append(wb.strings, s)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: shared strings: %w", errXLSX, err)
	}
	return nil
}

// richText reads the text of an <si> or <is> element: its <t> runs, without
// the phonetic guides (<rPh>) East Asian workbooks add.
func richText(d *xml.Decoder, start xml.StartElement) (string, error) {
	var b strings.Builder
	depth, inT, skip := 1, false, 0
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return "", err
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
				b.Write(t)
			}
		}
	}
	return b.String(), nil
}

func (wb *xlsxBook) readStyles() error {
	rc, err := wb.open("xl/styles.xml")
	if rc == nil || err != nil {
		return err
	}
	defer rc.Close()
	custom := make(map[int]string)
	inXfs := false
	var xfs []int
	err = eachElementEnd(rc, func(d *xml.Decoder, se xml.StartElement) error {
		switch se.Name.Local {
		case "numFmt":
			if id, err := strconv.Atoi(attr(se, "numFmtId")); err == nil {
				custom[id] = attr(se, "formatCode")
			}
		case "cellXfs":
			inXfs = true
		case "xf":
			if inXfs {
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
	wb.formats = make([]numberKind, len(xfs))
	for i, id := range xfs {
		code, ok := custom[id]
		if !ok {
			wb.formats[i] = builtinKind(id)
			continue
		}
		wb.formats[i] = formatKind(code)
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
			switch rest := strings.ToLower(code[i:]); {
			case strings.HasPrefix(rest, "am/pm"):
				clock, i = true, i+4
			case strings.HasPrefix(rest, "a/p"):
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
// maxColumns columns (wide reports a cell beyond), and calls fn with each
// until fn returns false.
func (wb *xlsxBook) rows(i, maxColumns int, fn func(cells []string, wide bool) bool) error {
	ref := wb.sheets[i]
	rc, err := wb.open(ref.part)
	if err != nil {
		return err
	}
	if rc == nil {
		return fmt.Errorf("%w: the workbook names a sheet it does not contain (%q)", errXLSX, ref.name)
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	var cells []string
	wide, inRow, stop := false, false, false
	next := 0 // the column of a cell without an r attribute
	for !stop {
		tok, err := d.Token()
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
				inRow, cells, wide, next = true, nil, false, 0
			case "c":
				if !inRow {
					if err := d.Skip(); err != nil {
						return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
					}
					continue
				}
				col, err := cellColumn(attr(t, "r"), next)
				if err != nil {
					return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
				}
				next = col + 1
				v, err := wb.cell(d, t)
				if err != nil {
					return fmt.Errorf("%w: sheet %q: %w", errXLSX, ref.name, err)
				}
				if col >= maxColumns {
					wide = wide || v != ""
					continue
				}
				for len(cells) <= col {
					cells = append(cells, "")
				}
				cells[col] = v
			}
		case xml.EndElement:
			if t.Name.Local == "row" && inRow {
				inRow = false
				stop = !fn(cells, wide)
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

// cell reads a <c> element and returns the text it shows.
func (wb *xlsxBook) cell(d *xml.Decoder, c xml.StartElement) (string, error) {
	typ := attr(c, "t")
	var v string
	var inline string
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "v":
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return "", err
				}
				v = s
			case "is":
				if inline, err = richText(d, t); err != nil {
					return "", err
				}
			default:
				if err := d.Skip(); err != nil {
					return "", err
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= len(wb.strings) {
			return "", fmt.Errorf("a cell names shared string %.20q of %d", v, len(wb.strings))
		}
		return wb.strings[i], nil
	case "inlineStr":
		return inline, nil
	case "b":
		if strings.TrimSpace(v) == "1" {
			return "TRUE", nil
		}
		return "FALSE", nil
	case "str", "e", "d":
		return v, nil
	}
	return wb.number(v, attr(c, "s")), nil
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

// eachElement calls fn with every start element of an XML part, in order.
func eachElement(r io.Reader, fn func(*xml.Decoder, xml.StartElement) error) error {
	return eachElementEnd(r, fn, nil)
}

func eachElementEnd(r io.Reader, fn func(*xml.Decoder, xml.StartElement) error, end func(xml.EndElement)) error {
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(d, t); err != nil {
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
