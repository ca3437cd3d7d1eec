package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// manyTools returns n definitions shaped like the packs' (a few typed,
// described properties), with schemas whose text depends on tag.
func manyTools(n int, tag string) []ToolDef {
	defs := make([]ToolDef, n)
	for i := range defs {
		defs[i] = ToolDef{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: "Does thing " + tag,
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["q"],`+
				`"properties":{"q":{"type":"string","description":"query %s"},"n":{"type":"integer","minimum":1,"maximum":20},`+
				`"lang":{"type":"string","enum":["en","fr","de"]}}}`, tag)),
		}
	}
	return defs
}

// A model call encodes the tool definitions once per tool set, not on every
// call: building the request of a repeated call allocates for its messages
// only, whatever the number of tools.
func TestParamsReuseEncodedTools(t *testing.T) {
	req := Request{System: "s", Messages: []Message{UserText("hi")}, Tools: manyTools(25, "a")}
	oa, err := NewOpenAI("m", Options{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	an, err := NewAnthropic("m", Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, build := range map[string]func() error{
		"openai":    func() error { _, _, err := oa.params(req); return err },
		"anthropic": func() error { _, _, err := an.params(req); return err },
	} {
		if err := build(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var failed error
		allocs := testing.AllocsPerRun(20, func() {
			if err := build(); err != nil {
				failed = err
			}
		})
		if failed != nil {
			t.Fatalf("%s: %v", name, failed)
		}
		// Decoding 25 schemas into maps alone costs hundreds of allocations.
		if allocs > 30 {
			t.Errorf("%s: %v allocations per request with 25 tools, want at most 30", name, allocs)
		}
	}
}

// The cache is keyed by the definitions' content: a caller that changes its
// slice in place gets the new definitions sent, never the old encoding.
func TestToolCacheFollowsContent(t *testing.T) {
	p, err := NewOpenAI("m", Options{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defs := manyTools(3, "first")
	encoded := func() string {
		t.Helper()
		params, tools, err := p.params(Request{Tools: defs})
		if err != nil {
			t.Fatal(err)
		}
		b, err := requestBody(params, tools)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Tools json.RawMessage }
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		return string(body.Tools)
	}
	if got := encoded(); !strings.Contains(got, "query first") {
		t.Fatalf("tools = %s", got)
	}
	copy(defs, manyTools(3, "second")) // same slice, new content
	if got := encoded(); !strings.Contains(got, "query second") || strings.Contains(got, "first") {
		t.Errorf("after an in-place change, tools = %s", got)
	}
	defs[1].Description = "renamed"
	if got := encoded(); !strings.Contains(got, `"renamed"`) {
		t.Errorf("after a description change, tools = %s", got)
	}
}

func TestToolCacheBounded(t *testing.T) {
	var c toolCache[int]
	builds := 0
	build := func(d []ToolDef) ([]int, error) { builds++; return []int{len(d)}, nil }
	for i := range 3 * maxToolSets {
		if _, err := c.get(manyTools(1, fmt.Sprint(i)), build); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.sets) != maxToolSets {
		t.Errorf("cache holds %d tool sets, want %d", len(c.sets), maxToolSets)
	}
	// The most recent set is kept and reused.
	builds = 0
	if _, err := c.get(manyTools(1, fmt.Sprint(3*maxToolSets-1)), build); err != nil || builds != 0 {
		t.Errorf("recent set rebuilt (builds %d, err %v)", builds, err)
	}
}

// A bad schema fails the request with the tool's name and is not cached.
func TestToolCacheBadSchema(t *testing.T) {
	p, err := NewAnthropic("m", Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	bad := []ToolDef{{Name: "broken", InputSchema: json.RawMessage(`{"type":`)}}
	for range 2 {
		if _, _, err := p.params(Request{Tools: bad}); err == nil || !strings.Contains(err.Error(), "broken") {
			t.Errorf("err = %v, want an error naming the tool", err)
		}
	}
	if len(p.tools.sets) != 0 {
		t.Errorf("a failed build was cached")
	}
}

// rawParams is a request as an SDK encodes it.
type rawParams string

func (r rawParams) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// The body holds what the SDK encoded, "stream": true first, and the tools
// as encoded, each key once.
func TestRequestBody(t *testing.T) {
	tools := []json.RawMessage{json.RawMessage(`{"name":"a","x":"<&>"}`), json.RawMessage(`{"name":"b"}`)}
	for _, tc := range []struct {
		name   string
		params string
		tools  []json.RawMessage
		want   string
	}{
		{"params and tools", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, tools,
			`{"stream":true,"tools":[{"name":"a","x":"<&>"},{"name":"b"}],"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"no tools", `{"model":"m"}`, nil, `{"stream":true,"model":"m"}`},
		{"empty params", ` {} `, tools[1:], `{"stream":true,"tools":[{"name":"b"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := requestBody(rawParams(tc.params), tc.tools)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body = %s\nwant   %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("body is not JSON: %s", got)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"a":1`} {
		if _, err := requestBody(rawParams(bad), tools); err == nil {
			t.Errorf("params %q: no error", bad)
		}
	}
}
