package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolport/toolport/tool"
)

type echoOut struct {
	Args map[string]any `json:"args"`
}

func (echoOut) Summary() string { return "echoed" }

func rawEcho(t *testing.T, name, schema string) *tool.Tool {
	t.Helper()
	tl, err := tool.NewRaw(tool.Spec{Name: name, Description: "echoes its arguments"}, json.RawMessage(schema),
		func(_ context.Context, args json.RawMessage) (echoOut, error) {
			var out echoOut
			err := json.Unmarshal(args, &out.Args)
			return out, err
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestNewRawChecksArgumentsAgainstTheGivenSchema(t *testing.T) {
	reg := tool.NewRegistry()
	// A schema schemacheck implements: checked in full, defaults applied.
	strict := rawEcho(t, "strict", `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"integer","maximum":3,"default":1}},"required":["s"],"additionalProperties":false}`)
	// A draft-07 schema with oneOf: only "is an object" is checked here; the
	// server behind the tool checks the rest.
	lenient := rawEcho(t, "lenient", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`)
	if err := reg.Register(strict, lenient); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		wantOK           bool
		wantInJSON       string
	}{
		{"valid, default applied", "strict", `{"s":"x"}`, true, `"n":1`},
		{"over maximum", "strict", `{"s":"x","n":9}`, false, `must be <= 3`},
		{"missing required", "strict", `{}`, false, `s: required`},
		{"unknown field", "strict", `{"s":"x","zz":1}`, false, `unknown field`},
		{"lenient takes any object", "lenient", `{"a":[1],"b":true}`, true, `"b":true`},
		{"lenient still wants an object", "lenient", `[1]`, false, `must be a JSON object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := reg.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			if res.OK() != tc.wantOK || !strings.Contains(string(res.JSON), tc.wantInJSON) {
				t.Fatalf("ok=%v %s; want ok=%v and %q", res.OK(), res.JSON, tc.wantOK, tc.wantInJSON)
			}
		})
	}
	if got, _ := json.Marshal(lenient.InputSchema()); !strings.Contains(string(got), "oneOf") {
		t.Errorf("the published schema is not the one given: %s", got)
	}
}

func TestNewRawRefusesBadSchemas(t *testing.T) {
	fn := func(context.Context, json.RawMessage) (echoOut, error) { return echoOut{}, nil }
	for name, schema := range map[string]string{
		"not an object type": `{"type":"string"}`,
		"not JSON":           `{"type":`,
		"too large":          `{"type":"object","description":"` + strings.Repeat("x", tool.MaxRawSchemaBytes) + `"}`,
	} {
		if _, err := tool.NewRaw(tool.Spec{Name: "x", Description: "d"}, json.RawMessage(schema), fn); err == nil {
			t.Errorf("%s: NewRaw accepted it", name)
		}
	}
}

func TestUnregister(t *testing.T) {
	reg := tool.NewRegistry()
	a, b, c := rawEcho(t, "a", ""), rawEcho(t, "b", ""), rawEcho(t, "c", "")
	if err := reg.Register(a, b, c); err != nil {
		t.Fatal(err)
	}
	before, _ := reg.Select(nil, nil)
	reg.Unregister("b", "not-there")
	var names []string
	for _, tl := range reg.Tools() {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "a,c" {
		t.Fatalf("tools after Unregister(b) = %v", names)
	}
	if res := reg.Call(context.Background(), "b", nil); res.OK() || res.Err.Code != tool.CodeUnknownTool {
		t.Fatalf("calling an unregistered tool: %s", res.JSON)
	}
	if _, ok := before.Lookup("b"); !ok {
		t.Error("a registry selected before Unregister lost the tool")
	}
	if err := reg.Register(rawEcho(t, "b", "")); err != nil {
		t.Fatalf("registering the name again: %v", err)
	}
}
