package tool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type geminiIn struct {
	Query  string            `json:"query" jsonschema:"What to find" schema:"minLength=1,maxLength=100,pattern=^[a-z]+$"`
	Sort   string            `json:"sort,omitempty" schema:"enum=asc|desc,default=asc"`
	Rows   int               `json:"rows,omitempty" schema:"exclusiveMinimum=0,exclusiveMaximum=10.5"`
	Score  float64           `json:"score,omitempty" jsonschema:"Least score" schema:"exclusiveMinimum=0.5"`
	Level  int               `json:"level,omitempty" schema:"enum=1|2|3"`
	URL    string            `json:"url,omitempty" schema:"format=uri"`
	Tags   []string          `json:"tags,omitempty" schema:"maxItems=3"`
	Nested *geminiNested     `json:"nested,omitempty"`
	Extra  map[string]string `json:"-"`
}

type geminiNested struct {
	On bool `json:"on"`
}

type geminiOut struct{}

func (geminiOut) Summary() string { return "" }

func geminiJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestGeminiDeclaration(t *testing.T) {
	tl := Must(New(Spec{Name: "find", Description: "Finds."}, func(context.Context, geminiIn) (geminiOut, error) { return geminiOut{}, nil }))
	d, err := tl.Definition(FormatGemini)
	if err != nil {
		t.Fatal(err)
	}
	got := geminiJSON(t, d)
	want := `{"name":"find","description":"Finds.","parameters":{"type":"OBJECT","properties":{` +
		`"level":{"type":"INTEGER","description":"(one of [1,2,3])"},` +
		`"nested":{"type":"OBJECT","properties":{"on":{"type":"BOOLEAN"}},"propertyOrdering":["on"],"required":["on"]},` +
		`"query":{"type":"STRING","description":"What to find","minLength":1,"maxLength":100,"pattern":"^[a-z]+$"},` +
		`"rows":{"type":"INTEGER","minimum":1,"maximum":10},` +
		`"score":{"type":"NUMBER","description":"Least score (\u003e 0.5)"},` +
		`"sort":{"type":"STRING","enum":["asc","desc"],"default":"asc"},` +
		`"tags":{"type":"ARRAY","items":{"type":"STRING"},"maxItems":3},` +
		`"url":{"type":"STRING"}},` +
		`"propertyOrdering":["query","sort","rows","score","level","url","tags","nested"],"required":["query"]}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestGeminiForms(t *testing.T) {
	tests := []struct {
		name string
		in   *jsonschema.Schema
		want string // "" when there is no Gemini form
	}{
		{"nullable", &jsonschema.Schema{Description: "d", AnyOf: []*jsonschema.Schema{{Type: "null"}, {Type: "integer", Format: "int64"}}},
			`{"type":"INTEGER","format":"int64","description":"d","nullable":true}`},
		{"const", &jsonschema.Schema{Type: "string", Const: new(any(true))}, `{"type":"STRING","description":"(one of [true])"}`},
		{"string const", &jsonschema.Schema{Type: "string", Const: new(any("x"))}, `{"type":"STRING","enum":["x"]}`},
		{"any value", &jsonschema.Schema{Description: anyValue}, `{"description":"Any JSON value"}`},
		{"free-form object inside", &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"m": {Type: "object", AdditionalProperties: &jsonschema.Schema{}}}}, ""},
		{"other anyOf", &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}, ""},
		{"type array", &jsonschema.Schema{Types: []string{"null", "string"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := toGemini(tt.in, "")
			if tt.want == "" {
				if err == nil {
					t.Fatalf("converted to %s, want no form", geminiJSON(t, g))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := geminiJSON(t, g); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestGeminiFallsBackToJSONSchema: a tool whose parameters have no form in
// the subset is declared with parametersJsonSchema, its own input schema.
func TestGeminiFallsBackToJSONSchema(t *testing.T) {
	type in struct {
		Filters map[string]any `json:"filters,omitempty"`
	}
	tl := Must(New(Spec{Name: "filter", Description: "Filters."}, func(context.Context, in) (geminiOut, error) { return geminiOut{}, nil }))
	d, err := tl.Definition(FormatGemini)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := geminiJSON(t, d), `{"name":"filter","description":"Filters.","parametersJsonSchema":`+geminiJSON(t, tl.InputSchema())+`}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestGeminiWithoutParameters(t *testing.T) {
	type in struct{}
	tl := Must(New(Spec{Name: "now", Description: "Says the time."}, func(context.Context, in) (geminiOut, error) { return geminiOut{}, nil }))
	d, err := tl.Definition(FormatGemini)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := geminiJSON(t, d), `{"name":"now","description":"Says the time."}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
