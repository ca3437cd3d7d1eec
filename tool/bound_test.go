package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/tool"
)

// unknownKeys returns arguments with n unknown keys after a valid query:
// {"query":"trains","k00000":1,…}, about 11 bytes a key.
func unknownKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"query":"trains"`)
	for i := range n {
		fmt.Fprintf(&b, `,"k%05d":1`, i)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// lineLog collects log lines.
type lineLog struct{ bytes.Buffer }

func (l *lineLog) longest() int {
	n := 0
	for line := range strings.SplitSeq(l.String(), "\n") {
		n = max(n, len(line))
	}
	return n
}

func TestValidationErrorIsBoundedWhateverTheArguments(t *testing.T) {
	args := unknownKeys(95_000)
	if len(args) > tool.MaxArgumentBytes {
		t.Fatalf("test arguments are %d bytes, over MaxArgumentBytes", len(args))
	}
	var logs lineLog
	reg := tool.NewRegistry(tool.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	reg.Register(newSearch(t, nil))

	res := reg.Call(context.Background(), "search", args)

	if res.OK() || res.Err.Code != tool.CodeValidation {
		t.Fatalf("want a validation failure, got %.300s", res.JSON)
	}
	if len(res.JSON) > 8<<10 {
		t.Errorf("the envelope is %d bytes for %d bytes of arguments; want a few KiB", len(res.JSON), len(args))
	}
	if n := len(res.Err.Violations); n != tool.MaxViolations {
		t.Errorf("%d violations listed, want MaxViolations (%d)", n, tool.MaxViolations)
	}
	wantMore := 95_000 - tool.MaxViolations
	if res.Err.MoreViolations != wantMore || !strings.HasSuffix(res.Err.Message, fmt.Sprintf("; and %d more", wantMore)) {
		t.Errorf("MoreViolations = %d, message ends %q; want %d and the note", res.Err.MoreViolations, tail(res.Err.Message), wantMore)
	}
	// Which violations are shown does not depend on map order: the first names.
	for i, v := range res.Err.Violations {
		if want := fmt.Sprintf("k%05d", i); v.Path != want || v.Rule != "additionalProperties" {
			t.Errorf("violation %d = %+v, want path %s", i, v, want)
		}
	}
	if n := strings.Count(res.Err.Message, "known fields:"); n != 1 {
		t.Errorf("the known fields are listed %d times, want once: %.400s", n, res.Err.Message)
	}
	var env struct {
		More int `json:"moreViolations"`
	}
	if err := json.Unmarshal(res.JSON, &env); err != nil || env.More != wantMore {
		t.Errorf("envelope moreViolations = %d (%v), want %d", env.More, err, wantMore)
	}
	if n := logs.longest(); n == 0 || n > 2<<10 {
		t.Errorf("longest log line is %d bytes, want a warning of at most 2 KiB", n)
	}
}

func TestValidationWorkIsBounded(t *testing.T) {
	reg := registry(t, newSearch(t, nil))
	args := unknownKeys(95_000)
	reg.Call(context.Background(), "search", args) // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	reg.Call(context.Background(), "search", args)
	runtime.ReadMemStats(&after)
	// Decoding and validating the arguments costs about 250 bytes a key
	// (24 MiB here); describing every key too cost 56 MiB even with the
	// known fields listed once.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40<<20 {
		t.Errorf("one call allocated %d MiB for %d KiB of arguments", alloc>>20, len(args)>>10)
	}
}

func TestViolationPartsAreBounded(t *testing.T) {
	reg := registry(t, newSearch(t, nil))
	long := strings.Repeat("é", 400_000) // 800 KB of key
	tests := []struct{ name, args string }{
		{"huge unknown key", `{"query":"trains","` + long + `":1}`},
		{"huge value of the wrong type", `{"query":"trains","rows":"` + long + `"}`},
		{"huge enum miss", `{"query":"trains","sort":"` + long + `"}`},
		{"huge nested key", `{"query":"trains","filters":{"` + long + `":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := reg.Call(context.Background(), "search", json.RawMessage(tt.args))
			if res.OK() {
				t.Fatal("want a validation failure")
			}
			if len(res.JSON) > 4<<10 || !json.Valid(res.JSON) || !utf8.Valid(res.JSON) {
				t.Errorf("envelope of %d bytes (valid JSON: %v): %.300s", len(res.JSON), json.Valid(res.JSON), res.JSON)
			}
		})
	}
}

