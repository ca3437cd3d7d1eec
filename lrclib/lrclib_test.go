package lrclib

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/tooltest"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "lrclib", name)
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// serve starts a recording server in front of h and returns a client
// pointed at it.
func serve(t *testing.T, h http.Handler, opts ...Option) (*Client, *tooltest.Server) {
	t.Helper()
	srv := tooltest.NewServer(t, h)
	c, err := NewClient(srv.Client(), append([]Option{WithBaseURL(srv.URL)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

var cassetteURI = regexp.MustCompile(`(?m)^\s+uri: (\S+)$`)

// recordedRequest returns the request URI a cassette recorded.
func recordedRequest(t *testing.T, cassette string) *url.URL {
	t.Helper()
	m := cassetteURI.FindSubmatch(fixture(t, "cassettes/"+cassette))
	if m == nil {
		t.Fatalf("%s: no uri", cassette)
	}
	u, err := url.Parse(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// sameRequest fails unless got asks for what the cassette recorded: the
// same path and the same query parameters.
func sameRequest(t *testing.T, got tooltest.Request, cassette string) {
	t.Helper()
	want := recordedRequest(t, cassette)
	if got.URL.Path != want.Path {
		t.Errorf("path = %q, recorded %q", got.URL.Path, want.Path)
	}
	if g, w := got.Query.Encode(), want.Query().Encode(); g != w {
		t.Errorf("query = %s, recorded %s", g, w)
	}
}

func TestGetSendsTheRecordedRequestAndDecodesTheRecord(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_found_i_want_to_live.json")})
	r, err := c.Get(context.Background(), &GetParams{
		TrackName: "I Want to Live", ArtistName: " Borislav Slavov ",
		AlbumName: "Baldur's Gate 3 (Original Game Soundtrack)", Duration: 233*time.Second + 300*time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Last(t)
	sameRequest(t, req, "test_get_lyrics.yaml")
	if ua := req.Header.Get("User-Agent"); ua != DefaultUserAgent || !strings.HasPrefix(ua, "Toolport/") {
		t.Errorf("User-Agent = %q", ua)
	}
	if r.ID != 3396226 || r.TrackName != "I Want to Live" || r.ArtistName != "Borislav Slavov" || r.Duration != 233 || r.Instrumental {
		t.Errorf("record = %+v", r)
	}
	if !strings.HasPrefix(r.SyncedLyrics, "[00:") || r.PlainLyrics == "" || !r.HasLyrics() {
		t.Errorf("lyrics missing: plain %d bytes, synced %d bytes", len(r.PlainLyrics), len(r.SyncedLyrics))
	}
	if r.Length() != 233*time.Second {
		t.Errorf("Length = %v", r.Length())
	}
}

func TestGetCachedCallsGetCached(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_found_i_want_to_live.json")})
	if _, err := c.Get(context.Background(), &GetParams{TrackName: "I Want to Live", ArtistName: "Borislav Slavov", Cached: true}); err != nil {
		t.Fatal(err)
	}
	req := srv.Last(t)
	if req.URL.Path != "/api/get-cached" || req.Query.Has("duration") || req.Query.Has("album_name") {
		t.Errorf("request = %s", req.URL)
	}
}

func TestGetByID(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_by_id_3396226.json")})
	r, err := c.GetByID(context.Background(), 3396226)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, srv.Last(t), "test_get_lyrics_by_id.yaml")
	if r.ID != 3396226 || r.AlbumName != "Baldur's Gate 3 (Original Game Soundtrack)" {
		t.Errorf("record = %+v", r)
	}
}

func TestAMissIsErrNotFound(t *testing.T) {
	for _, name := range []string{
		"error_404_track_not_found.json", // live: statusCode
		"docs_example_get_404.json",      // docs: code
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := serve(t, tooltest.Reply{Status: 404, Header: jsonHeader, Body: fixture(t, name)})
			r, err := c.Get(context.Background(), &GetParams{TrackName: "this song does not exist", ArtistName: "this artist does not exist"})
			if r != nil || !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get = %v, %v; want ErrNotFound", r, err)
			}
			if errors.Is(err, ErrRateLimited) {
				t.Error("a 404 matches ErrRateLimited")
			}
			var e *Error
			if !errors.As(err, &e) || e.Name != NameTrackNotFound || e.Message != "Failed to find specified track" || e.Temporary() {
				t.Errorf("error = %#v", e)
			}
			_, err = c.GetByID(context.Background(), 1)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("GetByID: %v", err)
			}
		})
	}
}

// recordedElement returns the raw bytes of the search result with id from
// the recorded search answer, unchanged.
func recordedElement(t *testing.T, id int64) []byte {
	t.Helper()
	var rows []json.RawMessage
	if err := json.Unmarshal(fixture(t, "search_track_artist_i_want_to_live.json"), &rows); err != nil {
		t.Fatal(err)
	}
	for _, raw := range rows {
		var r struct{ ID int64 }
		if json.Unmarshal(raw, &r) == nil && r.ID == id {
			return raw
		}
	}
	t.Fatalf("no record %d in the recording", id)
	return nil
}

func TestAnInstrumentalTrackIsARecordNotAFailure(t *testing.T) {
	// The body is one element of the recorded search answer (id 15192645,
	// instrumental, both lyrics null), served as /api/get would.
	c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: recordedElement(t, 15192645)})
	r, err := c.GetByID(context.Background(), 15192645)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Instrumental || r.PlainLyrics != "" || r.SyncedLyrics != "" || r.HasLyrics() {
		t.Errorf("record = %+v", r)
	}
}

func TestSearchByFields(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "search_track_artist_i_want_to_live.json")})
	rs, err := c.Search(context.Background(), &SearchParams{TrackName: "I Want to Live", ArtistName: "Borislav Slavov"})
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, srv.Last(t), "test_search_with_fields.yaml")
	if len(rs) != 20 {
		t.Fatalf("%d records, want 20", len(rs))
	}
	var instrumental, plainOnly int
	for _, r := range rs {
		if r.Instrumental {
			instrumental++
			if r.HasLyrics() {
				t.Errorf("instrumental %d has lyrics", r.ID)
			}
		}
		if r.PlainLyrics != "" && r.SyncedLyrics == "" {
			plainOnly++
		}
	}
	if instrumental != 2 || plainOnly != 1 {
		t.Errorf("instrumental %d, plain-only %d; want 2 and 1", instrumental, plainOnly)
	}

	// 233 s: the 1.0 s junk row, the 239 s, 239.84 s and 282 s rows go.
	got := MatchDuration(rs, 233*time.Second)
	if len(got) != 16 {
		t.Errorf("MatchDuration(233s) kept %d rows, want 16", len(got))
	}
	for _, r := range got {
		if r.Duration != 233 {
			t.Errorf("kept %d with duration %v", r.ID, r.Duration)
		}
	}
	// 240 s: the 239 s row with lyrics and the instrumental 239.84 s row.
	got = MatchDuration(rs, 240*time.Second)
	if len(got) != 2 || got[0].ID != 22609930 || got[1].ID != 20137299 {
		t.Errorf("MatchDuration(240s) = %+v", got)
	}
}

