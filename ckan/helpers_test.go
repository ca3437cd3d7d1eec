package ckan

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fixture returns a recorded response from testdata, with JSONC comments
// stripped so that it parses as JSON.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if strings.HasSuffix(name, ".jsonc") {
		raw = stripJSONComments(raw)
	}
	return raw
}

// stripJSONComments removes // comments that are outside strings.
func stripJSONComments(b []byte) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out.WriteByte(c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out.WriteByte(c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out.WriteByte('\n')
			}
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// ckanServer is a CKAN-shaped server on 127.0.0.1: each action is served by
// a handler the test sets, and every request is recorded.
type ckanServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	actions  map[string]http.HandlerFunc
}

// recorded is a request as the server received it.
type recorded struct {
	Method, Action, RawQuery, ContentType, UserAgent string
	Query                                            url.Values
	Body                                             []byte
}

func newCKANServer(t *testing.T, actions map[string]http.HandlerFunc) *ckanServer {
	t.Helper()
	s := &ckanServer{actions: actions}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action, ok := strings.CutPrefix(r.URL.Path, "/api/3/action/")
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, recorded{
			Method: r.Method, Action: action, RawQuery: r.URL.RawQuery, Query: r.URL.Query(),
			ContentType: r.Header.Get("Content-Type"), UserAgent: r.Header.Get("User-Agent"), Body: body,
		})
		h := s.actions[action]
		s.mu.Unlock()
		if !ok || h == nil {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"success": false, "error": {"__type": "Not Found Error", "message": "Not found"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// last returns the last request, failing the test if there was none.
func (s *ckanServer) last(t *testing.T) recorded {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.requests
	if len(c) == 0 {
		t.Fatal("the server received no request")
	}
	return c[len(c)-1]
}

// reply serves a fixed body with a status and content type.
func reply(status int, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		w.Write(body)
	}
}

// searchFixture serves demo.ckan.org's recorded package_search answer.
func searchFixture(t *testing.T) http.HandlerFunc {
	return reply(http.StatusOK, "application/json;charset=utf-8", fixture(t, "demo.ckan.org/package_search_rows3_facets.json"))
}