func TestToolErrorsAreBounded(t *testing.T) {
	huge := strings.Repeat("upstream said no. ", 100_000)
	var logs lineLog
	reg := tool.NewRegistry(tool.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	reg.Register(newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		return searchOutput{}, &tool.Error{Code: tool.CodeAPI, Message: huge,
			Event: &tool.Event{Kind: "notice", Content: huge}}
	}))
	res := reg.Call(context.Background(), "search", json.RawMessage(`{"query":"trains"}`))
	if len(res.Err.Message) > tool.MaxErrorBytes+8 || len(res.JSON) > tool.MaxErrorBytes+1<<10 {
		t.Errorf("error message %d bytes, envelope %d bytes; want about MaxErrorBytes", len(res.Err.Message), len(res.JSON))
	}
	if len(res.Summary) > tool.MaxSummaryBytes+8 || len(res.Err.Event.Content) > tool.MaxErrorBytes+8 {
		t.Errorf("summary %d bytes, event %d bytes", len(res.Summary), len(res.Err.Event.Content))
	}
	if n := logs.longest(); n > 2<<10 {
		t.Errorf("longest log line is %d bytes", n)
	}

	unknown := strings.Repeat("x", 1<<20)
	res = reg.Call(context.Background(), unknown, nil)
	if res.Err.Code != tool.CodeUnknownTool || len(res.JSON) > 1<<10 {
		t.Errorf("unknown tool with a 1 MiB name: %d bytes of %s", len(res.JSON), res.Err.Code)
	}
}

// echoOutput is what a tool makes of an upstream's answer.
type echoOutput struct {
	Title  string            `json:"title"`
	Items  []echoItem        `json:"items"`
	Extras map[string]string `json:"extras,omitempty"`
}

type echoItem struct {
	Text string `json:"text"`
}

func (o echoOutput) Summary() string { return "found " + o.Title }

// echoingUpstream answers 200 with a body that quotes the key the client sent,
// as some APIs do in a "debug" or "request" member.
func echoingUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key")
		json.NewEncoder(w).Encode(map[string]any{
			"title": "results for " + key,
			"items": []map[string]string{{"text": "request: GET /search?key=" + key}},
			"extra": map[string]string{key: "the key as a key", "debug": key},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func echoTool(t *testing.T, url, key string) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{Name: "echo", Description: "Asks an upstream."},
		func(ctx context.Context, _ struct{}) (echoOutput, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("X-Api-Key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return echoOutput{}, err
			}
			defer resp.Body.Close()
			var body struct {
				Title string            `json:"title"`
				Items []echoItem        `json:"items"`
				Extra map[string]string `json:"extra"`
			}
			raw, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(raw, &body); err != nil {
				return echoOutput{}, err
			}
			return echoOutput{Title: body.Title, Items: body.Items, Extras: body.Extra}, nil
		}))
}

func TestSecretsEchoedByAnUpstreamAreScrubbedFromResults(t *testing.T) {
	keys := []struct{ name, key string }{
		{"plain key", "sk-live-1234567890abcdef"},
		{"key JSON escapes", `p"ss\word` + "\u2028" + "<&>"},
		{"all digits", "98765432101"},
	}
	for _, k := range keys {
		t.Run(k.name, func(t *testing.T) {
			srv := echoingUpstream(t)
			reg := tool.NewRegistry(tool.WithSecrets(k.key))
			reg.Register(echoTool(t, srv.URL, k.key))

			res := reg.Call(context.Background(), "echo", nil)

			if !res.OK() {
				t.Fatalf("call failed: %s", res.JSON)
			}
			if !json.Valid(res.JSON) {
				t.Fatalf("the scrubbed envelope is not JSON: %s", res.JSON)
			}
			var decoded map[string]any
			json.Unmarshal(res.JSON, &decoded)
			if s := fmt.Sprint(decoded); strings.Contains(s, k.key) || strings.Contains(string(res.JSON), k.key) {
				t.Errorf("the key reached the envelope: %s", res.JSON)
			}
			if strings.Contains(res.Summary, k.key) || fmt.Sprint(res.Value) == "" || strings.Contains(fmt.Sprint(res.Value), k.key) {
				t.Errorf("the key reached the summary %q or the value %+v", res.Summary, res.Value)
			}
			out, ok := res.Value.(echoOutput)
			if !ok || out.Items[0].Text != "request: GET /search?key=[REDACTED]" || out.Extras["debug"] != "[REDACTED]" {
				t.Errorf("value = %#v, want the output with the key redacted", res.Value)
			}
			if !strings.Contains(string(res.JSON), `"success":true,"summary":"found results for [REDACTED]"`) {
				t.Errorf("envelope fields moved or not scrubbed: %s", res.JSON)
			}
		})
	}
}

