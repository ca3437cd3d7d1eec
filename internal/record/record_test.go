package record

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Planted secrets: each must be absent from every byte of a recording.
const (
	plantedKey      = "pk-planted-KEY-7f3a9c2e1b"     // a configured API key
	plantedToken    = "tok-planted-TOKEN-5d8e2a4c9f"  // an OAuth access token the upstream hands out
	plantedCookie   = "ck-planted-COOKIE-3b6f1d7e0a"  // a session cookie
	plantedSecret   = "cs-planted-SECRET-9a2c4e6b8d"  // a client secret sent in a form body
	plantedQueryKey = "qk-planted-QUERYKEY-1e3c5a7b9" // a key= query parameter not registered in config
	plantedBasicPwd = "bp-planted-BASICPWD-2d4f6a8c0" // an HTTP Basic password
)

var planted = []string{plantedKey, plantedToken, plantedCookie, plantedSecret, plantedQueryKey, plantedBasicPwd}

// assertNoSecret fails when any file under dir holds any planted secret in
// any of the forms it travels in.
func assertNoSecret(t *testing.T, dir string) {
	t.Helper()
	var forms []string
	for _, s := range planted {
		forms = append(forms, s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s)), s[len(s)-10:])
	}
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s holds secret material %q", p, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 2 {
		t.Fatalf("the recording holds %d files; the test recorded nothing", files)
	}
}

