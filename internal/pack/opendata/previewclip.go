package opendata

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// Bounds of a preview's text, whatever the format. An XLSX cell shows a
// shared string by reference, so a workbook of a few kilobytes can name one
// 1 MiB string in each of 100 rows × 500 columns: the preview would be 50 GB.
// Each cell is cut at maxPreviewCellBytes, each column name at
// maxPreviewNameBytes, and the rows' text in all (each row's column names and
// values, as the result repeats them) at maxPreviewTextBytes; reading stops
// at the row that reaches it.
const (
	maxPreviewCellBytes = 4 << 10
	maxPreviewNameBytes = 256
	maxPreviewTextBytes = 1 << 20
)

// clipMark ends a cell or a name that was cut.
const clipMark = textclip.Ellipsis

// clipCell cuts s to at most n bytes (at least len(clipMark)), on a rune
// boundary, marked with clipMark; cut reports whether it did.
func clipCell(s string, n int) (_ string, cut bool) {
	if len(s) <= n {
		return s, false
	}
	return textclip.Prefix(s, n-len(clipMark)) + clipMark, true
}

// textBudget charges a preview's rows against maxPreviewTextBytes.
type textBudget struct {
	left    int
	clipped int // cells and names cut
}

func newTextBudget() *textBudget { return &textBudget{left: maxPreviewTextBytes} }

// full reports that the rows so far used the whole budget: no further row
// is read.
func (b *textBudget) full() bool { return b.left <= 0 }

// text charges one cell of a row, under its column name, and returns its
// text cut to the cell bound and to what is left of the budget.
func (b *textBudget) text(name, v string) string {
	b.left -= len(name)
	v, cut := clipCell(v, min(maxPreviewCellBytes, max(b.left, 0)))
	if cut {
		b.clipped++
	}
	b.left -= len(v)
	return v
}

// value charges a decoded JSON value: a string or number as text; a nested
// value as its JSON, kept while that fits and otherwise replaced by its JSON
// text, cut (a string, marked).
func (b *textBudget) value(name string, v any) any {
	switch x := v.(type) {
	case string:
		return b.text(name, x)
	case json.Number:
		if s := b.text(name, string(x)); s != string(x) {
			return s
		}
		return x
	case nil, bool:
		b.left -= len(name) + len("false")
		return v
	}
	raw, err := tool.Marshal(v) // bounded by the downloaded file
	if err != nil {
		raw = []byte(fmt.Sprint(v))
	}
	if len(raw) <= min(maxPreviewCellBytes, b.left-len(name)) {
		b.left -= len(name) + len(raw)
		return v
	}
	return b.text(name, string(raw))
}

// note says what the budget cut, or "": more tells that rows were left
// unread once it was spent.
func (b *textBudget) note(rows int, more bool) string {
	var parts []string
	if b.clipped > 0 {
		parts = append(parts, fmt.Sprintf("%d cells or column names were cut (marked %s): a cell shows at most %d bytes, a column name %d",
			b.clipped, clipMark, maxPreviewCellBytes, maxPreviewNameBytes))
	}
	if b.full() && more {
		parts = append(parts, fmt.Sprintf("the rows' text reached the %d KiB a preview returns, so only %d rows are shown",
			maxPreviewTextBytes>>10, rows))
	}
	return strings.Join(parts, "; ")
}

// jsonNames gives a JSON file's keys the names its columns show: a key over
// maxPreviewNameBytes is cut, and suffixed _2, _3… should the cut name be
// taken.
func jsonNames(keys []string, b *textBudget) map[string]string {
	names := make(map[string]string, len(keys))
	taken := make(map[string]bool, len(keys))
	for _, k := range keys {
		if len(k) <= maxPreviewNameBytes {
			taken[k] = true
		}
	}
	for _, k := range keys {
		name, cut := clipCell(k, maxPreviewNameBytes)
		if cut {
			b.clipped++
			base := name
			for i := 2; taken[name]; i++ {
				name = base + "_" + strconv.Itoa(i)
			}
			taken[name] = true
		}
		names[k] = name
	}
	return names
}
