package tooltest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/record"
)

// maxRecordedBody bounds how much of each request body the server keeps;
// the clients under test send small JSON bodies, so more means a bug.
const maxRecordedBody = 1 << 20

// Request is a request as the server received it.
type Request struct {
	Method string
	URL    *url.URL
	Query  url.Values // URL.Query(), parsed once
	Header http.Header
	Body   []byte
}

// Server is an HTTP server on 127.0.0.1 that records every request it gets
// and then hands it to a handler. It is closed when the test ends.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	requests []Request
}

// NewServer starts a recording server in front of h. The handler sees the
// request body intact.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxRecordedBody))
		u := *r.URL
		s.mu.Lock()
		s.requests = append(s.requests, Request{
			Method: r.Method, URL: &u, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
		})
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the last request received, failing the test if there was
// none.
func (s *Server) Last(t testing.TB) Request {
	t.Helper()
	r := s.Requests()
	if len(r) == 0 {
		t.Fatal("tooltest: the server received no request")
	}
	return r[len(r)-1]
}

// Reply is a canned answer: a status, headers and a body. As a handler it
// answers every request the same way.
type Reply struct {
	Status int // 200 when zero
	Header http.Header
	Body   []byte
	// Handle, when set, answers instead of the fields above (for synthetic
	// or stateful servers).
	Handle http.HandlerFunc
}

// ServeHTTP writes the reply.
func (rep Reply) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rep.Handle != nil {
		rep.Handle(w, r)
		return
	}
	for k, vs := range rep.Header {
		w.Header()[k] = vs
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(rep.Body)
}

// Sequence answers the n-th request with the n-th reply; once the replies
// run out, the last one repeats. It is for clients that retry or page.
func Sequence(replies ...Reply) http.Handler {
	if len(replies) == 0 {
		panic("tooltest: Sequence needs a reply")
	}
	var (
		mu sync.Mutex
		n  int
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		rep := replies[min(n, len(replies)-1)]
		n++
		mu.Unlock()
		rep.ServeHTTP(w, r)
	})
}

// ckanActionPrefix is where CKAN's Action API lives on a portal.
const ckanActionPrefix = "/api/3/action/"

// CKANActions returns a handler shaped like a CKAN portal's Action API:
// /api/3/action/{name} is served by actions[name], whatever the method, and
// any other path or unknown action gets CKAN's "Not Found Error" envelope
// with status 404.
func CKANActions(actions map[string]http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, ckanActionPrefix)
		h := actions[name]
		if !ok || h == nil {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"success": false, "error": {"__type": "Not Found Error", "message": "Not found"}}`)
			return
		}
		h(w, r)
	})
}

// CKANAction returns the CKAN action a request named, or "" when its path
// is not under the Action API.
func CKANAction(r Request) string {
	name, ok := strings.CutPrefix(r.URL.Path, ckanActionPrefix)
	if !ok {
		return ""
	}
	return name
}

// Respond returns a handler answering every request with status, body and,
// unless it is empty, the Content-Type contentType.
func Respond(status int, contentType string, body []byte) http.HandlerFunc {
	var h http.Header
	if contentType != "" {
		h = http.Header{"Content-Type": {contentType}}
	}
	return Reply{Status: status, Header: h, Body: body}.ServeHTTP
}

// NewCKANServer starts a recording server shaped like a CKAN portal, whose
// actions are served as CKANActions describes.
func NewCKANServer(t testing.TB, actions map[string]http.HandlerFunc) *Server {
	t.Helper()
	return NewServer(t, CKANActions(actions))
}

// CKANResult returns the "result" member of a CKAN answer recorded in the
// ckan package's testdata (see JSONFixture).
func CKANResult(t testing.TB, name string) json.RawMessage {
	t.Helper()
	var env struct{ Result json.RawMessage }
	if err := json.Unmarshal(JSONFixture(t, "ckan", name), &env); err != nil {
		t.Fatalf("tooltest: %s: %v", name, err)
	}
	return env.Result
}

// CKANPackageSearch serves demo.ckan.org's recorded package_search answer
// (three rows, with facets), the usual happy path of a CKAN test.
func CKANPackageSearch(t testing.TB) http.HandlerFunc {
	t.Helper()
	return Respond(http.StatusOK, "application/json;charset=utf-8", JSONFixture(t, "ckan", "demo.ckan.org/package_search_rows3_facets.json"))
}

// ReplayRecording starts a server that answers as the recording in dir
// (made by internal/record: `toolport doctor --record DIR` or
// TOOLPORT_RECORD_DIR) says upstream answered; upstream "" replays every
// upstream of the recording. A request the recording does not hold gets
// status 599 naming it, so a test shows where a client's requests drifted.
func ReplayRecording(t testing.TB, dir, upstream string) *Server {
	t.Helper()
	rec, err := record.Load(dir)
	if err != nil {
		t.Fatalf("tooltest: %v", err)
	}
	return NewServer(t, rec.Replay(upstream))
}

// InMemoryClient returns a client whose requests s's handler serves in the
// calling goroutine, with no socket: a loopback server cannot run inside a
// testing/synctest bubble, and through this client a test in one reaches s
// all the same, so that the waits the code under test makes (a Retry-After,
// a retry delay) pass on the bubble's fake clock instead of in real time.
func (s *Server) InMemoryClient() *http.Client {
	return &http.Client{Transport: handlerTransport{s.Config.Handler}}
}

// handlerTransport serves a request with a handler, as a server would have
// received it.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	in.RemoteAddr = "192.0.2.1:1234" // as httptest.NewRequest: a documentation address
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, in)
	if req.Body != nil {
		_ = req.Body.Close() // a RoundTripper closes the request body
	}
	if err := req.Context().Err(); err != nil {
		return nil, err // the handler gave up with the caller, as a server's connection would
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}
