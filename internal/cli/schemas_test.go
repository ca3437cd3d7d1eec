package cli

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/toolport/toolport/tool"
)

// TestToolSchemasCompile compiles every pack tool's input and output
// schemas (schemacheck refuses any keyword it does not implement). Tools compile them on first call (start-up stays cheap), so a
// schema that does not compile would otherwise surface only when the tool
// is called.
func TestToolSchemasCompile(t *testing.T) {
	for _, tl := range allPackTools(t) {
		if err := tl.CheckSchemas(); err != nil {
			t.Error(err)
		}
	}
}

// TestToolSchemasArePortable walks every published schema (input and
// output, with and without the cache arguments) as clients receive it: a
// boolean schema where the keyword is not boolean-valued makes the official
// TypeScript SDK reject the whole tools/list, and a type array is not
// accepted by single-type dialects such as Gemini's function declarations.
func TestToolSchemasArePortable(t *testing.T) {
	for _, s := range realSchemas(t) {
		raw, err := json.Marshal(s.doc)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range unportable(doc, "", "") {
			t.Errorf("%s: %s", s.name, p)
		}
	}
}

// unportable lists the problems of a schema decoded from JSON.
func unportable(s any, at, keyword string) []string {
	switch s := s.(type) {
	case bool:
		if slices.Contains([]string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}, keyword) {
			return nil
		}
		return []string{fmt.Sprintf("%s: boolean schema %v", at, s)}
	case map[string]any:
		var out []string
		if ty, ok := s["type"].([]any); ok {
			out = append(out, fmt.Sprintf("%s: type array %v", at, ty))
		}
		for k, v := range s {
			switch k {
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				m, _ := v.(map[string]any)
				for name, sub := range m {
					out = append(out, unportable(sub, at+"/"+k+"/"+name, k)...)
				}
			case "anyOf", "allOf", "oneOf", "prefixItems":
				l, _ := v.([]any)
				for i, sub := range l {
					out = append(out, unportable(sub, fmt.Sprintf("%s/%s/%d", at, k, i), k)...)
				}
			case "items", "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
				"not", "contains", "propertyNames", "if", "then", "else", "contentSchema":
				out = append(out, unportable(v, at+"/"+k, k)...)
			}
		}
		return out
	}
	return []string{fmt.Sprintf("%s: not a schema: %v", at, s)}
}

