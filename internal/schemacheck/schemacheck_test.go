package schemacheck

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func ptr[T any](v T) *T { return &v }

func mustCompile(t *testing.T, s *jsonschema.Schema) *Schema {
	t.Helper()
	c, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decode(t *testing.T, raw string) any {
	t.Helper()
	v, err := Decode([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// brief renders errors as "location keyword" lines for comparison.
func brief(errs []Error) []string {
	var out []string
	for _, e := range errs {
		s := "/" + strings.Join(e.Location, "/") + " " + e.Keyword
		if len(e.Names) > 0 {
			s += " " + strings.Join(e.Names, ",")
		}
		out = append(out, s)
	}
	return out
}

func TestValidateReportsEachFailingKeyword(t *testing.T) {
	s := mustCompile(t, &jsonschema.Schema{
		Type:                 "object",
		Required:             []string{"q", "n"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"q":    {Type: "string", MinLength: ptr(1), MaxLength: ptr(5), Pattern: "^[a-z]+$"},
			"n":    {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(10.0)},
			"x":    {Type: "number", ExclusiveMinimum: ptr(0.0), ExclusiveMaximum: ptr(1.5)},
			"kind": {Type: "string", Enum: []any{"a", "b"}},
			"ok":   {Type: "boolean", Const: ptr[any](true)},
			"url":  {Type: "string", Format: "uri"},
			"tags": {Type: "array", MinItems: ptr(1), MaxItems: ptr(2), Items: &jsonschema.Schema{Type: "string"}},
			"meta": {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "integer"}},
			"opt":  {Types: []string{"null", "integer"}},
			"list": {Description: "nullable", AnyOf: []*jsonschema.Schema{{Type: "null"}, {Type: "array", MaxItems: ptr(1), Items: &jsonschema.Schema{Type: "object", Required: []string{"id"}}}}},
		},
	})
	tests := []struct {
		name string
		val  string
		want []string
	}{
		{"valid", `{"q":"abc","n":3}`, nil},
		{"valid with every field", `{"q":"a","n":10,"x":1,"kind":"b","ok":true,"url":"https://x.org/a?b#c","tags":["t"],"meta":{"a":1},"opt":null}`, nil},
		{"integer spelled as float", `{"q":"a","n":1.0}`, nil},
		{"integer with exponent", `{"q":"a","n":1e1}`, nil},
		{"missing required", `{}`, []string{"/ required n,q"}},
		{"unknown fields", `{"q":"a","n":1,"zz":1,"aa":2}`, []string{"/ additionalProperties aa,zz"}},
		{"wrong type stops other checks", `{"q":5,"n":1}`, []string{"/q type"}},
		{"fraction is not an integer", `{"q":"a","n":1.5}`, []string{"/n type"}},
		{"string too short and pattern", `{"q":"","n":1}`, []string{"/q minLength", "/q pattern"}},
		{"string too long counts characters", `{"q":"ääääää","n":1}`, []string{"/q maxLength", "/q pattern"}},
		{"five characters of two bytes fit", `{"q":"ééééé","n":1}`, []string{"/q pattern"}},
		{"below minimum", `{"q":"a","n":0}`, []string{"/n minimum"}},
		{"above maximum", `{"q":"a","n":11}`, []string{"/n maximum"}},
		{"huge exponent", `{"q":"a","n":1e999999999999}`, []string{"/n maximum"}},
		{"exclusive bounds", `{"q":"a","n":1,"x":0}`, []string{"/x exclusiveMinimum"}},
		{"exclusive maximum", `{"q":"a","n":1,"x":1.5}`, []string{"/x exclusiveMaximum"}},
		{"tiny positive beats exclusive 0", `{"q":"a","n":1,"x":1e-400}`, nil},
		{"negative zero", `{"q":"a","n":1,"x":-0.0}`, []string{"/x exclusiveMinimum"}},
		{"enum", `{"q":"a","n":1,"kind":"c"}`, []string{"/kind enum"}},
		{"const", `{"q":"a","n":1,"ok":false}`, []string{"/ok const"}},
		{"format", `{"q":"a","n":1,"url":"/relative"}`, []string{"/url format"}},
		{"ipv6 host needs brackets and no zone", `{"q":"a","n":1,"url":"http://[fe80::1%25en0]/"}`, []string{"/url format"}},
		{"items", `{"q":"a","n":1,"tags":["a",2,"c"]}`, []string{"/tags maxItems", "/tags/1 type"}},
		{"min items", `{"q":"a","n":1,"tags":[]}`, []string{"/tags minItems"}},
		{"additional properties schema", `{"q":"a","n":1,"meta":{"a":"x","b":2}}`, []string{"/meta/a type"}},
		{"nullable", `{"q":"a","n":1,"opt":"x"}`, []string{"/opt type"}},
		{"anyOf null", `{"q":"a","n":1,"list":null}`, nil},
		{"anyOf other branch", `{"q":"a","n":1,"list":[{"id":1}]}`, nil},
		// The null branch's failure is reported as the general validators do.
		{"anyOf wrong type", `{"q":"a","n":1,"list":"x"}`, []string{"/list type"}},
		{"anyOf fails inside", `{"q":"a","n":1,"list":[{},{"id":1}]}`, []string{"/list type", "/list maxItems", "/list/0 required id"}},
		{"not an object", `[1]`, []string{"/ type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := brief(s.Validate(decode(t, tt.val)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateDescribesTheFailure(t *testing.T) {
	s := mustCompile(t, &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"n": {Type: "integer", Maximum: ptr(1000.0)},
		"f": {Type: "number", Minimum: ptr(0.5)},
		"s": {Type: "string"},
	}})
	errs := s.Validate(decode(t, `{"n":1e4,"f":0.25,"s":1}`))
	want := []Error{
		{Location: []string{"f"}, Keyword: "minimum", Want: "0.5", Got: json.Number("0.25"), GotText: "0.25"},
		{Location: []string{"n"}, Keyword: "maximum", Want: "1000", Got: json.Number("1e4"), GotText: "10000"},
		{Location: []string{"s"}, Keyword: "type", Types: []string{"string"}, TypeGot: "number", Got: json.Number("1")},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %+v", errs)
	}
	for i := range want {
		g, w := errs[i], want[i]
		if !slices.Equal(g.Location, w.Location) || g.Keyword != w.Keyword || g.Want != w.Want || g.Got != w.Got || g.GotText != w.GotText || !slices.Equal(g.Types, w.Types) || g.TypeGot != w.TypeGot {
			t.Errorf("error %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestNullableAnyOfKeepsTheBranchTypes(t *testing.T) {
	s := mustCompile(t, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, {Type: "integer"}}})
	errs := s.Validate(decode(t, `"x"`))
	if len(errs) != 1 || !slices.Equal(errs[0].Types, []string{"null", "integer"}) || errs[0].TypeGot != "string" {
		t.Fatalf("got %+v, want one type error naming null and integer", errs)
	}
}

func TestCompileRefusesWhatItDoesNotImplement(t *testing.T) {
	tests := []struct {
		name   string
		schema *jsonschema.Schema
		want   string
	}{
		{"anyOf", &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}}}, "anyOf"},
		{"anyOf without a null branch", &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}, "anyOf"},
		{"anyOf null branch with more", &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null", Description: "x"}, {Type: "integer"}}}, "anyOf"},
		{"anyOf beside a keyword", &jsonschema.Schema{Type: "integer", AnyOf: []*jsonschema.Schema{{Type: "null"}, {Type: "integer"}}}, "anyOf"},
		{"anyOf branch checked", &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, {UniqueItems: true}}}, "anyOf/1: unsupported keyword(s): uniqueItems"},
		{"ref", &jsonschema.Schema{Ref: "#/$defs/x", Defs: map[string]*jsonschema.Schema{"x": {}}}, "$defs, $ref"},
		{"nested", &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"a": {Items: &jsonschema.Schema{MultipleOf: ptr(2.0)}}}}, "properties/a/items: unsupported keyword(s): multipleOf"},
		{"unknown format", &jsonschema.Schema{Format: "email"}, `format "email"`},
		{"not other than false", &jsonschema.Schema{Not: &jsonschema.Schema{Type: "string"}}, `"not"`},
		{"extra keyword", &jsonschema.Schema{Extra: map[string]any{"x-custom": 1}}, "x-custom"},
		{"unknown type", &jsonschema.Schema{Type: "int"}, `unknown type "int"`},
		{"bad pattern", &jsonschema.Schema{Pattern: "("}, "pattern"},
		{"other draft", &jsonschema.Schema{Schema: "http://json-schema.org/draft-07/schema#"}, "$schema"},
		{"uniqueItems", &jsonschema.Schema{UniqueItems: true}, "uniqueItems"},
		{"ItemsArray", &jsonschema.Schema{ItemsArray: []*jsonschema.Schema{{}}}, "ItemsArray"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.schema)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestCompileBoundsDepth(t *testing.T) {
	s := &jsonschema.Schema{Type: "string"}
	for range MaxDepth + 1 {
		s = &jsonschema.Schema{Type: "array", Items: s}
	}
	if _, err := Compile(s); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("got %v, want a depth error", err)
	}
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	for _, raw := range []string{`{} {}`, `1 x`, `{`} {
		if _, err := Decode([]byte(raw)); err == nil {
			t.Errorf("%s: decoded", raw)
		}
	}
	if _, err := Decode([]byte(" {\"a\":1} \n")); err != nil {
		t.Error(err)
	}
}