func TestSearchByQuery(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "search_q_i_want_to_live.json")})
	rs, err := c.Search(context.Background(), &SearchParams{Query: "I Want to Live"})
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, srv.Last(t), "test_search_with_query.yaml")
	if len(rs) != 20 {
		t.Fatalf("%d records, want 20", len(rs))
	}
	artists := map[string]bool{}
	for _, r := range rs {
		artists[r.ArtistName] = true
	}
	if len(artists) < 2 {
		t.Errorf("one artist only: %v", artists)
	}
}

func TestSearchWithNoMatchIsEmpty(t *testing.T) {
	for _, body := range []string{"[]", "null"} { // CONSTRUCTED: the documented empty array, and null
		c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: []byte(body)})
		rs, err := c.Search(context.Background(), &SearchParams{Query: "nothing"})
		if err != nil || rs == nil || len(rs) != 0 {
			t.Errorf("%s: Search = %v, %v", body, rs, err)
		}
	}
}

func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name        string
		reply       tooltest.Reply
		wantStatus  int
		wantName    string
		wantMessage string
		wantRetry   time.Duration
		rateLimited bool
		temporary   bool
	}{
		{
			name: "429 with Retry-After seconds",
			// CONSTRUCTED: no 429 was recorded; LRCLIB's error shape.
			reply: tooltest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}, "Content-Type": {"application/json"}},
				Body: []byte(`{"message":"Too many requests","name":"TooManyRequests","statusCode":429}`)},
			wantStatus: 429, wantName: "TooManyRequests", wantMessage: "Too many requests", wantRetry: 7 * time.Second,
			rateLimited: true, temporary: true,
		},
		{
			name:       "429 with a Retry-After date and no body", // CONSTRUCTED
			reply:      tooltest.Reply{Status: 429, Header: http.Header{"Retry-After": {"Wed, 06 Aug 2025 07:05:41 GMT"}}},
			wantStatus: 429, wantRetry: time.Minute, rateLimited: true, temporary: true,
		},
		{
			name: "500 UnknownError", // CONSTRUCTED from the server's error shape
			reply: tooltest.Reply{Status: 500, Header: jsonHeader,
				Body: []byte(`{"message":"Unknown error happened","name":"UnknownError","statusCode":500}`)},
			wantStatus: 500, wantName: NameUnknownError, wantMessage: "Unknown error happened", temporary: true,
		},
		{
			name:       "502 from a proxy, HTML", // CONSTRUCTED
			reply:      tooltest.Reply{Status: 502, Body: []byte("<html><body>Bad Gateway</body></html>")},
			wantStatus: 502, temporary: true,
		},
		{
			name: "400 ValidationError", // CONSTRUCTED from the server's error shape
			reply: tooltest.Reply{Status: 400, Header: jsonHeader,
				Body: []byte(`{"message":"duration is not a number","name":"ValidationError","statusCode":400}`)},
			wantStatus: 400, wantName: NameValidationError, wantMessage: "duration is not a number",
		},
		{
			name:       "400 plain text", // CONSTRUCTED: a missing parameter gets plain text
			reply:      tooltest.Reply{Status: 400, Body: []byte("Failed to deserialize query string: missing field `track_name`\n")},
			wantStatus: 400, wantMessage: "Failed to deserialize query string: missing field `track_name`",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, tt.reply)
			c.core.Now = func() time.Time { return time.Date(2025, 8, 6, 7, 4, 41, 0, time.UTC) }
			_, err := c.Get(context.Background(), &GetParams{TrackName: "t", ArtistName: "a"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.StatusCode != tt.wantStatus || e.Name != tt.wantName || e.Message != tt.wantMessage || e.RetryAfter != tt.wantRetry {
				t.Errorf("error = %#v", e)
			}
			if errors.Is(err, ErrRateLimited) != tt.rateLimited || errors.Is(err, ErrNotFound) || e.Temporary() != tt.temporary {
				t.Errorf("%v: rate limited %v, temporary %v", err, errors.Is(err, ErrRateLimited), e.Temporary())
			}
		})
	}
}

