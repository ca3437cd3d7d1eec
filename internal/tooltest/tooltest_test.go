package tooltest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalRecorder stands in for a test so that a helper's failure can be
// observed instead of failing this test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// failure runs f against a recorder and returns the message it failed
// with, or "" when it did not fail.
func failure(t *testing.T, f func(tb testing.TB)) string {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msg
}

func TestRootIsTheModuleRoot(t *testing.T) {
	root := Root(t)
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !declares(b, modulePath) {
		t.Fatalf("Root = %s: go.mod %v", root, err)
	}
	if wd, _ := os.Getwd(); wd != filepath.Join(root, "internal", "tooltest") {
		t.Errorf("Root = %s, but this package is at %s", root, wd)
	}
}

func TestFindRootSkipsOtherModules(t *testing.T) {
	top := t.TempDir()
	nested := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, mod string) {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(top, "// the real one\nmodule "+modulePath+"\n\ngo 1.26\n")
	write(filepath.Join(top, "a"), "module example.com/other\n")
	if got, err := findRoot(nested); err != nil || got != top {
		t.Errorf("findRoot = %q, %v; want %q", got, err, top)
	}
	if _, err := findRoot(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no go.mod for "+modulePath) {
		t.Errorf("findRoot outside the module: %v", err)
	}
}

func TestFixtureReadsAnotherPackagesTestdata(t *testing.T) {
	got := Fixture(t, "tidal", "album_396698918.json")
	want, err := os.ReadFile(filepath.Join(Root(t), "tidal", "testdata", "album_396698918.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("Fixture did not return the file byte for byte")
	}
}

func TestMissingFixtureFailsClearly(t *testing.T) {
	msg := failure(t, func(tb testing.TB) { Fixture(tb, "tidal", "no_such_recording.json") })
	if !strings.Contains(msg, "tidal/testdata/no_such_recording.json") {
		t.Errorf("failure message %q does not name the fixture", msg)
	}
	msg = failure(t, func(tb testing.TB) { Fixtures(tb, "brave", "*.nothing") })
	if !strings.Contains(msg, "no fixture matches brave/testdata/*.nothing") {
		t.Errorf("empty glob: failure message %q", msg)
	}
}

func TestFixturesGlobsInOrder(t *testing.T) {
	got := Fixtures(t, "ckan", "demo.ckan.org/*.json")
	paths, _ := filepath.Glob(filepath.Join(Root(t), "ckan", "testdata", "demo.ckan.org", "*.json"))
	if len(got) != len(paths) || len(got) == 0 {
		t.Fatalf("%d fixtures, %d files", len(got), len(paths))
	}
	for i, p := range paths {
		if b, _ := os.ReadFile(p); !bytes.Equal(got[i], b) {
			t.Errorf("fixture %d is not %s", i, p)
		}
	}
}

func TestHeaderFixture(t *testing.T) {
	h := HeaderFixture(t, "brave", "rate_limit_headers_measured.txt")
	if h.Get("X-Ratelimit-Limit") == "" || h.Get("X-Ratelimit-Policy") == "" {
		t.Errorf("headers = %v", h)
	}
}

func TestStripJSONComments(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\"a\": 1} // note\n", "{\"a\": 1} \n"},
		{"// head\n{}", "\n{}"},
		{`{"url": "http://x//y"}`, `{"url": "http://x//y"}`},
		{`{"q": "a \" // b"} // c`, `{"q": "a \" // b"} `},
		{`{"e": "\\"} // c`, `{"e": "\\"} `},
		{"/", "/"},
	}
	for _, tt := range tests {
		if got := string(StripJSONComments([]byte(tt.in))); got != tt.want {
			t.Errorf("StripJSONComments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if b := JSONFixture(t, "ckan", "dati-ustat.mur.gov.it/tag_list_all_fields.jsonc"); bytes.Contains(b, []byte("\n//")) {
		t.Error("JSONFixture kept a comment line of a .jsonc recording")
	}
}

func get(t *testing.T, s *Server, method, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test", "yes")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServerRecordsRequestsAndKeepsTheBody(t *testing.T) {
	var seen string
	s := NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = string(b)
	}))
	if msg := failure(t, func(tb testing.TB) { s.Last(tb) }); msg == "" {
		t.Error("Last succeeded before any request")
	}
	get(t, s, http.MethodGet, "/a?x=1", "")
	get(t, s, http.MethodPost, "/b?y=%D7%90", `{"k":"v"}`)
	if seen != `{"k":"v"}` {
		t.Errorf("handler read %q", seen)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Method != http.MethodGet || reqs[0].URL.Path != "/a" || reqs[0].Query.Get("x") != "1" {
		t.Fatalf("requests = %+v", reqs)
	}
	last := s.Last(t)
	if last.Method != http.MethodPost || last.URL.RawQuery != "y=%D7%90" || last.Query.Get("y") != "א" ||
		string(last.Body) != `{"k":"v"}` || last.Header.Get("X-Test") != "yes" {
		t.Errorf("last = %+v", last)
	}
}

