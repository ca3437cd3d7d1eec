package opendata

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/tool"
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

// calls returns the requests received so far.
func (s *ckanServer) calls() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.requests...)
}

// last returns the last request, failing the test if there was none.
func (s *ckanServer) last(t *testing.T) recorded {
	t.Helper()
	c := s.calls()
	if len(c) == 0 {
		t.Fatal("the server received no request")
	}
	return c[len(c)-1]
}

// registry returns a registry holding the pack's tools pointed at the server.
func (s *ckanServer) registry(t *testing.T) *tool.Registry {
	t.Helper()
	return newRegistry(t, Config{BaseURL: s.URL, HTTPClient: s.Client()})
}

func newRegistry(t *testing.T, cfg Config) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond))
	if err := reg.Register(Tools(cfg)...); err != nil {
		t.Fatal(err)
	}
	return reg
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

// okJSON serves a CKAN success envelope around result.
func okJSON(t testing.TB, result any) http.HandlerFunc {
	raw, err := json.Marshal(map[string]any{"help": "http://127.0.0.1/api/3/action/help_show", "success": true, "result": result})
	if err != nil {
		t.Fatal(err)
	}
	return reply(http.StatusOK, "application/json;charset=utf-8", raw)
}

// call runs a tool and decodes its envelope.
func call(t *testing.T, reg *tool.Registry, name, args string) (*tool.Result, map[string]any) {
	t.Helper()
	res := reg.Call(context.Background(), name, json.RawMessage(args))
	var env map[string]any
	dec := json.NewDecoder(bytes.NewReader(res.JSON))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("%s envelope is not JSON: %v\n%s", name, err, res.JSON)
	}
	return res, env
}

// mustOK fails the test unless the call succeeded, and decodes its output
// into out.
func mustOK(t *testing.T, res *tool.Result, out any) {
	t.Helper()
	if !res.OK() {
		t.Fatalf("call failed: %s", res.JSON)
	}
	if err := json.Unmarshal(res.JSON, out); err != nil {
		t.Fatalf("decoding output: %v", err)
	}
}

// mustFail fails the test unless the call failed with code, and returns the
// error.
func mustFail(t *testing.T, res *tool.Result, code tool.Code) *tool.Error {
	t.Helper()
	if res.OK() {
		t.Fatalf("call succeeded, want %s: %s", code, res.JSON)
	}
	if res.Err.Code != code {
		t.Fatalf("error code = %s, want %s (%s)", res.Err.Code, code, res.JSON)
	}
	return res.Err
}

// fixtureResult returns the "result" member of a recorded response.
func fixtureResult(t *testing.T, name string) json.RawMessage {
	var env struct{ Result json.RawMessage }
	if err := json.Unmarshal(fixture(t, name), &env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return env.Result
}