// leakyUpstream is a fake upstream that hands out and echoes every kind of
// secret: a token endpoint, and an API that reflects the credentials it got
// in its body and headers.
func leakyUpstream(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("client_secret") != plantedSecret {
			http.Error(w, "bad secret", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session="+plantedCookie+"; HttpOnly")
		io.WriteString(w, `{"access_token":"`+plantedToken+`","token_type":"Bearer","expires_in":86400}`)
	})
	mux.HandleFunc("GET /api/search", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-RateLimit-Remaining", "41")
		w.Header().Set("X-Subscription-Token", r.Header.Get("X-Subscription-Token"))
		w.Header().Set("X-Echo", "key "+plantedKey) // not kept, and scrubbed if it were
		// The body echoes everything the request carried, as some APIs
		// do in their error messages: the bearer, the key and the query.
		io.WriteString(w, `{"q":"`+r.URL.Query().Get("q")+`","you_sent":"`+r.Header.Get("Authorization")+`",`+
			`"key_echo":"`+r.URL.Query().Get("key")+`","sub":"`+r.Header.Get("X-Subscription-Token")+`",`+
			`"cookie":"`+r.Header.Get("Cookie")+`","escaped":"`+strings.ReplaceAll(plantedKey, "-", `\u002d`)+`"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRecordingHoldsNoSecret(t *testing.T) {
	srv := leakyUpstream(t)
	dir := t.TempDir()
	rec, err := New(dir, Options{Secrets: []string{plantedKey, plantedSecret}, Version: "v1.2.3",
		Now: func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	hc := rec.Client("leaky", nil)
	ctx := context.Background()

	// 1. The token exchange: client secret in the form body, token and
	// cookie in the answer.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"my-client"}, "client_secret": {plantedSecret}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("my-client", plantedBasicPwd)
	mustDo(t, hc, req)

	// 2. An API call carrying the token, a subscription header, a cookie
	// and a key= parameter, which the upstream echoes back.
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/search?q=radiohead&key="+plantedQueryKey, nil)
	req.Header.Set("Authorization", "Bearer "+plantedToken)
	req.Header.Set("X-Subscription-Token", plantedKey)
	req.Header.Set("Cookie", "session="+plantedCookie)
	body := mustDo(t, hc, req)
	if !strings.Contains(body, plantedToken) {
		t.Fatalf("the client must get the upstream's bytes unchanged; got %s", body)
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}

	assertNoSecret(t, dir)

	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := loaded.Manifest
	if m.Version != "v1.2.3" || !m.Recorded.Equal(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)) || len(m.Exchanges) != 2 {
		t.Fatalf("manifest = %+v", m)
	}
	tok, search := m.Exchanges[0], m.Exchanges[1]
	if tok.Method != "POST" || tok.Path != "/oauth2/token" || tok.Status != 200 || !strings.Contains(tok.RequestBody, "client_secret=[REDACTED]") {
		t.Errorf("token exchange = %+v", tok)
	}
	if search.Query != "q=radiohead&key=[REDACTED]" || search.Upstream != "leaky" {
		t.Errorf("search exchange = %+v", search)
	}
	resp := loaded.Responses[1]
	if got := resp.Header.Get("X-RateLimit-Remaining"); got != "41" {
		t.Errorf("rate-limit header not kept: %v", resp.Header)
	}
	for _, h := range []string{"X-Subscription-Token", "Set-Cookie", "X-Echo"} {
		if resp.Header.Get(h) != "" || loaded.Responses[0].Header.Get(h) != "" {
			t.Errorf("header %s was recorded", h)
		}
	}
	// Everything but the secrets is byte for byte what the upstream sent.
	// (A credential header's whole value is a secret, so "Bearer x" and
	// "session=x" go whole; the escaped string is re-encoded.)
	want := `{"q":"radiohead","you_sent":"[REDACTED]","key_echo":"[REDACTED]","sub":"[REDACTED]","cookie":"[REDACTED]","escaped":"[REDACTED]"}`
	if string(resp.Body) != want {
		t.Errorf("recorded body\n got %s\nwant %s", resp.Body, want)
	}
}

// The escaped form above is JSON's \u002d for "-": such a secret is not
// found by byte search, so the test pins what the scrubber does with it.
func TestJSONEscapedSecretIsScrubbed(t *testing.T) {
	s := NewScrubber(`a"b\c-secret-value`)
	got := s.String(`{"v":"a\"b\\c-secret-value"}`)
	if got != `{"v":"[REDACTED]"}` {
		t.Errorf("got %s", got)
	}
}

// A marker can spell a secret with the bytes beside it; what it spells is
// redacted too, marker and all.
func TestMarkerNeverCompletesASecret(t *testing.T) {
	for _, tc := range []struct {
		name, secret, body, want string
	}{
		// The fuzzer's find: the marker written for the secret spells
		// it again with the text after it.
		{"marker spells its own secret", "]000", "]000000", "[REDACTED]"},
		// base64url("]suI") is "XXN1SQ": its marker ends in "]" and spells
		// "]suI" with the text after it, which goes with the marker it
		// touches. (Replacing each secret in turn, longest first, once
		// left the marker's head beside a second marker. One pass over
		// all secrets leaves one marker.)
		{"marker then text", "]suI", "XXN1SQsuI!", "[REDACTED]!"},
		{"text then marker", "xyz12345[RED", "<xyz12345aaaa>", "<[REDACTED]>"},
		{"two markers", "TED][RED", "<aaaabbbb>", "<[REDACTED]>"},
		{"chain", "]D[R", "bbbbDbbbbDbbbb", "[REDACTED]"},
		{"many", "]000", strings.Repeat("]000000", 1000), strings.Repeat("[REDACTED]", 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScrubber(tc.secret, "aaaa", "bbbb")
			if got := s.String(tc.body); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func mustDo(t *testing.T, hc *http.Client, req *http.Request) string {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return string(b)
}

func TestTransportErrorIsRecorded(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // a closed port: connection refused
	dir := t.TempDir()
	rec, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rec.Client("gone", nil).Get(addr + "/x?token=" + plantedToken)
	if err == nil {
		t.Fatal("want a connection error")
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ex := loaded.Manifest.Exchanges[0]
	if ex.Error == "" || ex.Status != 0 || ex.Body != "" || ex.Query != "token=[REDACTED]" {
		t.Errorf("exchange = %+v", ex)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if bytes.Contains(b, []byte(plantedToken)) {
		t.Error("the token leaked into the manifest through the error text")
	}
}

func TestNewRefusesAnExistingRecording(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(dir, Options{}); err == nil {
		t.Fatal("a second recorder over the same directory must be refused")
	}
}

func TestReplayMatchesRequests(t *testing.T) {
	srv := leakyUpstream(t)
	dir := t.TempDir()
	rec, err := New(dir, Options{Secrets: []string{plantedKey}})
	if err != nil {
		t.Fatal(err)
	}
	hc := rec.Client("leaky", nil)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/search?q=one&key="+plantedQueryKey, nil)
	if got := mustDo(t, hc, req); !strings.Contains(got, plantedQueryKey) {
		t.Fatalf("the live answer is not the upstream's: %s", got)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/api/search?q=two", nil)
	mustDo(t, hc, req)

	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	replay := httptest.NewServer(loaded.Replay("leaky"))
	defer replay.Close()
	tests := []struct {
		name, target string
		status       int
		want         string
	}{
		{"a redacted key matches any key", "/api/search?key=another&q=one", 200, `"q":"one","you_sent":"","key_echo":"[REDACTED]"`},
		{"the second request", "/api/search?q=two", 200, `"q":"two"`},
		{"an unknown query", "/api/search?q=three", 599, "no recorded exchange for GET /api/search?q=three"},
		{"an unknown path", "/api/other", 599, "no recorded exchange"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(replay.URL + tt.target)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
				t.Errorf("got %d %s, want %d containing %s", resp.StatusCode, b, tt.status, tt.want)
			}
		})
	}
	// Another upstream's name replays nothing.
	other := httptest.NewServer(loaded.Replay("brave"))
	defer other.Close()
	if resp, err := http.Get(other.URL + "/api/search?q=two"); err != nil || resp.StatusCode != 599 {
		t.Errorf("replay of another upstream answered %v %v", resp, err)
	}
}

func TestParseManifestRefuses(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", `{`, "manifest"},
		{"wrong format", `{"format":2,"exchanges":[]}`, "format 2"},
		{"unknown field", `{"format":1,"exchanges":[],"x":1}`, "unknown field"},
		{"trailing data", `{"format":1,"exchanges":[]} {}`, "trailing"},
		{"climbing path", `{"format":1,"exchanges":[{"method":"GET","path":"/","status":200,"body":"../../etc/passwd"}]}`, "leaves the recording"},
		{"absolute path", `{"format":1,"exchanges":[{"method":"GET","path":"/","status":200,"body":"/etc/passwd"}]}`, "relative path"},
		{"bad status", `{"format":1,"exchanges":[{"method":"GET","path":"/","status":42,"body":"a.json"}]}`, "status 42"},
		{"bad method", `{"format":1,"exchanges":[{"method":"GET /x","path":"/","status":200,"body":"a.json"}]}`, "bad method"},
		{"relative request path", `{"format":1,"exchanges":[{"method":"GET","path":"x","status":200,"body":"a.json"}]}`, "start with /"},
		{"empty exchange", `{"format":1,"exchanges":[{"method":"GET","path":"/"}]}`, "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	h := ParseHeaders([]byte("HTTP/1.1 429 Too Many Requests\nRetry-After: 2\nbad line\nX-RateLimit-Remaining: 0, 12\n: empty\nSpaced Name: x\n"))
	if h.Get("Retry-After") != "2" || h.Get("X-Ratelimit-Remaining") != "0, 12" || len(h) != 2 {
		t.Errorf("headers = %v", h)
	}
}

func TestQueryKeepsOrderAndRedactsSecretParams(t *testing.T) {
	s := NewScrubber()
	tests := []struct{ in, want string }{
		{"q=x&key=abc&cx=1", "q=x&key=[REDACTED]&cx=1"},
		{"api_key=a&Access-Token=b&client_secret=c&flag", "api_key=[REDACTED]&Access-Token=[REDACTED]&client_secret=[REDACTED]&flag"},
		{"q=%ZZ&token=x", "q=%ZZ&token=[REDACTED]"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := s.Query(tt.in); got != tt.want {
			t.Errorf("Query(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScrubberIgnoresShortValuesAndKeepsOrdinaryFields(t *testing.T) {
	s := NewScrubber("ab")
	s.LearnJSON([]byte(`{"error":{"code":"RATE_LIMITED","key":"language"},"access_token":"long-enough-token"}`))
	got := s.String(`{"code":"RATE_LIMITED","key":"language","ab":"long-enough-token"}`)
	if got != `{"code":"RATE_LIMITED","key":"language","ab":"[REDACTED]"}` {
		t.Errorf("got %s", got)
	}
}

// TestStreamsPassThrough: a streamed body reaches the client as it comes
// (a model's events are not held back until the stream ends), and is
// recorded whole once read.
func TestStreamsPassThrough(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: second\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	rec, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rec.Client("model", nil).Get(srv.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len("data: first\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "data: first\n\n" {
		t.Fatalf("first event %q, %v", first, err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(loaded.Responses[0].Body); got != string(first)+string(rest) || got != "data: first\n\ndata: second\n\n" {
		t.Errorf("recorded %q", got)
	}
	if loaded.Manifest.Exchanges[0].Body != "model/001-get-v1-messages.txt" {
		t.Errorf("body file %q", loaded.Manifest.Exchanges[0].Body)
	}
}

// Recordings committed before the marker took brackets hold "REDACTED": a
// query value of either marker stands for any value, nothing else does.
func TestQueryMatchesEitherMarker(t *testing.T) {
	tests := []struct {
		recorded, live string
		want           bool
	}{
		{"q=x&key=[REDACTED]", "key=live-key&q=x", true},
		{"q=x&key=REDACTED", "q=x&key=live-key", true},
		{"q=x&key=REDACTED", "q=y&key=live-key", false},
		{"q=x&key=redacted", "q=x&key=live-key", false},
		{"q=x&key=REDACTED", "q=x", false},
		{"q=x&key=abc", "q=x&key=abc", true},
	}
	for _, tt := range tests {
		if got := queryMatches(tt.recorded, tt.live); got != tt.want {
			t.Errorf("queryMatches(%q, %q) = %v, want %v", tt.recorded, tt.live, got, tt.want)
		}
	}
}
