package llm_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

func TestBlockJSON(t *testing.T) {
	tests := []struct {
		name  string
		block llm.Block
		want  string
	}{
		{"text", llm.Text("hi \"there\""), `{"type":"text","text":"hi \"there\""}`},
		{"tool_use", llm.ToolUse("toolu_1", "tidalSearch", json.RawMessage(`{"query":"jazz","limit":5}`)),
			`{"type":"tool_use","id":"toolu_1","name":"tidalSearch","input":{"query":"jazz","limit":5}}`},
		{"tool_use without input", llm.ToolUse("toolu_2", "getWaiterName", nil),
			`{"type":"tool_use","id":"toolu_2","name":"getWaiterName","input":{}}`},
		{"tool_result", llm.ToolResult("toolu_1", json.RawMessage(`{"success":true,"summary":"3 tracks"}`), false),
			`{"type":"tool_result","tool_use_id":"toolu_1","content":{"success":true,"summary":"3 tracks"}}`},
		{"failed tool_result", llm.ToolResult("toolu_1", json.RawMessage(`{"success":false,"error":"x"}`), true),
			`{"type":"tool_result","tool_use_id":"toolu_1","content":{"success":false,"error":"x"},"is_error":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.block)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("encoded\n got %s\nwant %s", got, tt.want)
			}
			var back llm.Block
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tt.want {
				t.Errorf("round trip changed it: %s", again)
			}
		})
	}
}

func TestDecodeBlocks(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []llm.Block
		wantErr string
	}{
		{"all three kinds, unknown fields ignored",
			`[{"type":"text","text":"a","citations":null},{"type":"tool_use","id":"t","name":"n","input":{"x":1},"cache_control":{}},{"type":"tool_result","tool_use_id":"t","content":"ok"}]`,
			[]llm.Block{llm.Text("a"), llm.ToolUse("t", "n", json.RawMessage(`{"x":1}`)), llm.ToolResult("t", json.RawMessage(`"ok"`), false)}, ""},
		{"missing and null input mean {}", `[{"type":"tool_use","id":"t","name":"n"},{"type":"tool_use","id":"u","name":"n","input":null}]`,
			[]llm.Block{llm.ToolUse("t", "n", json.RawMessage(`{}`)), llm.ToolUse("u", "n", json.RawMessage(`{}`))}, ""},
		{"null content", `[{"type":"tool_result","tool_use_id":"t","content":null,"is_error":true}]`,
			[]llm.Block{llm.ToolResult("t", nil, true)}, ""},
		{"null array", `null`, nil, ""},
		{"unknown type is rejected", `[{"type":"image","source":{}}]`, nil, `unsupported content block type "image"`},
		{"no type", `[{"text":"a"}]`, nil, `no "type"`},
		{"text without text", `[{"type":"text"}]`, nil, `no "text"`},
		{"tool_use without id", `[{"type":"tool_use","name":"n","input":{}}]`, nil, `non-empty "id"`},
		{"tool_use input not an object", `[{"type":"tool_use","id":"t","name":"n","input":[1]}]`, nil, "must be a JSON object"},
		{"tool_result without tool_use_id", `[{"type":"tool_result","content":"x"}]`, nil, "tool_use_id"},
		{"not an array", `{"type":"text","text":"a"}`, nil, "cannot unmarshal"},
		{"broken JSON", `[{"type":"text",`, nil, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.DecodeBlocks([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMessageJSON(t *testing.T) {
	var m llm.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"plain text"}`), &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, llm.UserText("plain text")) {
		t.Errorf("string content decoded as %+v", m)
	}
	b, _ := json.Marshal(m)
	if string(b) != `{"role":"user","content":[{"type":"text","text":"plain text"}]}` {
		t.Errorf("encoded %s", b)
	}
	if err := json.Unmarshal([]byte(`{"role":"system","content":[]}`), &m); err == nil || !strings.Contains(err.Error(), `role "system"`) {
		t.Errorf("err = %v, want a role error", err)
	}
}

func TestMarshalRejectsInvalidRawJSON(t *testing.T) {
	for _, b := range []llm.Block{
		llm.ToolUse("t", "n", json.RawMessage(`{"a":`)),
		llm.ToolResult("t", json.RawMessage(`nope`), false),
		{Type: "image"},
	} {
		if _, err := json.Marshal(b); err == nil {
			t.Errorf("%+v encoded without error", b)
		}
	}
}

// FuzzDecodeBlocks: stored content never panics the decoder, and whatever
// decodes encodes back to something that decodes to the same blocks.
func FuzzDecodeBlocks(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"a"}]`,
		`[{"type":"tool_use","id":"t","name":"n","input":{"x":[1,2,{"y":null}]}}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":{"success":false},"is_error":true}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":"s"},{"type":"tool_use","id":"t","name":"n","input":  {} }]`,
		`null`, `[]`, `[{"type":"x"}]`, `[{"type":"tool_use","id":"t","name":"n","input":" {}"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := llm.DecodeBlocks(data)
		if err != nil {
			return
		}
		enc, err := json.Marshal(blocks)
		if err != nil {
			t.Fatalf("decoded blocks do not encode: %v", err)
		}
		again, err := llm.DecodeBlocks(enc)
		if err != nil {
			t.Fatalf("re-encoded blocks do not decode: %v\n%s", err, enc)
		}
		enc2, _ := json.Marshal(again)
		if string(enc) != string(enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}