func TestSecretsAreScrubbedFromFailures(t *testing.T) {
	const key = "sk-live-1234567890"
	reg := tool.NewRegistry(tool.WithSecrets(key))
	reg.Register(newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		return searchOutput{}, &tool.Error{Code: tool.CodeConfig, Message: "bad key " + key,
			Event: &tool.Event{Kind: "config_required", Content: "key " + key, DataJSON: `{"key":"` + key + `"}`}}
	}))
	for _, args := range []string{`{"query":"trains"}`, `{"query":"trains","` + key + `":1}`, `{"query":"trains","sort":"` + key + `"}`} {
		res := reg.Call(context.Background(), "search", json.RawMessage(args))
		all := string(res.JSON) + res.Summary + res.Err.Message + fmt.Sprint(res.Err.Violations)
		if res.Err.Event != nil {
			all += res.Err.Event.Content + res.Err.Event.DataJSON
		}
		if strings.Contains(all, key) {
			t.Errorf("the key reached the failure of %s: %s", args, all)
		}
	}
}

func TestBoundJSON(t *testing.T) {
	const limit = 4 << 10
	bigString := `{"success":true,"summary":"one page","url":"https://example.org","content":"` + strings.Repeat("word ", 100_000) + `"}`
	manyItems := `{"success":true,"summary":"many","results":[` + strings.Repeat(`{"title":"a result","url":"https://example.org/x"},`, 20_000) + `{}]}`
	manyKeys := string(unknownKeys(50_000))
	deep := strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000)
	tests := []struct {
		name, in   string
		wantPrefix string // what must survive, in order
		wantNote   string // a marker of the cut
	}{
		{"long string", bigString, `{"success":true,"summary":"one page","url":"https://example.org","content":"word word`, "more bytes)"},
		{"long array", manyItems, `{"success":true,"summary":"many","results":[{"title":"a result"`, "more items)"},
		{"many keys", manyKeys, `{"query":"trains","k00000":1`, "more fields"},
		{"deep nesting", deep, `{"_truncated":`, `"partial":"[[[[`},
		{"not JSON", strings.Repeat("x", 10_000), `{"_truncated":`, `"partial":"xxx`},
		{"not an object", `"` + strings.Repeat("y", 10_000) + `"`, `{"_truncated":`, `"value":"yyy`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tool.BoundJSON(json.RawMessage(tt.in), limit)
			if len(out) > limit || !json.Valid(out) {
				t.Fatalf("%d bytes (limit %d), valid JSON: %v: %.300s", len(out), limit, json.Valid(out), out)
			}
			if !strings.HasPrefix(string(out), tt.wantPrefix) || !strings.Contains(string(out), tt.wantNote) {
				t.Errorf("got %.400s…\nwant it to start %s and hold %q", out, tt.wantPrefix, tt.wantNote)
			}
			var m map[string]any
			if json.Unmarshal(out, &m) != nil || !strings.Contains(fmt.Sprint(m[tool.TruncatedField]), fmt.Sprintf("was %d bytes", len(tt.in))) {
				t.Errorf("no truncation note saying the size: %.300s", out)
			}
		})
	}
	small := json.RawMessage(`{"success":true}`)
	if out := tool.BoundJSON(small, limit); string(out) != string(small) {
		t.Errorf("a value within the limit changed: %s", out)
	}
	if out := tool.BoundJSON(json.RawMessage(bigString), 10); len(out) > tool.MinResultBytes {
		t.Errorf("limit below MinResultBytes: %d bytes", len(out))
	}
}

func TestResultBounded(t *testing.T) {
	reg := registry(t, tool.Must(tool.New(tool.Spec{Name: "big", Description: "Returns a lot."},
		func(context.Context, struct{}) (echoOutput, error) {
			return echoOutput{Title: "big", Items: []echoItem{{Text: strings.Repeat("z", 1<<20)}}}, nil
		})))
	res := reg.Call(context.Background(), "big", nil)
	out := res.Bounded(tool.DefaultMaxResultBytes)
	if len(out) > tool.DefaultMaxResultBytes || !strings.HasPrefix(string(out), `{"success":true,"summary":"found big"`) {
		t.Errorf("bounded result of %d bytes: %.200s", len(out), out)
	}
	if len(res.JSON) < 1<<20 {
		t.Errorf("the registry's own envelope was cut (%d bytes); only surfaces bound it", len(res.JSON))
	}
}

func FuzzBoundJSON(f *testing.F) {
	f.Add([]byte(`{"a":"`+strings.Repeat("b", 3000)+`"}`), 1024)
	f.Add([]byte(`[`+strings.Repeat(`1,`, 2000)+`1]`), 1500)
	f.Add([]byte(`{"\u2028":"\ud800"}`), 0)
	f.Fuzz(func(t *testing.T, raw []byte, limit int) {
		limit = limit % (8 << 10)
		out := tool.BoundJSON(raw, limit)
		if len(raw) <= max(limit, tool.MinResultBytes) {
			if !bytes.Equal(out, raw) {
				t.Fatalf("a value within the limit changed")
			}
			return
		}
		if len(out) > max(limit, tool.MinResultBytes) || !json.Valid(out) {
			t.Fatalf("%d bytes for limit %d, valid %v: %q", len(out), limit, json.Valid(out), out)
		}
	})
}

