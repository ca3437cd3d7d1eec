package opendata

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// filePortal is a CKAN portal on loopback that also serves files under
// /files/, with a registry whose download client admits 127.0.0.1 only
// because the test says so.
type filePortal struct {
	srv *tooltest.Server
	reg *tool.Registry
}

func newFilePortal(t *testing.T, files map[string]http.HandlerFunc, resources map[string]map[string]any) *filePortal {
	t.Helper()
	fp := &filePortal{}
	mux := http.NewServeMux()
	mux.Handle("/api/3/action/", tooltest.CKANActions(map[string]http.HandlerFunc{"resource_show": func(w http.ResponseWriter, r *http.Request) {
		res, ok := resources[r.URL.Query().Get("id")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"success":false,"error":{"__type":"Not Found Error","message":"לא נמצא: Resource was not found."}}`)
			return
		}
		res = clone(res)
		res["url"] = strings.ReplaceAll(res["url"].(string), "{srv}", fp.srv.URL)
		okJSON(t, res)(w, r)
	}}))
	for name, h := range files {
		mux.HandleFunc("/files/"+name, h)
	}
	fp.srv = tooltest.NewServer(t, mux)
	fetch := safehttp.NewClient(safehttp.Options{Policy: safehttp.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	fp.reg = newRegistry(t, Config{BaseURL: fp.srv.URL, HTTPClient: fp.srv.Client(), PortalHTTPClient: fetch.HTTPClient()})
	return fp
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// windows1255 encodes s as Excel's Hebrew "ANSI" code page does.
func windows1255(t *testing.T, s string) []byte {
	t.Helper()
	b, err := charmap.Windows1255.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CONSTRUCTED: small files in the shapes Israeli portals publish.
const hebrewCSV = "שם ישוב,סמל ישוב,אוכלוסיה,פעיל,תאריך עדכון,הערה\r\n" +
	"חיפה,4000,290306.5,true,31/12/2023,\"עיר, נמל\"\r\n" +
	"עכו,7600,51000,false,01/01/2024,\r\n"

func TestPreviewResourceDelimitedFiles(t *testing.T) {
	serve := func(ct string, body []byte) http.HandlerFunc { return tooltest.Respond(200, ct, body) }
	bom := append([]byte{0xEF, 0xBB, 0xBF}, strings.ReplaceAll(hebrewCSV, ",", ";")...)
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"ansi.csv": serve("text/csv", windows1255(t, hebrewCSV)),
		"bom.csv":  serve("text/csv; charset=utf-8", bom),
		"table":    serve("application/octet-stream", []byte(strings.ReplaceAll(hebrewCSV, ",", "\t"))),
	}, map[string]map[string]any{
		"r-ansi": {"id": "r-ansi", "package_id": "cities", "url": "{srv}/files/ansi.csv", "format": "CSV", "datastore_active": true},
		"r-tsv":  {"id": "r-tsv", "url": "{srv}/files/table", "format": "TSV"},
	})
	tests := []struct {
		name, args, encoding, delimiter, apiURL string
	}{
		{"Windows-1255 by resource id", `{"resourceId":"r-ansi"}`, "windows-1255", ",", fp.srv.URL + "/api/3/action/resource_show?id=r-ansi"},
		{"UTF-8 with BOM and semicolons by url", `{"url":"` + fp.srv.URL + `/files/bom.csv"}`, "utf-8 with BOM", ";", fp.srv.URL + "/files/bom.csv"},
		{"TSV declared by the portal", `{"resourceId":"r-tsv","rows":1}`, "utf-8", "\t", fp.srv.URL + "/api/3/action/resource_show?id=r-tsv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := call(t, fp.reg, "previewResource", tt.args)
			var out PreviewResourceOutput
			mustOK(t, res, &out)
			if out.Encoding != tt.encoding || out.Delimiter != tt.delimiter || out.APIURL != tt.apiURL || out.Truncated ||
				!strings.HasPrefix(out.URL, fp.srv.URL+"/files/") {
				t.Errorf("output = %+v", out)
			}
			want := []PreviewColumn{{"שם ישוב", "string"}, {"סמל ישוב", "integer"}, {"אוכלוסיה", "number"}, {"פעיל", "boolean"},
				{"תאריך עדכון", "date"}, {"הערה", "string"}}
			if out.Format == "tsv" { // one row: 51000 is not previewed
				want[2].Type = "number"
			}
			if fmt.Sprint(out.Columns) != fmt.Sprint(want) {
				t.Errorf("columns = %v\nwant      %v", out.Columns, want)
			}
			if len(out.Rows) == 0 || out.Rows[0]["שם ישוב"] != "חיפה" || out.Rows[0]["סמל ישוב"] != "4000" {
				t.Fatalf("rows = %v", out.Rows)
			}
			if out.Format == "tsv" {
				if len(out.Rows) != 1 || !out.HasMoreRows {
					t.Errorf("rows %d, more %v", len(out.Rows), out.HasMoreRows)
				}
			} else if len(out.Rows) != 2 || out.Rows[0]["הערה"] != "עיר, נמל" && out.Delimiter == "," || out.Rows[1]["שם ישוב"] != "עכו" || out.HasMoreRows {
				t.Errorf("rows = %v", out.Rows)
			}
		})
	}
	res, _ := call(t, fp.reg, "previewResource", `{"resourceId":"r-ansi"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if !strings.Contains(out.Note, "queryDatastore") {
		t.Errorf("note = %q", out.Note)
	}
	if out.PortalURL != fp.srv.URL+"/dataset/cities/resource/r-ansi" {
		t.Errorf("portalUrl = %s", out.PortalURL)
	}
}

func TestPreviewResourceJSON(t *testing.T) {
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"array.json":  tooltest.Respond(200, "application/json", []byte(`[{"עיר":"חיפה","n":12345678901234567890,"ok":true,"x":{"a":1}},{"עיר":"עכו","n":2.5,"ok":false}]`)),
		"object.json": tooltest.Respond(200, "application/json", []byte(`{"help":"…","result":{"records":[{"b":1,"a":"x"},{"b":2,"a":"y"},{"b":3,"a":"z"}]}}`)),
		"scalar.json": tooltest.Respond(200, "application/json", []byte(`42`)),
	}, nil)
	res, _ := call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/array.json"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	want := []PreviewColumn{{"עיר", "string"}, {"n", "number"}, {"ok", "boolean"}, {"x", "json"}}
	if out.Format != "json" || fmt.Sprint(out.Columns) != fmt.Sprint(want) || len(out.Rows) != 2 || out.Delimiter != "" {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(string(res.JSON), `"n":12345678901234567890`) {
		t.Errorf("numbers lost precision: %s", res.JSON)
	}

	res, _ = call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/object.json","rows":2}`)
	out = PreviewResourceOutput{}
	mustOK(t, res, &out)
	if fmt.Sprint(out.Columns) != "[{b integer} {a string}]" || len(out.Rows) != 2 || !out.HasMoreRows {
		t.Errorf("output = %+v", out)
	}

	res, _ = call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/scalar.json"}`)
	mustFail(t, res, tool.CodeUnsupported)
}

// Only the start of a huge file is read: the Range asked for, and at most
// the bound (plus what loopback buffers hold) of what a server that ignores
// Range sends.
func TestPreviewResourceReadsOnlyThePrefix(t *testing.T) {
	const huge = 64 << 20
	var served atomic.Int64
	var rangeHeader atomic.Value
	done := make(chan struct{}, 1)
	line := []byte("1,שורה,2024-01-01\n")
	fp := newFilePortal(t, map[string]http.HandlerFunc{"huge.csv": func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		rangeHeader.Store(r.Header.Get("Range"))
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Length", fmt.Sprint(huge))
		w.Write([]byte("id,name,day\n"))
		chunk := bytes.Repeat(line, 32<<10/len(line))
		for served.Load() < huge {
			n, err := w.Write(chunk)
			served.Add(int64(n))
			if err != nil {
				return
			}
		}
	}}, nil)
	res, env := call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/huge.csv","rows":100}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server is still sending")
	}
	if got := rangeHeader.Load(); got != fmt.Sprintf("bytes=0-%d", DefaultPreviewBytes) {
		t.Errorf("Range = %v", got)
	}
	if !out.Truncated || out.BytesRead != DefaultPreviewBytes || len(out.Rows) != 100 || !out.HasMoreRows ||
		fmt.Sprint(out.Columns) != "[{id integer} {name string} {day date}]" {
		t.Errorf("output: truncated %v, %d bytes, %d rows, columns %v", out.Truncated, out.BytesRead, len(out.Rows), out.Columns)
	}
	if n := served.Load(); n >= 16<<20 {
		t.Errorf("the server sent %d bytes; the preview should stop reading after %d", n, DefaultPreviewBytes)
	}
	t.Logf("served %d of %d bytes", served.Load(), huge)
	if s, _ := env["summary"].(string); !strings.HasPrefix(s, `100 rows × 3 columns (csv, utf-8), start of the file: "id integer", "name string", "day date"; the file has more rows`) {
		t.Errorf("summary = %q", s)
	}
}

// A prefix cut inside a Hebrew UTF-8 letter is still UTF-8: the cut
// line is dropped before the encoding is detected.
func TestPreviewResourceCutInsideALetter(t *testing.T) {
	body := []byte("a,b\n" + strings.Repeat("חיפה,1\n", 200))
	fp := newFilePortal(t, map[string]http.HandlerFunc{"cut.csv": tooltest.Respond(200, "text/csv", body)}, nil)
	cfg := Config{BaseURL: fp.srv.URL, HTTPClient: fp.srv.Client(), PreviewMaxBytes: 4 + 11*5 + 3,
		PortalHTTPClient: safehttp.NewClient(safehttp.Options{Policy: safehttp.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}).HTTPClient()}
	res, _ := call(t, newRegistry(t, cfg), "previewResource", `{"url":"`+fp.srv.URL+`/files/cut.csv"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if out.Encoding != "utf-8" || len(out.Rows) != 5 || out.Rows[4]["a"] != "חיפה" || !out.Truncated {
		t.Errorf("output = %+v", out)
	}
}

func TestPreviewResourceErrors(t *testing.T) {
	var hits atomic.Int64
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"gone.csv":  tooltest.Respond(404, "text/html", []byte("<h1>not here</h1>")),
		"down.csv":  func(w http.ResponseWriter, r *http.Request) { hits.Add(1); w.WriteHeader(503) },
		"sheet":     tooltest.Respond(200, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []byte("PK\x03\x04...")),
		"old.xls":   tooltest.Respond(200, "application/vnd.ms-excel", append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 504)...)),
		"empty.csv": tooltest.Respond(200, "text/csv", nil),
	}, map[string]map[string]any{
		"r-xls":   {"id": "r-xls", "url": "{srv}/files/old.xls", "format": "XLS"},
		"r-nourl": {"id": "r-nourl", "url": "", "format": "CSV"},
	})
	u := fp.srv.URL + "/files/"
	tests := []struct {
		name, args string
		code       tool.Code
		message    string
	}{
		{"neither", `{}`, tool.CodeValidation, "give exactly one of resourceId and url"},
		{"both", `{"resourceId":"a","url":"https://x.example/a.csv"}`, tool.CodeValidation, "give exactly one of resourceId and url"},
		{"portal without resourceId", `{"url":"https://x.example/a.csv","portal":"https://demo.ckan.org"}`, tool.CodeValidation, "portal: only with resourceId"},
		{"rows out of range", `{"url":"https://x.example/a.csv","rows":101}`, tool.CodeValidation, "rows"},
		{"not http", `{"url":"ftp://x.example/a.csv"}`, tool.CodeInvalidURL, "url: unsupported URL scheme"},
		{"credentials", `{"url":"https://user:secret@x.example/a.csv"}`, tool.CodeInvalidURL, "url: URL must not contain credentials"},
		{"unknown resource", `{"resourceId":"nope"}`, tool.CodeNotFound, "resource_show: Not Found Error: לא נמצא"},
		{"resource without a URL", `{"resourceId":"r-nourl"}`, tool.CodeUnsupported, "resource r-nourl has no file URL"},
		{"legacy XLS declared", `{"resourceId":"r-xls"}`, tool.CodeUnsupported, "xlsx: this is a legacy .xls"},
		{"broken XLSX by content type", `{"url":"` + u + `sheet"}`, tool.CodeParse, "xlsx: the file is not a ZIP archive"},
		{"404", `{"url":"` + u + `gone.csv"}`, tool.CodeNotFound, "download: HTTP 404 Not Found"},
		{"503", `{"url":"` + u + `down.csv"}`, tool.CodeHTTP, "download: HTTP 503 Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := call(t, fp.reg, "previewResource", tt.args)
			if e := mustFail(t, res, tt.code); !strings.HasPrefix(e.Message, tt.message) {
				t.Errorf("message = %q, want prefix %q", e.Message, tt.message)
			}
		})
	}
	if hits.Load() != 2 {
		t.Errorf("503 fetched %d times; want once plus the registry's one retry", hits.Load())
	}
	for _, r := range fp.srv.Requests() {
		if strings.Contains(r.URL.Path, "x.example") {
			t.Errorf("unexpected request %s", r.URL)
		}
	}

	res, _ := call(t, fp.reg, "previewResource", `{"url":"`+u+`empty.csv"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if len(out.Rows) != 0 || len(out.Columns) != 0 || out.Truncated {
		t.Errorf("empty file: %+v", out)
	}
}

// Without a download client that admits it, a file on a private or
// loopback address is refused before anything is sent.
func TestPreviewResourceRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int64
	srv := tooltest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	reg := newRegistry(t, Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	for _, u := range []string{srv.URL + "/files/a.csv", "http://10.0.0.1/a.csv", "http://[::1]:1/a.json", "http://169.254.169.254/latest/meta-data"} {
		res, _ := call(t, reg, "previewResource", `{"url":"`+u+`"}`)
		if e := mustFail(t, res, tool.CodeBlocked); !strings.Contains(e.Message, "only files on public addresses may be previewed") {
			t.Errorf("%s: message = %q", u, e.Message)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the private server got %d requests", hits.Load())
	}
	// The portal's resource URL is no way around it.
	srv = tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"resource_show": okJSON(t, map[string]any{"id": "r", "url": "http://127.0.0.1:9/x.csv", "format": "CSV"})})
	res, _ := call(t, newRegistry(t, Config{BaseURL: srv.URL, HTTPClient: srv.Client()}), "previewResource", `{"resourceId":"r"}`)
	mustFail(t, res, tool.CodeBlocked)
}

func TestDetectDelimiterAndTypes(t *testing.T) {
	for text, want := range map[string]rune{
		"a,b,c\n1,2,3\n":             ',',
		"a;b;c\n1,5;2,5;3\n":         ';',
		"a\tb\n\"x,y\"\t2\n":         '\t',
		"a|b\n1|2\n":                 '|',
		"single\nvalue\n":            ',',
		"\"a;b\",c,d\n\"1;2\",3,4\n": ',',
	} {
		if got := detectDelimiter(text); got != want {
			t.Errorf("detectDelimiter(%q) = %q, want %q", text, got, want)
		}
	}
	for _, tt := range []struct {
		samples []any
		want    string
	}{
		{[]any{"1", " 2 ", ""}, "integer"},
		{[]any{"1", "2.5"}, "number"},
		{[]any{"NaN", "Inf"}, "string"},
		{[]any{"TRUE", "false"}, "boolean"},
		{[]any{"2024-01-31", "31/01/2024"}, "date"},
		{[]any{"1", "x"}, "string"},
		{[]any{"", ""}, "string"},
		{[]any{json.Number("1"), json.Number("2")}, "integer"},
		{[]any{nil, []any{1}}, "json"},
	} {
		if got := guessType(tt.samples); got != tt.want {
			t.Errorf("guessType(%v) = %s, want %s", tt.samples, got, tt.want)
		}
	}
}

// A server that compresses although asked not to is still read, within
// the bound; an encoding that cannot be undone is reported.
func TestPreviewResourceCompressedAnyway(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(hebrewCSV))
	zw.Close()
	var accept atomic.Value
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"gz.csv": func(w http.ResponseWriter, r *http.Request) {
			accept.Store(r.Header.Get("Accept-Encoding"))
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		},
		"br.csv": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte{1, 2, 3})
		},
	}, nil)
	res, _ := call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/gz.csv"}`)
	var out PreviewResourceOutput
	mustOK(t, res, &out)
	if accept.Load() != "identity" || len(out.Rows) != 2 || out.Rows[1]["שם ישוב"] != "עכו" || out.Truncated {
		t.Errorf("Accept-Encoding %v, output %+v", accept.Load(), out)
	}
	res, _ = call(t, fp.reg, "previewResource", `{"url":"`+fp.srv.URL+`/files/br.csv"}`)
	mustFail(t, res, tool.CodeUnsupported)
}

