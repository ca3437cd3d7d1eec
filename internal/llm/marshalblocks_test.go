package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// TestMarshalBlocksSameAsMarshal: MarshalBlocks writes json.Marshal's bytes,
// and a tool result's content is written as json.Marshal writes a
// json.RawMessage: compacted, HTML characters escaped, blank as null.
func TestMarshalBlocksSameAsMarshal(t *testing.T) {
	contents := map[string]string{
		"compact":         `{"success":true,"data":{"tracks":[1,2]}}`,
		"spaced":          " { \"a\" : [ 1 , 2 ],\n\t\"b\": \"x  y\" } ",
		"html characters": `{"summary":"<b>rock & roll</b>"}`,
		"line separators": "{\"text\":\"a\u2028b\u2029c\"}",
		"blank":           "  ",
		"string":          `"just text"`,
	}
	for name, content := range contents {
		t.Run(name, func(t *testing.T) {
			blocks := []llm.Block{
				llm.Text("calm <piano> & rain"),
				llm.ToolUse("call_1", "semanticSearch", json.RawMessage(`{"query":"piano"}`)),
				llm.ToolResult("call_1", json.RawMessage(content), name == "string"),
			}
			got, err := llm.MarshalBlocks(blocks)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(blocks)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			// The tool result as a struct with a json.RawMessage writes it.
			raw := json.RawMessage(`null`)
			if c := []byte(content); json.Valid(c) {
				raw = c
			}
			ref, err := json.Marshal(struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error,omitempty"`
			}{"tool_result", "call_1", raw, name == "string"})
			if err != nil {
				t.Fatal(err)
			}
			if enc, _ := blocks[2].MarshalJSON(); string(enc) != string(ref) {
				t.Errorf("tool_result\n got %s\nwant %s", enc, ref)
			}
		})
	}
	if got, err := llm.MarshalBlocks(nil); err != nil || string(got) != "null" {
		t.Errorf("nil blocks: %s, %v", got, err)
	}
	if _, err := llm.MarshalBlocks([]llm.Block{llm.ToolResult("t", json.RawMessage(`{"a":`), false)}); err == nil {
		t.Error("invalid content encoded without error")
	}
}