// tail returns the end of a long message, for test failures.
func tail(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}

type rowsOutput struct {
	Rows []string `json:"rows"`
}

func (o rowsOutput) Summary() string { return fmt.Sprintf("%d rows", len(o.Rows)) }

func rowsTool(t *testing.T, rows []string) *tool.Tool {
	t.Helper()
	tl, err := tool.New(tool.Spec{Name: "rows", Description: "Rows.", Pack: "test"},
		func(context.Context, struct{}) (rowsOutput, error) { return rowsOutput{Rows: rows}, nil })
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// An output that holds one large string many times is small in memory and
// enormous as JSON: it fails with RESULT_TOO_LARGE before it is encoded, so
// the call allocates next to nothing (it used to encode 40 MiB, then decode
// it for the output check, then copy it into the envelope).
func TestOversizedOutputFailsBeforeEncoding(t *testing.T) {
	mib := strings.Repeat("x", 1<<20)
	rows := make([]string, 40) // 40 MiB as JSON, over DefaultMaxOutputBytes
	for i := range rows {
		rows[i] = mib
	}
	reg := registry(t, rowsTool(t, rows))
	reg.Call(context.Background(), "rows", []byte(`{}`)) // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := reg.Call(context.Background(), "rows", []byte(`{}`))
	runtime.ReadMemStats(&after)
	if res.OK() || res.Err.Code != tool.CodeResultTooLarge || res.Err.Retryable || res.Retried {
		t.Fatalf("want a RESULT_TOO_LARGE failure, not retried; got %.300s", res.JSON)
	}
	if !strings.Contains(res.Err.Message, fmt.Sprint(tool.DefaultMaxOutputBytes)) {
		t.Errorf("message %q does not name the bound", res.Err.Message)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("the refused call allocated %d KiB", alloc>>10)
	}
}

// The estimate is a lower bound; an output whose escapes make it larger
// than the bound is refused once encoded, and one within it is returned.
func TestOutputBoundCountsTheEncoding(t *testing.T) {
	controls := strings.Repeat("\x01", 600) // 600 bytes, 3,600 as JSON
	reg := tool.NewRegistry(tool.WithMaxOutputBytes(2 << 10))
	if err := reg.Register(rowsTool(t, []string{controls})); err != nil {
		t.Fatal(err)
	}
	if res := reg.Call(context.Background(), "rows", []byte(`{}`)); res.OK() || res.Err.Code != tool.CodeResultTooLarge {
		t.Fatalf("want RESULT_TOO_LARGE for 3,600 bytes of JSON over 2 KiB, got %.200s", res.JSON)
	}
	sub, err := reg.Select(nil, []string{"rows"})
	if err != nil {
		t.Fatal(err)
	}
	if res := sub.Call(context.Background(), "rows", []byte(`{}`)); res.OK() || res.Err.Code != tool.CodeResultTooLarge {
		t.Fatalf("a selected registry keeps the bound; got %.200s", res.JSON)
	}

	reg = tool.NewRegistry(tool.WithMaxOutputBytes(4 << 10))
	if err := reg.Register(rowsTool(t, []string{controls})); err != nil {
		t.Fatal(err)
	}
	if res := reg.Call(context.Background(), "rows", []byte(`{}`)); !res.OK() {
		t.Fatalf("3,600 bytes within a 4 KiB bound: %.200s", res.JSON)
	}
}

// TestAddSecretsScrubsLaterCalls: a key that arrives while the registry runs
// (set from the page's Settings) is scrubbed from the next call on, in the
// registry and in one derived from it before the key came.
func TestAddSecretsScrubsLaterCalls(t *testing.T) {
	const key = "sk-live-added-later-0987654321"
	srv := echoingUpstream(t)
	reg := tool.NewRegistry()
	if err := reg.Register(echoTool(t, srv.URL, key)); err != nil {
		t.Fatal(err)
	}
	offered, _ := reg.Available()
	if res := reg.Call(context.Background(), "echo", nil); !strings.Contains(string(res.JSON), key) {
		t.Fatalf("before the key was added the echo should show it (the test's premise): %s", res.JSON)
	}
	reg.AddSecrets(key)
	for name, r := range map[string]*tool.Registry{"registry": reg, "derived earlier": offered} {
		res := r.Call(context.Background(), "echo", nil)
		if !res.OK() || strings.Contains(string(res.JSON), key) || strings.Contains(res.Summary, key) ||
			!strings.Contains(string(res.JSON), "[REDACTED]") {
			t.Errorf("%s: the key added later is not scrubbed: %s", name, res.JSON)
		}
	}
}