// TestUnportableFindsWhatClientsReject keeps the walk above honest.
func TestUnportableFindsWhatClientsReject(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"type":"object","additionalProperties":false,"properties":{
		"a":true,"b":{"type":["null","string"]},"c":{"type":"array","items":false},
		"d":{"anyOf":[{"type":"null"},{"type":"object","additionalProperties":true,"properties":{"e":false}}]}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	got := unportable(doc, "", "")
	slices.Sort(got)
	want := []string{"/properties/a: boolean schema true", "/properties/b: type array [null string]",
		"/properties/c/items: boolean schema false", "/properties/d/anyOf/1/properties/e: boolean schema false"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// geminiFields are the Schema fields the Gemini API reference documents
// (https://ai.google.dev/api/caching#Schema), and geminiTypeFields those
// valid for each type ("Only a subset of fields is valid for each Type").
var (
	geminiFields     = []string{"type", "format", "title", "description", "nullable", "enum", "default", "items", "minItems", "maxItems", "properties", "propertyOrdering", "required", "minProperties", "maxProperties", "minimum", "maximum", "minLength", "maxLength", "pattern", "example", "anyOf"}
	geminiTypeFields = map[string][]string{
		"STRING":  {"enum", "format", "minLength", "maxLength", "pattern"},
		"INTEGER": {"format", "minimum", "maximum", "enum"},
		"NUMBER":  {"format", "minimum", "maximum", "enum"},
		"BOOLEAN": {},
		"ARRAY":   {"items", "minItems", "maxItems"},
		"OBJECT":  {"properties", "propertyOrdering", "required", "minProperties", "maxProperties"},
	}
	geminiFormats = map[string][]string{"NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}, "STRING": {"enum", "date-time"}}
)

// geminiProblems lists how a schema strays from the documented subset.
func geminiProblems(s map[string]any, at string) []string {
	var out []string
	typ, _ := s["type"].(string)
	for k, v := range s {
		switch {
		case !slices.Contains(geminiFields, k):
			out = append(out, fmt.Sprintf("%s: field %q is not in the subset", at, k))
		case slices.Contains([]string{"type", "title", "description", "nullable", "default", "example"}, k):
		case !slices.Contains(geminiTypeFields[typ], k):
			out = append(out, fmt.Sprintf("%s: %q is not valid for type %q", at, k, typ))
		case k == "format" && !slices.Contains(geminiFormats[typ], v.(string)):
			out = append(out, fmt.Sprintf("%s: format %q not documented for %s", at, v, typ))
		case k == "enum":
			for _, e := range v.([]any) {
				if _, ok := e.(string); !ok {
					out = append(out, fmt.Sprintf("%s: enum value %v is not a string", at, e))
				}
			}
		}
	}
	if _, ok := geminiTypeFields[typ]; typ != "" && !ok {
		out = append(out, fmt.Sprintf("%s: type %q is not one of the Type enum's names", at, typ))
	}
	if typ == "OBJECT" {
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			out = append(out, at+": an OBJECT without properties (the API refuses it)")
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				out = append(out, fmt.Sprintf("%s: required %q is not a property", at, r))
			}
		}
		for name, p := range props {
			out = append(out, geminiProblems(p.(map[string]any), at+"."+name)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, geminiProblems(items, at+"[]")...)
	}
	return out
}

// TestGeminiDeclarationsFitTheDocumentedSubset renders every pack tool with
// --format gemini and checks each declaration against the Gemini API's
// FunctionDeclaration: parameters in the documented Schema subset, or, for
// the tools whose parameters have no form there (an object with free keys),
// parametersJsonSchema holding the tool's own input schema.
func TestGeminiDeclarationsFitTheDocumentedSubset(t *testing.T) {
	var fallbacks []string
	for _, tl := range allPackTools(t) {
		d, err := tl.Definition(tool.FormatGemini)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var decl map[string]any
		if err := json.Unmarshal(raw, &decl); err != nil {
			t.Fatal(err)
		}
		name, _ := decl["name"].(string)
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`).MatchString(name) || decl["description"] == "" {
			t.Errorf("%s: name or description not as the reference wants", name)
		}
		for k := range decl {
			if !slices.Contains([]string{"name", "description", "parameters", "parametersJsonSchema"}, k) {
				t.Errorf("%s: field %q", name, k)
			}
		}
		params, hasParams := decl["parameters"].(map[string]any)
		if js, ok := decl["parametersJsonSchema"]; ok {
			if hasParams {
				t.Errorf("%s: parameters and parametersJsonSchema are mutually exclusive", name)
			}
			raw, _ := json.Marshal(tl.InputSchema())
			var in any
			if err := json.Unmarshal(raw, &in); err != nil || !reflect.DeepEqual(js, in) {
				t.Errorf("%s: parametersJsonSchema is not the input schema", name)
			}
			fallbacks = append(fallbacks, name)
			continue
		}
		if !hasParams {
			continue
		}
		if params["type"] != "OBJECT" {
			t.Errorf("%s: parameters of type %v", name, params["type"])
		}
		for _, p := range geminiProblems(params, name) {
			t.Error(p)
		}
	}
	// Only queryDatastore's filters (column → value) have free keys.
	if !slices.Equal(fallbacks, []string{"queryDatastore"}) {
		t.Errorf("declared with parametersJsonSchema: %v, want only queryDatastore", fallbacks)
	}
}

// TestGeminiSubsetCheckFindsStrays keeps the check above honest.
func TestGeminiSubsetCheckFindsStrays(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal([]byte(`{"type":"OBJECT","required":["a","z"],"additionalProperties":false,"properties":{
		"a":{"type":"string"},"b":{"type":"STRING","format":"uri","minItems":1},"c":{"type":"INTEGER","enum":[1]},
		"d":{"type":"OBJECT"},"e":{"type":"ARRAY","items":{"type":"NUMBER","exclusiveMinimum":0}}}}`), &s); err != nil {
		t.Fatal(err)
	}
	got := geminiProblems(s, "t")
	slices.Sort(got)
	want := []string{
		`t.a: type "string" is not one of the Type enum's names`,
		`t.b: "minItems" is not valid for type "STRING"`,
		`t.b: format "uri" not documented for STRING`,
		`t.c: enum value 1 is not a string`,
		`t.d: an OBJECT without properties (the API refuses it)`,
		`t.e[]: field "exclusiveMinimum" is not in the subset`,
		`t: field "additionalProperties" is not in the subset`,
		`t: required "z" is not a property`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
