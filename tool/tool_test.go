package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolport/toolport/tool"
)

type searchInput struct {
	Query   string   `json:"query" jsonschema:"The search query" schema:"minLength=2"`
	Rows    int      `json:"rows,omitempty" jsonschema:"Rows to return" schema:"minimum=1,maximum=1000,default=10"`
	Sort    string   `json:"sort,omitempty" schema:"enum=asc|desc,default=asc"`
	Tags    []string `json:"tags,omitempty" schema:"maxItems=3,items.enum=a|b|c|d"`
	Filters *filters `json:"filters,omitempty"`
}

type filters struct {
	Year  int  `json:"year,omitempty" schema:"minimum=1900,default=2000"`
	Exact bool `json:"exact,omitempty"`
}

type searchOutput struct {
	Echo  searchInput `json:"echo"`
	Total int         `json:"total"`
}

func (o searchOutput) Summary() string { return fmt.Sprintf("%d results", o.Total) }

func newSearch(t *testing.T, fn tool.Func[searchInput, searchOutput]) *tool.Tool {
	t.Helper()
	if fn == nil {
		fn = func(_ context.Context, in searchInput) (searchOutput, error) {
			return searchOutput{Echo: in, Total: in.Rows}, nil
		}
	}
	tl, err := tool.New(tool.Spec{Name: "search", Description: "Searches.", Pack: "test"}, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func registry(t *testing.T, tools ...*tool.Tool) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond))
	if err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestSchemaCarriesTagConstraints(t *testing.T) {
	s := newSearch(t, nil).InputSchema()
	raw, _ := json.Marshal(s)
	for _, want := range []string{
		`"query":{"type":"string","description":"The search query","minLength":2}`,
		`"rows":{"type":"integer","description":"Rows to return","default":10,"minimum":1,"maximum":1000}`,
		`"enum":["asc","desc"]`,
		`"maxItems":3`,
		`"required":["query"]`,
		`"additionalProperties":false`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("schema lacks %s:\n%s", want, raw)
		}
	}
	if strings.Contains(string(raw), `"null"`) {
		t.Errorf("input schema should not publish null types: %s", raw)
	}
}