// FuzzPreviewParse: no file, however malformed, makes the parsers panic,
// and every row has exactly the columns announced.
func FuzzPreviewParse(f *testing.F) {
	f.Add([]byte(hebrewCSV), false)
	f.Add([]byte("a;b\n\"x;\"\"y\";2\n"), true)
	f.Add([]byte(`[{"a":1},{"b":[1,{"c":null}]}, {"a":`), true)
	f.Add([]byte(`{"result":{"records":[{"a":1}]}}`), false)
	f.Add([]byte{0xEF, 0xBB, 0xBF, 0xE0, 0xE1, ',', '\n'}, false)
	f.Fuzz(func(t *testing.T, body []byte, truncated bool) {
		text, _ := decodeText(body)
		if !utf8.ValidString(text) {
			t.Fatalf("decodeText(%q) is not UTF-8", body)
		}
		check := func(tb table, err error) {
			if err != nil {
				return
			}
			checkClipped(t, tb)
			for _, row := range tb.rows {
				for k := range row {
					found := false
					for _, c := range tb.columns {
						found = found || c.Name == k
					}
					if !found && len(tb.columns) < maxPreviewColumns {
						t.Fatalf("row key %q is not a column of %v", k, tb.columns)
					}
				}
			}
		}
		check(parseDelimited(text, detectDelimiter(text), 5))
		check(parseJSONTable(text, 5, truncated))
		_ = sniffFormat(body)
	})
}