func TestTheClientDoesNotRetry(t *testing.T) {
	c, srv := serve(t, tooltest.Sequence(
		tooltest.Reply{Status: 503, Header: http.Header{"Retry-After": {"1"}}},
		tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_by_id_3396226.json")},
	))
	if _, err := c.GetByID(context.Background(), 3396226); err == nil {
		t.Fatal("a 503 succeeded")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if _, err := c.GetByID(context.Background(), 3396226); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

func TestTimeoutIsTheContextDeadline(t *testing.T) {
	c, _ := serve(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
		select { // a server that never answers in time
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Get(ctx, &GetParams{TrackName: "t", ArtistName: "a"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestMalformedBodies(t *testing.T) {
	for _, tt := range []struct{ name, body string }{ // CONSTRUCTED
		{"truncated", `{"id":3396226,"trackName":"I Want`},
		{"HTML", "<html>maintenance</html>"},
		{"array for a record", `[]`},
		{"record without id", `{"trackName":"x"}`},
		{"wrong type", `{"id":"3396226"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: []byte(tt.body)})
			_, err := c.GetByID(context.Background(), 3396226)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if strings.Contains(err.Error(), "maintenance") {
				t.Errorf("error repeats the body: %v", err)
			}
		})
	}
	c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: []byte(`{"not":"an array"}`)})
	if _, err := c.Search(context.Background(), &SearchParams{Query: "x"}); !errors.As(err, new(*ParseError)) {
		t.Errorf("search: err = %v", err)
	}
}

func TestBodiesAreCapped(t *testing.T) {
	body := fixture(t, "search_q_i_want_to_live.json")
	c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: body}, WithMaxBodyBytes(int64(len(body)-1)))
	if _, err := c.Search(context.Background(), &SearchParams{Query: "I Want to Live"}); !errors.Is(err, httpclient.ErrBodyTooLarge) {
		t.Errorf("err = %v, want ErrBodyTooLarge", err)
	}
	c, _ = serve(t, tooltest.Reply{Header: jsonHeader, Body: body}, WithMaxBodyBytes(int64(len(body))))
	if _, err := c.Search(context.Background(), &SearchParams{Query: "I Want to Live"}); err != nil {
		t.Errorf("a body of exactly the limit: %v", err)
	}
}

func TestInvalidInputSendsNothing(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Status: 500})
	long := strings.Repeat("x", MaxFieldRunes+1)
	ctx := context.Background()
	calls := map[string]func() error{
		"no track":  func() error { _, err := c.Get(ctx, &GetParams{ArtistName: "a"}); return err },
		"no artist": func() error { _, err := c.Get(ctx, &GetParams{TrackName: "t", ArtistName: "  "}); return err },
		"negative duration": func() error {
			_, err := c.Get(ctx, &GetParams{TrackName: "t", ArtistName: "a", Duration: -time.Second})
			return err
		},
		"huge duration": func() error {
			_, err := c.Get(ctx, &GetParams{TrackName: "t", ArtistName: "a", Duration: 25 * time.Hour})
			return err
		},
		"long album": func() error {
			_, err := c.Get(ctx, &GetParams{TrackName: "t", ArtistName: "a", AlbumName: long})
			return err
		},
		"bad UTF-8":    func() error { _, err := c.Get(ctx, &GetParams{TrackName: "t\xff", ArtistName: "a"}); return err },
		"id 0":         func() error { _, err := c.GetByID(ctx, 0); return err },
		"empty search": func() error { _, err := c.Search(ctx, &SearchParams{ArtistName: "a"}); return err },
		"q and fields": func() error { _, err := c.Search(ctx, &SearchParams{Query: "q", TrackName: "t"}); return err },
		"long q":       func() error { _, err := c.Search(ctx, &SearchParams{Query: long}); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestBaseURL(t *testing.T) {
	c, err := NewClient(nil, WithBaseURL("  "))
	if err != nil || c.core.BaseURL().String() != DefaultBaseURL {
		t.Errorf("empty base URL: %v, %v", c, err)
	}
	for _, bad := range []string{"ftp://lrclib.net", "lrclib.net", "https://user:pw@lrclib.net", "https://lrclib.net/?x=1"} {
		if _, err := NewClient(nil, WithBaseURL(bad)); !errors.Is(err, httpclient.ErrBaseURL) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	// A path prefix (a proxy) is kept.
	srv := tooltest.NewServer(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_by_id_3396226.json")})
	c, err = NewClient(srv.Client(), WithBaseURL(srv.URL+"/lyrics/"), WithUserAgent("Other/2 (https://example.org)"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetByID(context.Background(), 3396226); err != nil {
		t.Fatal(err)
	}
	if r := srv.Last(t); r.URL.Path != "/lyrics/api/get/3396226" || r.Header.Get("User-Agent") != "Other/2 (https://example.org)" {
		t.Errorf("request = %s, UA %q", r.URL.Path, r.Header.Get("User-Agent"))
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Status: 302, Header: http.Header{"Location": {"/api/get/1"}}})
	_, err := c.GetByID(context.Background(), 3396226)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 302 {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestDocsExampleDecodes(t *testing.T) {
	r, err := DecodeRecord(fixture(t, "docs_example_get_200.json"))
	if err != nil || r.ID != 3396226 || r.Duration != 233 {
		t.Errorf("DecodeRecord = %+v, %v", r, err)
	}
	// The two recordings of the same record are identical.
	if !bytes.Equal(fixture(t, "get_by_id_3396226.json"), fixture(t, "get_found_i_want_to_live.json")) {
		t.Error("recordings differ")
	}
}

func TestDurationIsSentInWholeSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string // "" when no duration is sent
	}{
		{233 * time.Second, "233"},
		{233*time.Second + 499*time.Millisecond, "233"},
		{233*time.Second + 500*time.Millisecond, "234"},
		{400 * time.Millisecond, ""},
		{0, ""},
	} {
		c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "get_found_i_want_to_live.json")})
		if _, err := c.Get(context.Background(), &GetParams{TrackName: "t", ArtistName: "a", Duration: tt.d}); err != nil {
			t.Fatal(err)
		}
		q := srv.Last(t).Query
		if got := q.Get("duration"); got != tt.want || q.Has("duration") != (tt.want != "") {
			t.Errorf("%v: duration = %q, want %q", tt.d, got, tt.want)
		}
	}
}