func TestCallValidatesAndAppliesDefaults(t *testing.T) {
	reg := registry(t, newSearch(t, nil))
	tests := []struct {
		name, args string
		wantErr    string // "" means success
		check      func(t *testing.T, in searchInput)
	}{
		{name: "defaults applied", args: `{"query":"trains"}`, check: func(t *testing.T, in searchInput) {
			if in.Rows != 10 || in.Sort != "asc" {
				t.Errorf("defaults not applied: %+v", in)
			}
		}},
		{name: "nested defaults applied when object present", args: `{"query":"trains","filters":{}}`, check: func(t *testing.T, in searchInput) {
			if in.Filters == nil || in.Filters.Year != 2000 {
				t.Errorf("nested default not applied: %+v", in.Filters)
			}
		}},
		{name: "explicit value kept", args: `{"query":"trains","rows":5}`, check: func(t *testing.T, in searchInput) {
			if in.Rows != 5 {
				t.Errorf("rows = %d", in.Rows)
			}
		}},
		{name: "empty arguments mean {}", args: ``, wantErr: "query: required"},
		{name: "maximum", args: `{"query":"trains","rows":10000}`, wantErr: "rows: must be <= 1000, got 10000"},
		{name: "minimum", args: `{"query":"trains","rows":0}`, wantErr: "rows: must be >= 1, got 0"},
		{name: "wrong type", args: `{"query":"trains","rows":"ten"}`, wantErr: `rows: expected integer, got string "ten"`},
		{name: "fraction for integer", args: `{"query":"trains","rows":1.5}`, wantErr: "rows: expected integer, got number 1.5"},
		{name: "enum", args: `{"query":"trains","sort":"up"}`, wantErr: `sort: must be one of "asc", "desc", got "up"`},
		{name: "minLength", args: `{"query":"t"}`, wantErr: "query: must be at least 2 characters, got 1"},
		{name: "maxItems", args: `{"query":"tt","tags":["a","b","c","d"]}`, wantErr: "tags: must have at most 3 items, got 4"},
		{name: "array item type", args: `{"query":"tt","tags":["a",2]}`, wantErr: "tags[1]: expected string, got number 2"},
		{name: "array item enum", args: `{"query":"tt","tags":["a","z"]}`, wantErr: `tags[1]: must be one of "a", "b", "c", "d", got "z"`},
		{name: "nested path", args: `{"query":"tt","filters":{"year":1800}}`, wantErr: "filters.year: must be >= 1900, got 1800"},
		{name: "unknown field", args: `{"query":"tt","limit":3}`, wantErr: "limit: unknown field (known fields: query, rows, sort, tags, filters)"},
		{name: "not an object", args: `["tt"]`, wantErr: "arguments: must be a JSON object, got array"},
		{name: "malformed JSON", args: `{"query":`, wantErr: "arguments: not valid JSON"},
		{name: "several violations", args: `{"rows":"x","sort":1}`, wantErr: `query: required; rows: expected integer, got string "x"; sort: expected string, got number 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := reg.Call(context.Background(), "search", json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if !res.OK() {
					t.Fatalf("unexpected failure: %s", res.JSON)
				}
				tt.check(t, res.Value.(searchOutput).Echo)
				return
			}
			if res.OK() {
				t.Fatalf("want failure %q, got %s", tt.wantErr, res.JSON)
			}
			if res.Err.Code != tool.CodeValidation || !strings.Contains(res.Err.Message, tt.wantErr) {
				t.Errorf("got %s %q, want VALIDATION containing %q", res.Err.Code, res.Err.Message, tt.wantErr)
			}
			var env map[string]any
			if err := json.Unmarshal(res.JSON, &env); err != nil {
				t.Fatal(err)
			}
			if env["success"] != false || env["error_code"] != "VALIDATION" || env["retryable"] != false {
				t.Errorf("failure envelope: %s", res.JSON)
			}
		})
	}
}

func TestValidationHappensBeforeTheToolRuns(t *testing.T) {
	var calls atomic.Int32
	reg := registry(t, newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		calls.Add(1)
		return searchOutput{}, nil
	}))
	reg.Call(context.Background(), "search", json.RawMessage(`{"query":"x"}`))
	if calls.Load() != 0 {
		t.Fatal("tool ran on invalid input")
	}
}

func TestSuccessEnvelope(t *testing.T) {
	reg := registry(t, newSearch(t, nil))
	res := reg.Call(context.Background(), "search", json.RawMessage(`{"query":"trains","rows":3}`))
	if !res.OK() {
		t.Fatal(res.JSON)
	}
	if !strings.HasPrefix(string(res.JSON), `{"success":true,"summary":"3 results","durationMs":`) {
		t.Errorf("envelope should lead with success, summary, durationMs: %s", res.JSON)
	}
	var env map[string]any
	if err := json.Unmarshal(res.JSON, &env); err != nil {
		t.Fatalf("envelope is not JSON: %v\n%s", err, res.JSON)
	}
	if env["total"] != 3.0 {
		t.Errorf("tool fields missing from envelope: %s", res.JSON)
	}
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		failures  []error // returned by successive attempts, then success
		wantCalls int32
		wantOK    bool
		retried   bool
		code      tool.Code
	}{
		{name: "transient then success", failures: []error{tool.HTTPStatusError(503, 0, "")}, wantCalls: 2, wantOK: true, retried: true},
		{name: "network error then success", failures: []error{&net.OpError{Op: "dial", Err: errors.New("connection refused")}}, wantCalls: 2, wantOK: true, retried: true},
		{name: "429 with short Retry-After", failures: []error{tool.HTTPStatusError(429, 2*time.Millisecond, "")}, wantCalls: 2, wantOK: true, retried: true},
		{name: "retried only once", failures: []error{tool.HTTPStatusError(502, 0, ""), tool.HTTPStatusError(502, 0, "")}, wantCalls: 2, retried: true, code: tool.CodeHTTP},
		{name: "429 with long Retry-After not waited for", failures: []error{tool.HTTPStatusError(429, time.Hour, "")}, wantCalls: 1, code: tool.CodeRateLimit},
		{name: "auth never retried", failures: []error{tool.HTTPStatusError(401, 0, "")}, wantCalls: 1, code: tool.CodeAuthInvalid},
		{name: "validation never retried", failures: []error{tool.Errorf(tool.CodeValidation, "bad")}, wantCalls: 1, code: tool.CodeValidation},
		{name: "plain error is internal", failures: []error{errors.New("boom at https://x/?key=secret")}, wantCalls: 1, code: tool.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			reg := registry(t, newSearch(t, func(_ context.Context, in searchInput) (searchOutput, error) {
				n := calls.Add(1)
				if int(n) <= len(tt.failures) {
					return searchOutput{}, tt.failures[n-1]
				}
				return searchOutput{Echo: in, Total: 1}, nil
			}))
			res := reg.Call(context.Background(), "search", json.RawMessage(`{"query":"trains"}`))
			if calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if res.OK() != tt.wantOK || res.Retried != tt.retried {
				t.Errorf("ok=%v retried=%v, want %v %v: %s", res.OK(), res.Retried, tt.wantOK, tt.retried, res.JSON)
			}
			if !tt.wantOK {
				if res.Err.Code != tt.code {
					t.Errorf("code = %s, want %s", res.Err.Code, tt.code)
				}
				if strings.Contains(string(res.JSON), "secret") {
					t.Errorf("an unclassified error's text leaked: %s", res.JSON)
				}
				var env struct{ WasRetried bool }
				json.Unmarshal(res.JSON, &env)
				if env.WasRetried != tt.retried {
					t.Errorf("wasRetried = %v in %s", env.WasRetried, res.JSON)
				}
			}
		})
	}
}

func TestRetryWaitHonoursCancellation(t *testing.T) {
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Hour))
	reg.Register(newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		return searchOutput{}, tool.HTTPStatusError(503, 0, "")
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *tool.Result)
	go func() { done <- reg.Call(ctx, "search", json.RawMessage(`{"query":"trains"}`)) }()
	cancel()
	res := <-done // would block for an hour if the wait ignored ctx
	if res.OK() || res.Retried {
		t.Fatalf("want a failure without retry, got %s", res.JSON)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	reg := registry(t, newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		var s []int
		_ = s[len(s)] // panics: index out of range
		return searchOutput{}, nil
	}))
	res := reg.Call(context.Background(), "search", json.RawMessage(`{"query":"trains"}`))
	if res.OK() || res.Err.Code != tool.CodeInternal {
		t.Fatalf("got %s", res.JSON)
	}
}

func TestUnknownTool(t *testing.T) {
	res := registry(t).Call(context.Background(), "nope", nil)
	if res.OK() || res.Err.Code != tool.CodeUnknownTool {
		t.Fatalf("got %s", res.JSON)
	}
}

type scoredOutput struct {
	Score int `json:"score" schema:"minimum=0,maximum=1"`
}

func (scoredOutput) Summary() string { return "scored" }

func TestOutputIsValidated(t *testing.T) {
	type in struct {
		Score int `json:"score"`
	}
	tl := tool.Must(tool.New(tool.Spec{Name: "score", Description: "Echoes a score."},
		func(_ context.Context, in in) (scoredOutput, error) { return scoredOutput(in), nil }))
	reg := registry(t, tl)
	if res := reg.Call(context.Background(), "score", json.RawMessage(`{"score":1}`)); !res.OK() {
		t.Fatalf("valid output rejected: %s", res.JSON)
	}
	res := reg.Call(context.Background(), "score", json.RawMessage(`{"score":7}`))
	if res.OK() || res.Err.Code != tool.CodeParse || !strings.Contains(res.Err.Message, "score: must be <= 1, got 7") {
		t.Fatalf("invalid output passed or was misreported: %s", res.JSON)
	}
}

func TestSecretsAreScrubbed(t *testing.T) {
	const key = "sk-live-1234567890"
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	reg := tool.NewRegistry(tool.WithSecrets(key), tool.WithTracerProvider(tp), tool.WithRetryDelay(0))
	reg.Register(newSearch(t, func(context.Context, searchInput) (searchOutput, error) {
		return searchOutput{}, tool.Errorf(tool.CodeAuthInvalid, "key %s rejected", key)
	}))
	res := reg.Call(context.Background(), "search", json.RawMessage(`{"query":"`+key+`"}`))
	if strings.Contains(string(res.JSON), key) || strings.Contains(res.Err.Message, key) {
		t.Errorf("secret in result: %s", res.JSON)
	}
	for _, s := range exp.GetSpans() {
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.String(), key) {
				t.Errorf("secret in span attribute %s", a.Key)
			}
		}
		if strings.Contains(s.Status.Description, key) {
			t.Errorf("secret in span status")
		}
	}
}

func TestEveryCallIsTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	reg := tool.NewRegistry(tool.WithTracerProvider(tp), tool.WithRetryDelay(0))
	reg.Register(newSearch(t, nil))
	reg.Call(context.Background(), "search", json.RawMessage(`{"query":"trains"}`))
	reg.Call(context.Background(), "search", json.RawMessage(`{"query":"t"}`))

	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	attrs := func(s tracetest.SpanStub) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes {
			m[string(a.Key)] = a.Value.String()
		}
		return m
	}
	ok, bad := attrs(spans[0]), attrs(spans[1])
	if spans[0].Name != "tool-search" {
		t.Errorf("span name %q", spans[0].Name)
	}
	if ok["tool.input"] != `{"query":"trains"}` || ok["tool.result.size"] == "" || ok["tool.duration_ms"] == "" {
		t.Errorf("success span attributes: %v", ok)
	}
	if bad["tool.error_code"] != "VALIDATION" || spans[1].Status.Description == "" {
		t.Errorf("failure span: %v %v", bad, spans[1].Status)
	}
}

func TestDefinitionFormats(t *testing.T) {
	tl := newSearch(t, nil)
	tests := []struct {
		format tool.Format
		want   []string
	}{
		{tool.FormatIkigai, []string{`"name":"search"`, `"parameters":{"type":"object"`}},
		{tool.FormatAnthropic, []string{`"input_schema":{"type":"object"`}},
		{tool.FormatOpenAI, []string{`"type":"function"`, `"function":{"name":"search"`, `"parameters":{`}},
		{tool.FormatMCP, []string{`"inputSchema":{`, `"outputSchema":{`, `"readOnlyHint":false`, `"success":{`}},
		{tool.FormatOpenAIResponses, []string{`{"type":"function","name":"search","description":"Searches.","parameters":{"type":"object"`, `"strict":false}`}},
		{tool.FormatGemini, []string{`{"name":"search","description":"Searches.","parameters":{"type":"OBJECT"`}},
	}
	for _, tt := range tests {
		d, err := tl.Definition(tt.format)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(d)
		for _, w := range tt.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s definition lacks %s:\n%s", tt.format, w, raw)
			}
		}
	}
	if _, err := tl.Definition("yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestSelect(t *testing.T) {
	a := tool.Must(tool.New(tool.Spec{Name: "a", Description: "A.", Pack: "p1"}, func(context.Context, searchInput) (searchOutput, error) { return searchOutput{}, nil }))
	b := tool.Must(tool.New(tool.Spec{Name: "b", Description: "B.", Pack: "p2"}, func(context.Context, searchInput) (searchOutput, error) { return searchOutput{}, nil }))
	reg := registry(t, a, b)
	names := func(r *tool.Registry) (out []string) {
		for _, t := range r.Tools() {
			out = append(out, t.Name())
		}
		return out
	}
	sub, err := reg.Select([]string{"p2"}, nil)
	if err != nil || fmt.Sprint(names(sub)) != "[b]" {
		t.Errorf("by pack: %v %v", names(sub), err)
	}
	sub, err = reg.Select(nil, []string{"a"})
	if err != nil || fmt.Sprint(names(sub)) != "[a]" {
		t.Errorf("by name: %v %v", names(sub), err)
	}
	if _, err := reg.Select(nil, []string{"c"}); err == nil {
		t.Error("unknown tool name accepted")
	}
	if _, err := reg.Select([]string{"p3"}, nil); err == nil {
		t.Error("unknown pack accepted")
	}
	if err := reg.Register(a); err == nil {
		t.Error("duplicate registration accepted")
	}
}

func TestAvailable(t *testing.T) {
	noop := func(context.Context, searchInput) (searchOutput, error) { return searchOutput{}, nil }
	key := ""
	always := tool.Must(tool.New(tool.Spec{Name: "always", Description: "A.", Pack: "p"}, noop))
	keyed := tool.Must(tool.New(tool.Spec{Name: "keyed", Description: "K.", Pack: "p", Available: func() error {
		if key == "" {
			return errors.New("KEY is not set")
		}
		return nil
	}}, noop))
	reg := registry(t, always, keyed)
	if got := keyed.Unavailable(); got != "KEY is not set" {
		t.Errorf("keyed.Unavailable() = %q", got)
	}
	if got := always.Unavailable(); got != "" {
		t.Errorf("always.Unavailable() = %q", got)
	}
	sub, left := reg.Available()
	if len(sub.Tools()) != 1 || sub.Tools()[0].Name() != "always" || fmt.Sprint(left) != "[keyed]" {
		t.Errorf("without the key: %d tools, left out %v", len(sub.Tools()), left)
	}
	if _, ok := sub.Lookup("keyed"); ok {
		t.Error("an unavailable tool can be looked up in the available registry")
	}
	key = "set" // availability is asked when the registry is made
	if sub, left = reg.Available(); len(sub.Tools()) != 2 || len(left) != 0 {
		t.Errorf("with the key: %d tools, left out %v", len(sub.Tools()), left)
	}
}

func TestProgressReachesListener(t *testing.T) {
	reg := registry(t, newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
		tool.ReportProgress(ctx, tool.Progress{Done: 1, Total: 2, Message: "half"})
		return searchOutput{}, nil
	}))
	var got []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
	reg.Call(ctx, "search", json.RawMessage(`{"query":"trains"}`))
	if len(got) != 1 || got[0].Message != "half" {
		t.Errorf("progress = %+v", got)
	}
	tool.ReportProgress(context.Background(), tool.Progress{}) // no listener: no-op
}

// A progress message reaches a person or a model as a result does: it is
// scrubbed of the registry's secrets the same way.
func TestProgressIsScrubbed(t *testing.T) {
	const key = "sk-progress-secret-0123456789"
	reg := tool.NewRegistry(tool.WithSecrets(key))
	if err := reg.Register(newSearch(t, func(ctx context.Context, in searchInput) (searchOutput, error) {
		tool.ReportProgress(ctx, tool.Progress{Done: 1, Message: "asked with " + key})
		return searchOutput{}, nil
	})); err != nil {
		t.Fatal(err)
	}
	var got []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
	reg.Call(ctx, "search", json.RawMessage(`{"query":"trains"}`))
	if len(got) != 1 || strings.Contains(got[0].Message, key) || !strings.Contains(got[0].Message, "[REDACTED]") {
		t.Errorf("progress = %+v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"-1", 0},
		{"99999999999999999999", 365 * 24 * time.Hour}, // more seconds than an int64 holds: longer than the cap
		{"9999999999999", 365 * 24 * time.Hour},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http1123), 90 * time.Second},
		{now.Add(-time.Minute).Format(http1123), 0},
	}
	for _, tt := range tests {
		h := map[string][]string{}
		if tt.header != "" {
			h["Retry-After"] = []string{tt.header}
		}
		if got := tool.ParseRetryAfter(h, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

type textOutput string

func (o textOutput) Summary() string { return string(o) }

func TestNewRejectsBadDeclarations(t *testing.T) {
	type badTag struct {
		N int `json:"n" schema:"maximum=lots"`
	}
	// A bad tag shows when the schema is built (on first use): CheckSchemas
	// fails, and so does every call, rather than run unchecked.
	bad, err := tool.New(tool.Spec{Name: "x", Description: "X."}, func(context.Context, badTag) (searchOutput, error) { return searchOutput{}, nil })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := bad.CheckSchemas(); err == nil || !strings.Contains(err.Error(), "maximum") {
		t.Errorf("CheckSchemas of a bad schema tag = %v", err)
	}
	reg := tool.NewRegistry()
	if err := reg.Register(bad); err != nil {
		t.Fatal(err)
	}
	if res := reg.Call(context.Background(), "x", []byte(`{"n":1}`)); res.Err == nil || res.Err.Code != tool.CodeValidation {
		t.Errorf("call with a schema that cannot be built = %+v, want a VALIDATION error", res)
	}
	if _, err := tool.New(tool.Spec{Name: "x", Description: "X."}, func(context.Context, searchInput) (textOutput, error) { return "", nil }); err == nil {
		t.Error("non-struct output accepted")
	}
	if _, err := tool.New(tool.Spec{Name: "x", Description: "X."}, func(context.Context, string) (searchOutput, error) { return searchOutput{}, nil }); err == nil {
		t.Error("non-struct input accepted")
	}
	if _, err := tool.New(tool.Spec{Name: "", Description: "X."}, func(context.Context, searchInput) (searchOutput, error) { return searchOutput{}, nil }); err == nil {
		t.Error("nameless tool accepted")
	}
}

func FuzzCallArguments(f *testing.F) {
	for _, s := range []string{`{"query":"trains"}`, `{"query":"tt","rows":1e400}`, `{"filters":{"year":"x"}}`, `[]`, `null`, `{"query":"tt","tags":[[[[]]]]}`, "\xff"} {
		f.Add([]byte(s))
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(tool.Must(tool.New(tool.Spec{Name: "search", Description: "S."}, func(_ context.Context, in searchInput) (searchOutput, error) {
		return searchOutput{Echo: in}, nil
	})))
	f.Fuzz(func(t *testing.T, args []byte) {
		res := reg.Call(context.Background(), "search", args)
		if !json.Valid(res.JSON) {
			t.Fatalf("envelope is not JSON: %q", res.JSON)
		}
		if !res.OK() && res.Err.Code != tool.CodeValidation {
			t.Fatalf("bad arguments gave %s: %s", res.Err.Code, res.JSON)
		}
	})
}