// A large download reports its bytes; a small one does not.
func TestPreviewResourceReportsLargeDownloads(t *testing.T) {
	line := []byte("1,שורה,2024-01-01\n")
	big := append([]byte("id,name,day\n"), bytes.Repeat(line, (3<<20)/len(line))...)
	small := append([]byte("id,name,day\n"), bytes.Repeat(line, 100)...)
	fp := newFilePortal(t, map[string]http.HandlerFunc{
		"big.csv":   tooltest.Respond(200, "text/csv", big),
		"small.csv": tooltest.Respond(200, "text/csv", small),
	}, nil)
	for _, tt := range []struct {
		file    string
		reports bool
	}{{"big.csv", true}, {"small.csv", false}} {
		var got []tool.Progress
		ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
		res := fp.reg.Call(ctx, "previewResource", json.RawMessage(`{"url":"`+fp.srv.URL+`/files/`+tt.file+`","rows":5}`))
		if !res.OK() {
			t.Fatalf("%s: %s", tt.file, res.JSON)
		}
		if !tt.reports {
			if len(got) != 0 {
				t.Errorf("%s: %d progress reports for a small file: %+v", tt.file, len(got), got)
			}
			continue
		}
		if len(got) < 2 || len(got) > progressSteps+1 {
			t.Fatalf("%s: %d reports, want 2 to %d", tt.file, len(got), progressSteps+1)
		}
		for i, p := range got {
			if p.Total != DefaultPreviewBytes || i > 0 && p.Done <= got[i-1].Done || !strings.HasPrefix(p.Message, "downloading") {
				t.Errorf("report %d: %+v", i, p)
			}
		}
		if last := got[len(got)-1]; last.Done != DefaultPreviewBytes {
			t.Errorf("last report %+v, want the whole bound read", last)
		}
	}
}
