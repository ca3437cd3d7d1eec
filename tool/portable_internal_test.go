package tool

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestPortableRewritesEverySubschema(t *testing.T) {
	s := &jsonschema.Schema{
		Type:                 "object",
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"list":  {Type: "array", Items: &jsonschema.Schema{}},
			"tuple": {Type: "array", PrefixItems: []*jsonschema.Schema{{}}},
			"map":   {Type: "object", AdditionalProperties: &jsonschema.Schema{}},
			"deep":  {Type: "object", Properties: map[string]*jsonschema.Schema{"x": {Types: []string{"integer", "null"}, Description: "d", Minimum: new(1.0)}}},
		},
	}
	if err := portable(s, ""); err != nil {
		t.Fatal(err)
	}
	p := s.Properties
	if p["list"].Items != nil || p["tuple"].PrefixItems[0].Description != anyValue {
		t.Errorf("true in items or prefixItems left: %s %s", p["list"], p["tuple"])
	}
	if !isTrue(p["map"].AdditionalProperties) || !isFalse(s.AdditionalProperties) {
		t.Error("additionalProperties, boolean-valued everywhere, was changed")
	}
	x := p["deep"].Properties["x"]
	if x.Description != "d" || len(x.AnyOf) != 2 || x.AnyOf[0].Type != "null" || x.AnyOf[1].Type != "integer" || *x.AnyOf[1].Minimum != 1 || x.AnyOf[1].Description != "" || x.Minimum != nil {
		t.Errorf("nullable: %s", x)
	}
}

func TestPortableRefusesWhatHasNoPortableForm(t *testing.T) {
	for _, tt := range []struct {
		s    *jsonschema.Schema
		want string
	}{
		{&jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"x": {Not: &jsonschema.Schema{}}}}, `at "/properties/x": the false schema`},
		{&jsonschema.Schema{Items: &jsonschema.Schema{Types: []string{"string", "integer"}}}, `at "/items": type ["string" "integer"] is not a nullable type`},
	} {
		if err := portable(tt.s, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}
