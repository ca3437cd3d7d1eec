package opendata

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolport/toolport/tool"
)

// Bounds of an XLSX preview. An XLSX file is a ZIP archive whose directory
// sits at its end, so it cannot be read from a prefix as CSV can: the whole
// file is downloaded, up to DefaultPreviewXLSXBytes, and its parts are
// decompressed in memory only up to xlsxUnzipBytes in all, which a small
// file crafted to inflate enormously (a "zip bomb") cannot pass.
const (
	// DefaultPreviewXLSXBytes bounds the download of an XLSX file.
	DefaultPreviewXLSXBytes = 16 << 20
	// xlsxUnzipBytes bounds the sum of an XLSX file's decompressed parts.
	// The ZIP reader also refuses a part that inflates beyond the size its
	// header declares, so the declared sizes that are summed here hold.
	xlsxUnzipBytes = 64 << 20
	// xlsxMaxParts bounds the number of parts; a workbook has a few dozen.
	xlsxMaxParts = 10000
	// xlsxMaxSheetsListed bounds the sheet names returned.
	xlsxMaxSheetsListed = 50
	// maxConcurrentXLSX bounds the workbooks one pack reads at once, and
	// so the memory they take: at most about 32 MiB each, the file (16 MiB),
	// the shared strings kept (8 MiB of text and their index, xlsxread.go),
	// one XML token's text (1 MiB) and the preview (1 MiB of text).
	maxConcurrentXLSX = 2
	// xlsxQueueWait is how long a preview waits for a slot before a
	// retryable RATE_LIMIT.
	xlsxQueueWait = 10 * time.Second
)

// xlsxTable is the start of one sheet of a workbook.
type xlsxTable struct {
	table
	sheet  string
	sheets []string
	note   string
}

// parseXLSX reads the first n rows of a sheet (the named one, or else the
// workbook's active sheet) of an XLSX file: the first row is the header.
// Cell values are the stored values as text: strings, numbers as stored,
// dates and times as ISO 8601 and percentages with % when their number
// format says so. Bad files fail with a PARSE_ERROR, never a panic.
func parseXLSX(body []byte, sheet string, n int) (t xlsxTable, err error) {
	zr, err := checkXLSXArchive(body)
	if err != nil {
		return xlsxTable{}, err
	}
	wb, err := openWorkbook(zr)
	if err != nil {
		return xlsxTable{}, xlsxError(err)
	}
	all := wb.sheetNames()
	if len(all) == 0 {
		return xlsxTable{}, tool.Errorf(tool.CodeParse, "xlsx: the workbook has no sheets")
	}
	t.sheets = all[:min(len(all), xlsxMaxSheetsListed)]
	idx := wb.active
	if sheet != "" {
		if idx = indexFold(all, sheet); idx < 0 {
			return xlsxTable{}, tool.Errorf(tool.CodeValidation, "sheet: the workbook has no sheet %q; it has %s", sheet, strings.Join(t.sheets, ", "))
		}
	}
	t.sheet = all[idx]

	var header []string
	wide := false
	b := newTextBudget()
	err = wb.rows(idx, maxPreviewColumns, func(cells []string, blank, rowWide bool) bool {
		wide = wide || rowWide
		if blank {
			return true // leading empty rows, as titles often leave, and gaps
		}
		if header == nil {
			header = columnNames(cells, b)
			return true
		}
		if len(t.rows) == n || b.full() {
			t.more = true
			return false
		}
		row := make(map[string]any, len(header))
		for i, name := range header {
			if b.full() {
				break // the rest of this row's cells would only add their names
			}
			v := ""
			if i < len(cells) {
				// A cell names a shared string, which many cells may
				// name: cut here, before anything copies it.
				v = b.text(name, cells[i])
			}
			row[name] = v
		}
		t.rows = append(t.rows, row)
		return true
	})
	if err != nil {
		return xlsxTable{}, xlsxError(err)
	}
	t.clipDone(b)
	t.columns = typedColumns(header, t.rows)
	if t.rows == nil {
		t.rows = []map[string]any{}
	}
	if wide {
		t.note = fmt.Sprintf("the sheet has more than %d columns; only the first %d are shown", maxPreviewColumns, maxPreviewColumns)
	}
	if len(all) > 1 {
		t.note = strings.TrimPrefix(t.note+fmt.Sprintf("; the workbook has %d sheets, this is %q (sheet chooses another)", len(all), t.sheet), "; ")
	}
	return t, nil
}

