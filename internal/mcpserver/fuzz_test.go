package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/tool"
)

type fuzzIn struct {
	Query string   `json:"query" schema:"minLength=2,maxLength=50"`
	Count int      `json:"count,omitempty" schema:"minimum=1,maximum=20,default=5"`
	Sort  string   `json:"sort,omitempty" schema:"enum=asc|desc"`
	Tags  []string `json:"tags,omitempty" schema:"maxItems=3"`
}

type fuzzOut struct {
	Query string `json:"query"`
	Count int    `json:"count"`
}

func (o fuzzOut) Summary() string { return o.Query }

// FuzzCallArguments feeds untrusted argument bytes, as a client sends them,
// through the tools/call handler: whatever arrives, the outcome is a tool
// result (never a protocol error or a panic), and its shape is the contract's.
func FuzzCallArguments(f *testing.F) {
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(tool.Must(tool.New(tool.Spec{Name: "search", Description: "d"},
		func(ctx context.Context, in fuzzIn) (fuzzOut, error) {
			return fuzzOut{Query: in.Query, Count: in.Count}, nil
		})))
	h := &handler{all: reg, maxText: 256, svc: &service{}}
	h.reg.Store(reg)
	for _, seed := range []string{
		`{"query":"go"}`, `{"query":"go","count":50}`, `{"query":"g","sort":"up","tags":["a","b","c","d"]}`,
		``, `null`, `[]`, `"x"`, `{"query":"go","bogus":true}`, `{"query":"\u00e9\u00e9"}`, `{"count":1e400}`, `{`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, args string) {
		res, err := h.call(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "search", Arguments: json.RawMessage(args)}})
		if err != nil || res == nil {
			t.Fatalf("protocol error %v / nil result for %q", err, args)
		}
		if len(res.Content) == 0 {
			t.Fatalf("no text content for %q", args)
		}
		last, ok := res.Content[len(res.Content)-1].(*mcp.TextContent)
		if !ok {
			t.Fatalf("last content is %T", res.Content[len(res.Content)-1])
		}
		var env struct {
			Success *bool  `json:"success"`
			Code    string `json:"error_code"`
		}
		if len(last.Text) < 256 { // longer renderings are cut, hence not JSON
			if err := json.Unmarshal([]byte(last.Text), &env); err != nil || env.Success == nil {
				t.Fatalf("text JSON %q is not an envelope: %v", last.Text, err)
			}
			if *env.Success == res.IsError {
				t.Fatalf("isError %v but envelope success %v", res.IsError, *env.Success)
			}
		}
		if res.IsError {
			if res.StructuredContent != nil {
				t.Fatalf("structuredContent on an error for %q", args)
			}
			return
		}
		raw, ok := res.StructuredContent.(json.RawMessage)
		if !ok || !json.Valid(raw) {
			t.Fatalf("structuredContent %v is not JSON", res.StructuredContent)
		}
	})
}
