package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Limits on what [Load] accepts: a recording is read from disk, possibly a
// contributor's, and is validated like any untrusted input.
const (
	maxManifestBytes = 16 << 20
	maxExchanges     = 10000
	maxHeaderBytes   = 64 << 10
)

// Recording is a loaded recording: its manifest and every exchange's body
// and headers.
type Recording struct {
	Manifest Manifest
	// Responses holds, per exchange (in manifest order), what the upstream
	// answered; an exchange that ended in a transport error has a nil entry.
	Responses []*Response
}

// Response is a recorded answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Load reads the recording in dir: the manifest, then each exchange's body
// and header files, which must lie inside dir.
func Load(dir string) (*Recording, error) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, err
	}
	rec := &Recording{Manifest: *m, Responses: make([]*Response, len(m.Exchanges))}
	for i, ex := range m.Exchanges {
		if ex.Body == "" {
			continue
		}
		body, err := readWithin(dir, ex.Body, MaxBodyBytes)
		if err != nil {
			return nil, fmt.Errorf("record: exchange %d: %w", i+1, err)
		}
		resp := &Response{Status: ex.Status, Header: http.Header{}, Body: body}
		if ex.Headers != "" {
			hb, err := readWithin(dir, ex.Headers, maxHeaderBytes)
			if err != nil {
				return nil, fmt.Errorf("record: exchange %d: %w", i+1, err)
			}
			resp.Header = ParseHeaders(hb)
		}
		rec.Responses[i] = resp
	}
	return rec, nil
}

// ParseManifest decodes and checks a manifest.
func ParseManifest(raw []byte) (*Manifest, error) {
	if len(raw) > maxManifestBytes {
		return nil, fmt.Errorf("record: manifest larger than %d bytes", maxManifestBytes)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("record: manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("record: manifest: trailing data after the JSON object")
	}
	if m.Format != FormatVersion {
		return nil, fmt.Errorf("record: manifest format %d, want %d", m.Format, FormatVersion)
	}
	if len(m.Exchanges) > maxExchanges {
		return nil, fmt.Errorf("record: manifest lists %d exchanges, more than %d", len(m.Exchanges), maxExchanges)
	}
	for i, ex := range m.Exchanges {
		switch {
		case ex.Method == "" || strings.ContainsAny(ex.Method, " \r\n\t/"):
			return nil, fmt.Errorf("record: exchange %d: bad method", i+1)
		case !strings.HasPrefix(ex.Path, "/"):
			return nil, fmt.Errorf("record: exchange %d: path must start with /", i+1)
		case ex.Body != "" && (ex.Status < 100 || ex.Status > 999):
			return nil, fmt.Errorf("record: exchange %d: status %d out of range", i+1, ex.Status)
		case ex.Body == "" && ex.Error == "":
			return nil, fmt.Errorf("record: exchange %d: neither a body nor an error", i+1)
		}
		for _, rel := range []string{ex.Body, ex.Headers} {
			if rel == "" {
				continue
			}
			if _, err := within("/", rel); err != nil {
				return nil, fmt.Errorf("record: exchange %d: %w", i+1, err)
			}
		}
	}
	return &m, nil
}

// ParseHeaders reads a header file: "Name: value" lines; a status line or
// any line without a colon is skipped. It never fails: a malformed line
// teaches nothing.
func ParseHeaders(b []byte) http.Header {
	h := http.Header{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxHeaderBytes)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") || strings.HasPrefix(k, "HTTP/") {
			continue
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h
}

// within joins rel to dir, refusing absolute paths and paths that climb out.
func within(dir, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") {
		return "", fmt.Errorf("file %q must be a relative path inside the recording", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file %q leaves the recording directory", rel)
	}
	return filepath.Join(dir, clean), nil
}

func readWithin(dir, rel string, limit int64) ([]byte, error) {
	p, err := within(dir, rel)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("file %q larger than %d bytes", rel, limit)
	}
	return b, nil
}

// Replay returns a handler that answers like the upstream did: each request
// gets the recorded response of the first unused exchange of upstream with
// the same method, path and query (a [REDACTED] query value, or the REDACTED of older recordings, matches any
// value), the last such exchange once all are used. upstream "" replays
// every upstream. A request nothing matches gets 599 with a message naming
// it, so that a test shows where the client's requests drifted from the
// recording.
func (rec *Recording) Replay(upstream string) http.Handler {
	var mu sync.Mutex
	used := make([]bool, len(rec.Manifest.Exchanges))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		match, last := -1, -1
		for i, ex := range rec.Manifest.Exchanges {
			if rec.Responses[i] == nil || (upstream != "" && ex.Upstream != upstream) ||
				ex.Method != r.Method || ex.Path != r.URL.EscapedPath() || !queryMatches(ex.Query, r.URL.RawQuery) {
				continue
			}
			last = i
			if !used[i] {
				match = i
				break
			}
		}
		if match < 0 {
			match = last
		}
		if match >= 0 {
			used[match] = true
		}
		mu.Unlock()
		if match < 0 {
			http.Error(w, "record: no recorded exchange for "+r.Method+" "+r.URL.RequestURI(), 599)
			return
		}
		resp := rec.Responses[match]
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
	})
}

// queryMatches compares a recorded query with a live one as parameter sets.
func queryMatches(recorded, live string) bool {
	rq, err1 := url.ParseQuery(recorded)
	lq, err2 := url.ParseQuery(live)
	if err1 != nil || err2 != nil {
		return recorded == live
	}
	if len(rq) != len(lq) {
		return false
	}
	for k, rv := range rq {
		lv, ok := lq[k]
		if !ok || len(lv) != len(rv) {
			return false
		}
		for i := range rv {
			if rv[i] != lv[i] && rv[i] != Redacted && rv[i] != legacyRedacted {
				return false
			}
		}
	}
	return true
}