// checkXLSXArchive opens body as a ZIP archive and refuses, before any part
// is decompressed, a file that is not a ZIP archive, holds too many parts,
// or declares more decompressed bytes than the bound.
func checkXLSXArchive(body []byte) (*zip.Reader, error) {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		if bytes.HasPrefix(body, []byte{0xD0, 0xCF, 0x11, 0xE0}) {
			return nil, tool.Errorf(tool.CodeUnsupported, "xlsx: this is a legacy .xls (or an encrypted) workbook, which cannot be previewed; only .xlsx")
		}
		return nil, &tool.Error{Code: tool.CodeParse, Message: "xlsx: the file is not a ZIP archive, as an XLSX workbook is", Err: err}
	}
	if len(zr.File) > xlsxMaxParts {
		return nil, tool.Errorf(tool.CodeParse, "xlsx: the archive has %d parts; a workbook has far fewer (at most %d accepted)", len(zr.File), xlsxMaxParts)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > xlsxUnzipBytes || f.UncompressedSize64 > xlsxUnzipBytes {
			return nil, tool.Errorf(tool.CodeUnsupported, "xlsx: the workbook decompresses to more than %d MiB; too large to preview", xlsxUnzipBytes>>20)
		}
	}
	return zr, nil
}

// xlsxError words a failure to read a workbook.
func xlsxError(err error) error {
	var bound *boundError
	if errors.As(err, &bound) {
		return &tool.Error{Code: tool.CodeUnsupported, Err: err,
			Message: "xlsx: the workbook cannot be previewed: " + oneLine(bound.what, 200) + " (for a resource in the datastore, queryDatastore reads its rows)"}
	}
	if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrAlgorithm) {
		return &tool.Error{Code: tool.CodeParse, Message: "xlsx: the workbook cannot be read: its archive is damaged", Err: err}
	}
	return &tool.Error{Code: tool.CodeParse, Message: "xlsx: the workbook cannot be read: " + oneLine(strings.TrimPrefix(err.Error(), "xlsx: "), 160), Err: err}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

func indexFold(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(s)) {
			return i
		}
	}
	return -1
}

// typedColumns names the columns with the type their values suggest.
func typedColumns(names []string, rows []map[string]any) []PreviewColumn {
	cols := make([]PreviewColumn, 0, len(names))
	for _, name := range names {
		samples := make([]any, 0, len(rows))
		for _, r := range rows {
			samples = append(samples, r[name])
		}
		cols = append(cols, PreviewColumn{Name: name, Type: guessType(samples)})
	}
	return cols
}

// previewXLSX previews a workbook. body is the download so far; a file that
// was cut (found to be XLSX only from its bytes, after the CSV-sized
// download) is downloaded again whole, up to the XLSX bound.
func (p *pack) previewXLSX(ctx context.Context, out PreviewResourceOutput, body []byte, truncated bool, limit int,
	in PreviewResourceInput) (PreviewResourceOutput, error) {
	if truncated && limit < p.xlsxBytes {
		var err error
		if body, truncated, _, err = p.download(ctx, out.URL, p.xlsxBytes); err != nil {
			return PreviewResourceOutput{}, err
		}
	}
	if truncated {
		return PreviewResourceOutput{}, tool.Errorf(tool.CodeUnsupported,
			"the XLSX file is larger than %d MiB, the most previewResource reads (a workbook cannot be read in part); "+
				"for a resource in the datastore, queryDatastore reads its rows", p.xlsxBytes>>20)
	}
	wait := time.NewTimer(p.xlsxWait)
	defer wait.Stop()
	select {
	case p.xlsxSlots <- struct{}{}:
		defer func() { <-p.xlsxSlots }()
	case <-wait.C:
		return PreviewResourceOutput{}, &tool.Error{Code: tool.CodeRateLimit, Retryable: true,
			Message: fmt.Sprintf("xlsx: %d workbooks are being read; try again shortly", maxConcurrentXLSX)}
	case <-ctx.Done():
		return PreviewResourceOutput{}, tool.Classify(ctx.Err())
	}
	t, err := parseXLSX(body, strings.TrimSpace(in.Sheet), in.Rows)
	if err != nil {
		return PreviewResourceOutput{}, err
	}
	out.Format, out.Encoding, out.BytesRead = "xlsx", "utf-8", len(body)
	out.Sheet, out.Sheets = t.sheet, t.sheets
	out.setTable(t.table)
	if t.note != "" {
		out.Note = strings.TrimPrefix(out.Note+"; "+t.note, "; ")
	}
	return out, nil
}