func TestSequenceRepeatsTheLastReply(t *testing.T) {
	s := NewServer(t, Sequence(
		Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: []byte("slow down")},
		Reply{Body: []byte("ok")},
	))
	var got []string
	for range 3 {
		resp, body := get(t, s, http.MethodGet, "/", "")
		got = append(got, fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("Retry-After"), " ", body))
	}
	if want := []string{"429 1 slow down", "200  ok", "200  ok"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("replies = %q, want %q", got, want)
	}
}

func TestReplyHandle(t *testing.T) {
	s := NewServer(t, Reply{Status: 500, Handle: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}})
	if resp, _ := get(t, s, http.MethodGet, "/", ""); resp.StatusCode != http.StatusTeapot {
		t.Errorf("status = %d, want Handle's 418", resp.StatusCode)
	}
}

func TestRespond(t *testing.T) {
	s := NewServer(t, Respond(409, "application/json", []byte(`{}`)))
	resp, body := get(t, s, http.MethodGet, "/", "")
	if resp.StatusCode != 409 || resp.Header.Get("Content-Type") != "application/json" || body != "{}" {
		t.Errorf("got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestCKANServer(t *testing.T) {
	s := NewCKANServer(t, map[string]http.HandlerFunc{"package_search": Respond(200, "application/json", []byte(`{"success":true}`))})
	if resp, body := get(t, s, http.MethodGet, "/api/3/action/package_search?q=x", ""); resp.StatusCode != 200 || body != `{"success":true}` {
		t.Errorf("package_search: %d %s", resp.StatusCode, body)
	}
	if a := CKANAction(s.Last(t)); a != "package_search" {
		t.Errorf("CKANAction = %q", a)
	}
	for _, path := range []string{"/api/3/action/package_show", "/dataset/x"} {
		resp, body := get(t, s, http.MethodGet, path, "")
		if resp.StatusCode != 404 || !strings.Contains(body, `"__type": "Not Found Error"`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	if a := CKANAction(s.Last(t)); a != "" {
		t.Errorf("CKANAction(/dataset/x) = %q, want none", a)
	}
	demo := NewCKANServer(t, map[string]http.HandlerFunc{"package_search": CKANPackageSearch(t)})
	resp, body := get(t, demo, http.MethodGet, "/api/3/action/package_search?rows=3", "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"success": true`) || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Errorf("recorded package_search: %d %q %.80s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestTIDALCatalog(t *testing.T) {
	c := LoadTIDALCatalog(t)
	if !bytes.Equal(c.AlbumBody, Fixture(t, "tidal", "album_396698918.json")) || len(c.Tracks) != 46 || len(c.ByISRC) != 46 {
		t.Fatalf("catalog: %d tracks, %d ISRCs", len(c.Tracks), len(c.ByISRC))
	}
	if len(c.Artists) != 1 || len(c.Artworks) != 1 || c.Album["id"] != TIDALAlbumID {
		t.Errorf("album %v, %d artists, %d artworks", c.Album["id"], len(c.Artists), len(c.Artworks))
	}
	// The CONSTRUCTED middle page numbers its tracks on from the recorded
	// first page.
	for i, tr := range c.Tracks[:40] {
		if want := fmt.Sprint(396698919 + i); tr["id"] != want {
			t.Fatalf("track %d has id %v, want %s", i, tr["id"], want)
		}
	}
	var page2 struct {
		Data  []map[string]any
		Links struct{ Next string }
	}
	mustDecode(t, c.Page2Body, &page2)
	if len(page2.Data) != 20 || !strings.HasSuffix(page2.Links.Next, "page%5Bcursor%5D=3nI1F0y") {
		t.Errorf("middle page: %d items, next %q", len(page2.Data), page2.Links.Next)
	}
	st := c.SearchTrack(c.Tracks[0])
	albums := st["relationships"].(map[string]any)["albums"].(map[string]any)["data"].([]any)
	if albums[0].(map[string]any)["id"] != TIDALAlbumID {
		t.Errorf("search track links %v", albums)
	}
	sa := c.SearchAlbum()
	if rels := sa["relationships"].(map[string]any); len(rels) != 2 || rels["coverArt"] == nil || rels["artists"] == nil {
		t.Errorf("search album relationships %v", rels)
	}
}

func TestClockMovesOnlyWhenAdvanced(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v", c.Now())
	}
	c.Advance(90 * time.Second)
	if got := c.Now().Sub(start); got != 90*time.Second {
		t.Errorf("after Advance(90s) the clock moved %v", got)
	}
}
