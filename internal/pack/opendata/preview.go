package opendata

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/textenc"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// DefaultPreviewBytes bounds how much of a file previewResource downloads.
const DefaultPreviewBytes = 2 << 20

// PreviewResourceInput is the input of previewResource.
type PreviewResourceInput struct {
	ResourceID string `json:"resourceId,omitempty" jsonschema:"The resource's id, from getDatasetDetails or searchResources; its download URL and format are looked up. Give this or url." schema:"maxLength=200"`
	URL        string `json:"url,omitempty" jsonschema:"A file's http(s) URL to preview directly. Give this or resourceId." schema:"maxLength=2000"`
	Rows       int    `json:"rows,omitempty" jsonschema:"How many rows to return" schema:"minimum=1,maximum=100,default=20"`
	Sheet      string `json:"sheet,omitempty" jsonschema:"For an XLSX workbook: the sheet to preview, by name (default: the sheet the workbook opens on)" schema:"maxLength=200"`
	Portal     string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL to look resourceId up on, instead of data.gov.il" schema:"maxLength=500"`
}

// PreviewColumn is a column of a previewed file.
type PreviewColumn struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"Guessed from the previewed rows: integer, number, boolean, date, string (or json for nested JSON values)"`
}

// PreviewResourceOutput is the start of a CSV, TSV or JSON file as a table.
type PreviewResourceOutput struct {
	ResourceID  string           `json:"resourceId,omitempty"`
	URL         string           `json:"url" jsonschema:"The file previewed"`
	Format      string           `json:"format" jsonschema:"csv, tsv, json or xlsx"`
	Sheet       string           `json:"sheet,omitempty" jsonschema:"For xlsx: the sheet previewed"`
	Sheets      []string         `json:"sheets,omitempty" jsonschema:"For xlsx: the workbook's sheets (the first 50)"`
	Encoding    string           `json:"encoding" jsonschema:"The text encoding detected: utf-8, utf-8 with BOM, utf-16le, utf-16be or windows-1255"`
	Delimiter   string           `json:"delimiter,omitempty" jsonschema:"The field separator detected, for csv and tsv"`
	Columns     []PreviewColumn  `json:"columns"`
	Rows        []map[string]any `json:"rows" jsonschema:"The first rows, each a column → value object (CSV values are strings)"`
	HasMoreRows bool             `json:"hasMoreRows,omitempty" jsonschema:"The file has more rows than returned"`
	Clipped     bool             `json:"clipped,omitempty" jsonschema:"Some text was cut, each cut marked …: a cell at 4096 bytes, a column name at 256, and the rows at 1 MiB of text in all (the note says which)"`
	Truncated   bool             `json:"truncated" jsonschema:"Only the start of the file was downloaded (the preview bound); the file is longer"`
	BytesRead   int              `json:"bytesRead"`
	Note        string           `json:"note,omitempty"`
	PortalURL   string           `json:"portalUrl,omitempty" jsonschema:"The resource's page on the portal, when resourceId was given"`
	APIURL      string           `json:"apiUrl" jsonschema:"The resource_show call that gave the file's URL, or the file's URL when url was given"`
}

// Summary counts rows and columns.
func (o PreviewResourceOutput) Summary() string {
	s := fmt.Sprintf("%d rows × %d columns (%s, %s)", len(o.Rows), len(o.Columns), o.Format, o.Encoding)
	if o.Truncated {
		s += ", start of the file"
	}
	if len(o.Columns) > 0 {
		s += ": " + listTitles(o.Columns, func(c PreviewColumn) string { return c.Name + " " + c.Type }, 6)
	}
	if o.HasMoreRows {
		s += "; the file has more rows (queryDatastore pages through datastore resources)"
	}
	return s
}

func previewResourceTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "previewResource",
		Title: "Preview a resource's file (CSV/TSV/JSON/XLSX)",
		Description: "Download the start of a resource's CSV, TSV or JSON file (by resourceId or url; at most 2 MiB), or a whole XLSX workbook " +
			"(at most 16 MiB), and return its first rows as objects keyed by column, the columns with guessed types, the delimiter and the " +
			"encoding (Hebrew files in Windows-1255 are decoded), and for XLSX the sheet names. Works for files that are not in the datastore.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.previewResource))
}

func (p *pack) previewResource(ctx context.Context, in PreviewResourceInput) (PreviewResourceOutput, error) {
	id, rawURL := strings.TrimSpace(in.ResourceID), strings.TrimSpace(in.URL)
	if (id == "") == (rawURL == "") {
		return PreviewResourceOutput{}, tool.Errorf(tool.CodeValidation, "give exactly one of resourceId and url")
	}
	if strings.TrimSpace(in.Portal) != "" && id == "" {
		return PreviewResourceOutput{}, tool.Errorf(tool.CodeValidation, "portal: only with resourceId")
	}
	out := PreviewResourceOutput{ResourceID: id, URL: rawURL, APIURL: rawURL}
	var declared string // the format the portal declares
	if id != "" {
		c, err := p.client(in.Portal)
		if err != nil {
			return PreviewResourceOutput{}, err
		}
		r, resp, err := c.ResourceShow(ctx, id)
		if err != nil {
			return PreviewResourceOutput{}, toolError(err)
		}
		if strings.TrimSpace(r.URL) == "" {
			return PreviewResourceOutput{}, tool.Errorf(tool.CodeUnsupported, "resource %s has no file URL", id)
		}
		out.URL, out.APIURL, declared = strings.TrimSpace(r.URL), resp.URL, r.Format
		out.PortalURL = pagesOf(c).Resource("", r.PackageID, r.ID)
		if bool(r.DatastoreActive) {
			out.Note = "this resource's rows are in the datastore: queryDatastore can search, filter and page all of them"
		}
	}
	format := previewFormat(declared, out.URL, "")
	if format == "other" {
		return PreviewResourceOutput{}, unsupportedFormat(declared, out.URL)
	}
	limit := p.previewBytes
	if format == "xlsx" {
		limit = p.xlsxBytes // a workbook is read whole
	}
	body, truncated, contentType, err := p.download(ctx, out.URL, limit)
	if err != nil {
		return PreviewResourceOutput{}, err
	}
	if format == "" {
		format = previewFormat("", "", contentType)
	}
	if sniffed := sniffFormat(body); format == "" || sniffed == "xlsx" || format == "xlsx" && !isOLE(body) {
		// The bytes decide: portals label XLSX files "xls" and serve them
		// as octet-stream, and label CSV files XLSX. An OLE file labelled
		// XLS(X) is a legacy workbook, which the XLSX reader names.
		format = sniffed
	}
	if format != "xlsx" && len(body) > p.previewBytes {
		body, truncated = body[:p.previewBytes], true // fetched as a workbook, read as text
	}
	if format == "other" {
		return PreviewResourceOutput{}, unsupportedFormat(contentType, out.URL)
	}
	if format == "xlsx" {
		return p.previewXLSX(ctx, out, body, truncated, limit, in)
	}
	out.Truncated, out.BytesRead = truncated, len(body)
	if truncated && format != "json" {
		// Keep whole lines only: the bound may cut a line, or a character.
		body = wholeLines(body)
	}
	text, enc := decodeText(body)
	out.Format, out.Encoding = format, enc
	var t table
	switch format {
	case "json":
		t, err = parseJSONTable(text, in.Rows, truncated)
	default:
		delim := '\t'
		if format == "csv" {
			delim = detectDelimiter(text)
		}
		out.Delimiter = string(delim)
		t, err = parseDelimited(text, delim, in.Rows)
	}
	if err != nil {
		return PreviewResourceOutput{}, err
	}
	out.setTable(t)
	return out, nil
}

// setTable puts a previewed table in the output, with a note of what was cut.
func (o *PreviewResourceOutput) setTable(t table) {
	o.Columns, o.Rows, o.HasMoreRows, o.Clipped = t.columns, t.rows, t.more, t.clipped
	if t.clipNote != "" {
		o.Note = strings.TrimPrefix(o.Note+"; "+t.clipNote, "; ")
	}
}

func unsupportedFormat(declared, u string) error {
	what := strings.TrimSpace(declared)
	if what == "" {
		what = path.Ext(urlPath(u))
	}
	return tool.Errorf(tool.CodeUnsupported, "cannot preview a %s file: only CSV, TSV and JSON (for a resource in the datastore, use queryDatastore)", what)
}

// previewFormat names the format from what the portal declares, the URL's
// extension or the Content-Type: csv, tsv, json, xlsx, other (known but not
// previewable), or "" when none of them tells.
func previewFormat(declared, u, contentType string) string {
	switch f := strings.ToLower(strings.TrimSpace(declared)); f {
	case "csv", "text/csv":
		return "csv"
	case "tsv", "tab", "text/tab-separated-values":
		return "tsv"
	case "json", "geojson", "application/json":
		return "json"
	case "xlsx", "xls":
		return "xlsx"
	case "pdf", "zip", "doc", "docx", "shp", "kml", "kmz", "xml", "html", "api", "web":
		return "other"
	}
	if u != "" {
		switch strings.ToLower(path.Ext(urlPath(u))) {
		case ".csv":
			return "csv"
		case ".tsv", ".tab":
			return "tsv"
		case ".json", ".geojson":
			return "json"
		case ".xlsx", ".xls":
			return "xlsx"
		case ".pdf", ".zip", ".doc", ".docx":
			return "other"
		}
	}
	if contentType != "" {
		mt, _, _ := mime.ParseMediaType(contentType)
		switch {
		case mt == "text/csv" || mt == "application/csv":
			return "csv"
		case mt == "text/tab-separated-values":
			return "tsv"
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return "json"
		case strings.Contains(mt, "spreadsheetml") || mt == "application/vnd.ms-excel":
			return "xlsx"
		case mt == "application/pdf" || mt == "application/zip" || mt == "text/html":
			return "other"
		}
	}
	return ""
}

// sniffFormat guesses from the bytes: JSON starts with [ or {, a ZIP
// container (XLSX) with PK; anything else is read as CSV.
func sniffFormat(body []byte) string {
	b := bytes.TrimLeft(bytes.TrimPrefix(body, utf8BOM), " \t\r\n")
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "xlsx"
	case bytes.HasPrefix(b, []byte("%PDF")):
		return "other"
	case len(b) > 0 && (b[0] == '[' || b[0] == '{'):
		return "json"
	}
	return "csv"
}

// isOLE reports whether body is an OLE compound file: a legacy .xls, .doc,
// or an encrypted workbook.
func isOLE(body []byte) bool {
	return bytes.HasPrefix(body, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
}

func urlPath(u string) string {
	u, _, _ = strings.Cut(u, "#")
	u, _, _ = strings.Cut(u, "?")
	return u
}

// download GETs at most limit bytes of rawURL through the SSRF-checked
// client, asking for just that range, and reports whether the file is
// longer. The body is asked for unencoded, so that the bound counts file
// bytes and a cut never lands inside a compressed stream.
func (p *pack) download(ctx context.Context, rawURL string, limit int) (body []byte, truncated bool, contentType string, err error) {
	// Only the URL's form is checked here; addresses are the fetch client's
	// to check, at connect time, for every hop.
	u, err := (safehttp.Policy{AllowPrivate: true}).CheckURL(rawURL)
	if err != nil {
		return nil, false, "", &tool.Error{Code: tool.CodeInvalidURL, Message: "url: " + strings.TrimPrefix(err.Error(), "safehttp: "), Err: err}
	}
	timeout := p.cfg.Timeout
	if timeout <= 0 {
		timeout = ckan.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, false, "", &tool.Error{Code: tool.CodeInvalidURL, Message: "url: cannot build a request", Err: err}
	}
	ua := p.cfg.UserAgent
	if ua == "" {
		ua = ckan.DefaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/csv, text/tab-separated-values, application/json;q=0.9, */*;q=0.5")
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("Range", fmt.Sprintf("bytes=0-%d", limit)) // one byte more than kept: it tells whether there is more
	resp, err := p.fetch.Do(req)
	if err != nil {
		return nil, false, "", downloadError(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return []byte{}, false, resp.Header.Get("Content-Type"), nil // an empty file
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent:
		return nil, false, "", tool.HTTPStatusError(resp.StatusCode, 0,
			fmt.Sprintf("download: HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	var r io.Reader = resp.Body
	if enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc == "gzip" || enc == "x-gzip" {
		// Sent compressed although identity was asked for. The compressed
		// bytes read are bounded too, so that a stream that decodes to
		// little cannot be read for ever.
		zr, err := gzip.NewReader(io.LimitReader(resp.Body, 2*int64(limit)+1<<20))
		if err != nil {
			return nil, false, "", &tool.Error{Code: tool.CodeParse, Message: "download: the gzip-encoded body cannot be decoded", Err: err}
		}
		r = zr
	} else if enc != "" && enc != "identity" {
		return nil, false, "", tool.Errorf(tool.CodeUnsupported, "download: the file was sent with Content-Encoding %.40q, which cannot be decoded", enc)
	}
	// What a large download is expected to bring: the bound, or less when
	// the server says the file is shorter (identity encoding only).
	expect := int64(limit)
	if cl := resp.ContentLength; cl > 0 && r == resp.Body {
		expect = min(expect, cl)
	}
	if expect >= progressMinBytes {
		// The first report comes a step in, so that a short file whose
		// length was not sent is not reported.
		step := max(expect/progressSteps, 1)
		r = &progressReader{ctx: ctx, r: r, total: expect, step: step, next: step}
	}
	body, err = io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) == 0 {
			return nil, false, "", downloadError(err)
		}
		truncated = true // the compressed bound cut the stream: keep what decoded
	}
	if len(body) > limit {
		body, truncated = body[:limit], true
	}
	return body, truncated, resp.Header.Get("Content-Type"), nil
}

// downloadError words a failed download without the URL.
func downloadError(err error) error {
	var blocked *safehttp.BlockedError
	switch {
	case errors.As(err, &blocked):
		return &tool.Error{Code: tool.CodeBlocked, Err: err, Message: fmt.Sprintf(
			"url: %s resolves to %s, a %s address; only files on public addresses may be previewed", blocked.Host, blocked.Addr, blocked.Reason)}
	case errors.Is(err, safehttp.ErrTooManyRedirects):
		return &tool.Error{Code: tool.CodeNetwork, Message: "download: too many redirects", Err: err}
	case errors.Is(err, safehttp.ErrUnsupportedScheme), errors.Is(err, safehttp.ErrUserinfo), errors.Is(err, safehttp.ErrInvalidURL):
		return &tool.Error{Code: tool.CodeInvalidURL, Message: "download: redirected to a URL that cannot be fetched", Err: err}
	}
	e := tool.Classify(err)
	if e.Code == tool.CodeInternal {
		e = &tool.Error{Code: tool.CodeNetwork, Message: "network error", Retryable: true, Err: err}
	}
	e.Message = "download: " + e.Message
	return e
}

// utf8BOM marks a UTF-8 file (Excel writes it).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// wholeLines cuts b after its last line end, which in UTF-16 is two bytes
// at an even offset (a byte order mark is two bytes too).
func wholeLines(b []byte) []byte {
	nl := []byte{'\n', 0}
	switch _, enc := textenc.Detect(b); enc {
	case textenc.UTF16BE:
		nl = []byte{0, '\n'}
	case textenc.UTF16LE:
	default:
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return b[:i+1]
		}
		return b
	}
	for i := len(b)&^1 - 2; i >= 0; i -= 2 {
		if b[i] == nl[0] && b[i+1] == nl[1] {
			return b[:i+2]
		}
	}
	return b
}

// decodeText turns a file's bytes into text. Israeli portals publish UTF-8
// (often with the BOM Excel writes) and Windows-1255, Excel's Hebrew "ANSI"
// code page, without saying which, and Excel saves "Unicode text" as
// UTF-16; the heuristic is: a UTF-8 BOM means UTF-8; a UTF-16 BOM, or the
// zero bytes of UTF-16 text with ASCII in it (textenc.Detect), mean UTF-16;
// bytes that are valid UTF-8 are UTF-8 (Windows-1255 Hebrew letters are
// 0xE0–0xFA, which as UTF-8 would need continuation bytes that such text
// rarely has in the right places); anything else is Windows-1255, which
// decodes every byte.
func decodeText(b []byte) (string, string) {
	if rest, ok := bytes.CutPrefix(b, utf8BOM); ok {
		return strings.ToValidUTF8(string(rest), "\uFFFD"), "utf-8 with BOM"
	}
	if dec, name := textenc.Detect(b); dec != nil {
		// Invalid pairs and a cut last character decode as U+FFFD.
		if s, err := dec.NewDecoder().Bytes(b); err == nil {
			return strings.ToValidUTF8(string(s), "\uFFFD"), name
		}
	}
	if utf8.Valid(b) {
		return string(b), "utf-8"
	}
	s, err := charmap.Windows1255.NewDecoder().Bytes(b)
	if err != nil { // unreachable: the decoder maps every byte
		return strings.ToValidUTF8(string(b), "\uFFFD"), "utf-8"
	}
	return string(s), "windows-1255"
}

// detectDelimiter picks the separator among , ; tab | that splits the first
// lines into the same, largest number of fields, counting outside quotes.
func detectDelimiter(text string) rune {
	var lines []string
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
		if len(lines) == 10 {
			break
		}
	}
	best, bestScore := ',', -1
	for _, d := range []rune{',', ';', '\t', '|'} {
		n := countOutsideQuotes(lines[0:min(1, len(lines))], d)
		if n == 0 {
			continue
		}
		consistent := 0
		for _, l := range lines {
			if countOutsideQuotes([]string{l}, d) == n {
				consistent++
			}
		}
		if score := consistent*1000 + n; score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

func countOutsideQuotes(lines []string, d rune) int {
	n := 0
	for _, l := range lines {
		quoted := false
		for _, r := range l {
			switch {
			case r == '"':
				quoted = !quoted
			case r == d && !quoted:
				n++
			}
		}
	}
	return n
}

// table is a previewed table.
type table struct {
	columns []PreviewColumn
	rows    []map[string]any
	more    bool
	// clipped says that text was cut to the preview's bounds; clipNote
	// says what.
	clipped  bool
	clipNote string
}

// clipDone records what budget b cut.
func (t *table) clipDone(b *textBudget) {
	t.clipped, t.clipNote = b.clipped > 0 || b.full() && t.more, b.note(len(t.rows), t.more)
}

// parseDelimited reads a header line and up to n rows.
func parseDelimited(text string, delim rune, n int) (table, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = delim, true, -1
	header, err := r.Read()
	if err == io.EOF {
		return table{columns: []PreviewColumn{}, rows: []map[string]any{}}, nil
	}
	if err != nil {
		return table{}, tool.Errorf(tool.CodeParse, "the file's header line cannot be read: %v", err)
	}
	b := newTextBudget()
	names := columnNames(header, b)
	t := table{rows: []map[string]any{}}
	samples := make([][]any, len(names))
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(t.rows) > 0 {
				break // a row cut by the preview bound, or malformed: keep what was read
			}
			return table{}, tool.Errorf(tool.CodeParse, "the file cannot be read as delimited text: %v", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(t.rows) == n || b.full() {
			t.more = true
			break
		}
		row := make(map[string]any, len(names))
		for i, name := range names {
			if b.full() {
				break // the rest of this row's cells would only add their names
			}
			v := ""
			if i < len(rec) {
				v = b.text(name, rec[i])
			}
			row[name] = v
			samples[i] = append(samples[i], v)
		}
		t.rows = append(t.rows, row)
	}
	t.clipDone(b)
	for i, name := range names {
		t.columns = append(t.columns, PreviewColumn{Name: name, Type: guessType(samples[i])})
	}
	return t, nil
}

// maxPreviewColumns bounds the columns of a preview.
const maxPreviewColumns = 500

// columnNames makes header cells usable as keys: trimmed, cut at
// maxPreviewNameBytes (counted in b), blank ones named column_N, repeated
// ones suffixed _2, _3….
func columnNames(header []string, b *textBudget) []string {
	header = header[:min(len(header), maxPreviewColumns)]
	names := make([]string, len(header))
	seen := map[string]bool{}
	next := map[string]int{} // the suffix to try next for a repeated name
	for i, h := range header {
		// Cut before trimming, so that a name of a megabyte of spaces is
		// not scanned whole.
		h, cut := clipCell(h, 4*maxPreviewNameBytes)
		h, cut2 := clipCell(strings.TrimSpace(h), maxPreviewNameBytes)
		if cut || cut2 {
			b.clipped++
		}
		name := h
		if name == "" {
			name = "column_" + strconv.Itoa(i+1)
		}
		if seen[name] {
			// Suffixes go on from the last one taken: 500 copies of one
			// name cost 500 tries, not 125,000.
			k := max(next[h], 2)
			for name = h + "_" + strconv.Itoa(k); seen[name]; k++ {
				name = h + "_" + strconv.Itoa(k+1)
			}
			next[h] = k + 1
		}
		seen[name] = true
		names[i] = name
	}
	return names
}

// parseJSONTable reads a JSON array of objects, or an object holding one
// under records, data, rows, items or result.records. An array is read
// element by element, so a file cut by the preview bound still yields its
// first rows.
func parseJSONTable(text string, n int, truncated bool) (table, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return table{}, tool.Errorf(tool.CodeParse, "the file is not JSON: %v", err)
	}
	var items []json.RawMessage
	more := false
	switch tok {
	case json.Delim('['):
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if truncated && len(items) > 0 {
					break // the element the preview bound cut
				}
				return table{}, tool.Errorf(tool.CodeParse, "the file is not JSON: %v", err)
			}
			if len(items) == n {
				more = true
				break
			}
			items = append(items, raw)
		}
	case json.Delim('{'):
		if truncated {
			return table{}, tool.Errorf(tool.CodeUnsupported, "the JSON object is larger than the preview bound; only a top-level array can be previewed in part")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text[strings.IndexByte(text, '{'):]), &obj); err != nil {
			return table{}, tool.Errorf(tool.CodeParse, "the file is not JSON: %v", err)
		}
		raw := findRecords(obj)
		if raw == nil {
			return table{}, tool.Errorf(tool.CodeUnsupported, "the JSON object holds no array of rows (looked for records, data, rows, items, result.records)")
		}
		var all []json.RawMessage
		if err := json.Unmarshal(raw, &all); err != nil {
			return table{}, tool.Errorf(tool.CodeParse, "the JSON rows cannot be read: %v", err)
		}
		items, more = all[:min(n, len(all))], len(all) > n
	default:
		return table{}, tool.Errorf(tool.CodeUnsupported, "the JSON file is a single value, not rows")
	}
	t := table{rows: []map[string]any{}, columns: []PreviewColumn{}, more: more}
	var keys []string
	seen := map[string]bool{}
	objects := make([]map[string]any, 0, len(items))
	for i, raw := range items {
		rowKeys, row, err := decodeObject(raw)
		if err != nil {
			return table{}, tool.Errorf(tool.CodeParse, "JSON row %d is not an object of columns", i)
		}
		for _, k := range rowKeys {
			if !seen[k] && len(keys) < maxPreviewColumns {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		objects = append(objects, row)
	}
	b := newTextBudget()
	names := jsonNames(keys, b)
	samples := make([][]any, len(keys))
	for i, obj := range objects {
		if b.full() {
			t.more = true
			break
		}
		row := make(map[string]any, len(keys))
		for j, k := range keys {
			if b.full() {
				break // the rest of this row's cells would only add their names
			}
			if v, ok := obj[k]; ok {
				v = b.value(names[k], v)
				row[names[k]] = v
				samples[j] = append(samples[j], v)
			}
		}
		t.rows = append(t.rows, row)
		objects[i] = nil
	}
	t.clipDone(b)
	for j, k := range keys {
		t.columns = append(t.columns, PreviewColumn{Name: names[k], Type: guessType(samples[j])})
	}
	return t, nil
}

// decodeObject decodes a JSON object, numbers exact, with its keys in the
// file's order (the columns' order).
func decodeObject(raw json.RawMessage) ([]string, map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	row := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := row[k]; !dup {
			keys = append(keys, k)
		}
		row[k] = v
	}
	return keys, row, nil
}

func findRecords(obj map[string]json.RawMessage) json.RawMessage {
	for _, k := range []string{"records", "data", "rows", "items"} {
		if v := bytes.TrimSpace(obj[k]); len(v) > 0 && v[0] == '[' {
			return v
		}
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(obj["result"], &result) == nil {
		if v := bytes.TrimSpace(result["records"]); len(v) > 0 && v[0] == '[' {
			return v
		}
	}
	return nil
}

// dateLayouts are the date forms guessType recognises, ISO and the
// day-first forms Israeli files use.
var dateLayouts = []string{"2006-01-02", "2006-01-02T15:04:05", "2006-01-02 15:04:05", time.RFC3339, "2006-01-02T15:04:05.999999",
	"02/01/2006", "2/1/2006", "02/01/2006 15:04", "02/01/2006 15:04:05", "02.01.2006", "2.1.2006", "02-01-2006"}

// maxDateBytes is longer than any of dateLayouts' forms.
const maxDateBytes = 40

// guessType names the narrowest type all non-empty samples fit: integer,
// number, boolean, date, else string; json for nested JSON values.
func guessType(samples []any) string {
	kinds := map[string]bool{}
	for _, s := range samples {
		switch v := s.(type) {
		case nil:
		case bool:
			kinds["boolean"] = true
		case json.Number:
			if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				kinds["integer"] = true
			} else {
				kinds["number"] = true
			}
		case string:
			if k := stringKind(strings.TrimSpace(v)); k != "" {
				kinds[k] = true
			}
		default:
			kinds["json"] = true
		}
	}
	switch {
	case len(kinds) == 0:
		return "string"
	case len(kinds) == 1:
		for k := range kinds {
			return k
		}
	case len(kinds) == 2 && kinds["integer"] && kinds["number"]:
		return "number"
	}
	if kinds["json"] {
		return "json"
	}
	return "string"
}

// stringKind classifies one text value; "" for an empty one.
func stringKind(v string) string {
	if v == "" {
		return ""
	}
	// Only the characters of decimal numbers are tried as numbers (the
	// parsers copy what they refuse, and accept hex, inf and nan, which
	// are not numbers here); only short values as booleans and dates.
	if strings.Trim(v, "0123456789+-.eE") == "" {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return "integer"
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return "number"
		}
	}
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		return "boolean"
	}
	if len(v) > maxDateBytes {
		return "string"
	}
	for _, l := range dateLayouts {
		if _, err := time.Parse(l, v); err == nil {
			return "date"
		}
	}
	return "string"
}

// Progress of large downloads: files from this size are reported, in at
// most progressSteps reports.
const (
	progressMinBytes = 1 << 20
	progressSteps    = 20
)

// progressReader reports the bytes read through it as the call's progress.
type progressReader struct {
	ctx         context.Context
	r           io.Reader
	read, total int64
	step, next  int64
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.read += int64(n)
	if n > 0 && pr.read >= pr.next {
		done := min(pr.read, pr.total)
		tool.ReportProgress(pr.ctx, tool.Progress{Done: float64(done), Total: float64(pr.total),
			Message: fmt.Sprintf("downloading: %.1f of %.1f MB", float64(done)/1e6, float64(pr.total)/1e6)})
		pr.next = pr.read + pr.step
	}
	return n, err
}
