package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolport/toolport/tool"
)

type portableIn struct {
	Query   string         `json:"query"`
	Limit   *int           `json:"limit,omitempty"`
	Filters map[string]any `json:"filters,omitempty"`
	Tags    []string       `json:"tags,omitempty"`
}

type portableItem struct {
	ID string `json:"id"`
}

type portableOut struct {
	About    any              `json:"about,omitempty"`
	Label    any              `json:"label" jsonschema:"A string or an object keyed by language"`
	Values   []any            `json:"values"`
	Items    []portableItem   `json:"items"`
	Maybe    []string         `json:"maybe,omitempty"`
	Size     *int64           `json:"size"`
	Score    *float64         `json:"score,omitempty"`
	Org      *portableItem    `json:"org,omitempty"`
	PtrSlice *[]portableItem  `json:"ptrSlice,omitempty"`
	Rows     []map[string]any `json:"rows"`
}

func (portableOut) Summary() string { return "ok" }

func portableTool(t *testing.T, out portableOut) *tool.Tool {
	t.Helper()
	tl, err := tool.New(tool.Spec{Name: "portable", Description: "Tests."}, func(context.Context, portableIn) (portableOut, error) { return out, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CheckSchemas(); err != nil {
		t.Fatal(err)
	}
	return tl
}

// property returns the JSON of one published property.
func property(t *testing.T, schema any, name string) string {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Properties[name])
}

func TestSchemasArePortable(t *testing.T) {
	tl := portableTool(t, portableOut{})
	in, out := tl.InputSchema(), tl.OutputSchema()
	tests := []struct {
		schema any
		name   string
		want   string
	}{
		// any is an object, not the boolean true that the TypeScript SDK rejects.
		{out, "about", `{"description":"Any JSON value"}`},
		{out, "label", `{"description":"A string or an object keyed by language"}`},
		// An array of anything has no items keyword (items: true is not portable).
		{out, "values", `{"anyOf":[{"type":"null"},{"type":"array"}]}`},
		// A field encoding/json can write as null is nullable, in anyOf form.
		{out, "items", `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}}]}`},
		{out, "size", `{"anyOf":[{"type":"null"},{"type":"integer"}]}`},
		// A pointer to a slice is null when the slice is nil, omitempty or not.
		{out, "ptrSlice", `{"anyOf":[{"type":"null"},{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}}]}`},
		// Fields left out when nil are never null: plain types.
		{out, "maybe", `{"type":"array","items":{"type":"string"}}`},
		{out, "score", `{"type":"number"}`},
		{out, "org", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`},
		// A free-form map keeps additionalProperties: true, a boolean-valued keyword.
		{out, "rows", `{"anyOf":[{"type":"null"},{"type":"array","items":{"anyOf":[{"type":"null"},{"type":"object","additionalProperties":true}]}}]}`},
		// Inputs are never null: an agent leaves an optional field out.
		{in, "limit", `{"type":"integer"}`},
		{in, "filters", `{"type":"object","additionalProperties":true}`},
	}
	for _, tt := range tests {
		if got := property(t, tt.schema, tt.name); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestNullableOutputsValidate checks that what the nullable fields are
// written as passes the output check, null and not.
func TestNullableOutputsValidate(t *testing.T) {
	size, empty := int64(3), []portableItem{}
	for i, out := range []portableOut{
		{},
		{About: map[string]any{"en": "x"}, Label: "l", Values: []any{1, "a", nil}, Items: []portableItem{{ID: "a"}}, Maybe: []string{"m"}, Size: &size, PtrSlice: &empty, Rows: []map[string]any{{"a": 1}, nil}},
		{PtrSlice: new([]portableItem)},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			reg := registry(t, portableTool(t, out))
			res := reg.Call(context.Background(), "portable", json.RawMessage(`{"query":"q"}`))
			if !res.OK() {
				t.Fatalf("output check failed: %s", res.JSON)
			}
			if i == 0 && !strings.Contains(string(res.JSON), `"items":null`) {
				t.Errorf("a nil slice should be written as null here: %s", res.JSON)
			}
		})
	}
}

// lyingItem declares a string id but is written with a number, as a
// result that breaks its schema.
type lyingItem struct {
	ID string `json:"id"`
}

func (lyingItem) MarshalJSON() ([]byte, error) { return []byte(`{"id":5}`), nil }

type lyingOut struct {
	Items []lyingItem `json:"items"`
}

func (lyingOut) Summary() string { return "lies" }

// TestNullableOutputStillChecksItsType: a value that is neither null nor
// valid fails, and the message says what is wrong inside it, not that it
// is not null.
func TestNullableOutputStillChecksItsType(t *testing.T) {
	tl, err := tool.New(tool.Spec{Name: "lying", Description: "Tests."}, func(context.Context, portableIn) (lyingOut, error) {
		return lyingOut{Items: []lyingItem{{}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := registry(t, tl).Call(context.Background(), "lying", json.RawMessage(`{"query":"q"}`))
	if res.OK() {
		t.Fatalf("an item with a number for its string id passed: %s", res.JSON)
	}
	if want := "items[0].id: expected string, got number 5"; res.Err.Message != "the result does not fit the output schema: "+want {
		t.Errorf("message %q, want only %q", res.Err.Message, want)
	}
}

// extraItem is written with a key its type does not declare.
type extraItem struct {
	ID string `json:"id"`
}

func (extraItem) MarshalJSON() ([]byte, error) { return []byte(`{"id":"a","extra":1}`), nil }

type extraOut struct {
	Items []extraItem `json:"items"`
}

func (extraOut) Summary() string { return "extra" }

// TestUnknownFieldUnderANullableListsTheKnownFields: the hint that lists a
// location's fields finds them through the anyOf of a nullable value.
func TestUnknownFieldUnderANullableListsTheKnownFields(t *testing.T) {
	tl, err := tool.New(tool.Spec{Name: "extra", Description: "Tests."}, func(context.Context, portableIn) (extraOut, error) {
		return extraOut{Items: []extraItem{{}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := registry(t, tl).Call(context.Background(), "extra", json.RawMessage(`{"query":"q"}`))
	if res.OK() || !strings.HasSuffix(res.Err.Message, "items[0].extra: unknown field (known fields: id)") {
		t.Fatalf("got %s", res.JSON)
	}
}
