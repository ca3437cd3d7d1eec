package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
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