func TestDecimalOrdersNumbersExactly(t *testing.T) {
	tests := []struct {
		a, b string
		cmp  int
	}{
		{"1", "1.0", 0}, {"1e2", "100", 0}, {"-0", "0", 0}, {"0.1", "1e-1", 0},
		{"0.30000000000000004", "0.3", 1}, {"9007199254740993", "9007199254740992", 1},
		{"-1", "1", -1}, {"-2", "-1", -1}, {"1e-400", "0", 1}, {"-1e400", "-1e399", -1},
		{"123", "1234", -1}, {"1e1099511627777", "1e1099511627776", 0}, // both saturate
	}
	for _, tt := range tests {
		a, okA := parseDecimal(tt.a)
		b, okB := parseDecimal(tt.b)
		if !okA || !okB {
			t.Fatalf("%s or %s not parsed", tt.a, tt.b)
		}
		if got := a.cmp(b); got != tt.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.cmp)
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x10", "1.5.2", "NaN"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("%q parsed as a number", bad)
		}
	}
	for in, want := range map[string]string{"1e3": "1000", "-2.50": "-2.5", "0.0": "0", "1e500": "+Inf", "12.5e-1": "1.25"} {
		d, _ := parseDecimal(in)
		if got := d.String(); got != want {
			t.Errorf("String(%s) = %s, want %s", in, got, want)
		}
	}
}
