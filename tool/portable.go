package tool

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// anyValue describes a schema that admits every JSON value. jsonschema-go
// writes the empty schema as the boolean true, which the official
// TypeScript SDK rejects as a property's schema (its ToolSchema wants an
// object there, and one bad tool fails the whole tools/list); a description
// keeps the same meaning in object form.
const anyValue = "Any JSON value"

// booleanValued are the keywords whose value every dialect takes as a
// boolean: OpenAPI 3.0 allows additionalProperties: false, OpenAI's strict
// mode requires it, and the MCP Inspector's --strict accepts them.
var booleanValued = []string{"AdditionalProperties", "UnevaluatedProperties", "AdditionalItems", "UnevaluatedItems"}

// annotationFields change nothing a schema admits; a nullable schema keeps
// them outside its anyOf.
var annotationFields = []string{"Title", "Description", "Default", "Deprecated", "ReadOnly", "WriteOnly", "Examples", "Comment"}

// portable rewrites a derived schema, in one pass over every subschema, into
// forms that the official MCP SDKs and single-type dialects accept, without
// changing what it admits:
//
//   - the boolean schema true (an `any` field) becomes {"description": "Any
//     JSON value"}, or no items keyword at all for an array of anything;
//     true and false stay only where the keyword is boolean-valued
//     (additionalProperties and its kin). false elsewhere is an error: it
//     cannot be written in object form ({"not": {}} is written as false by
//     jsonschema-go) and no Go type derives it.
//   - a nullable type array ["null", T] becomes {"anyOf": [{"type": "null"},
//     {"type": T, …}]}, the spelling the MCP Inspector's --strict suggests:
//     Gemini's and other single-type dialects take one type per schema.
//     (Fields that are never written as null have lost their null already.)
//
// at is the JSON pointer of s, for errors.
func portable(s *jsonschema.Schema, at string) error {
	if isFalse(s) {
		return fmt.Errorf("at %q: the false schema is allowed only as additionalProperties", at)
	}
	if len(s.Types) > 0 {
		if err := nullableAnyOf(s, at); err != nil {
			return err
		}
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		child := func(c *jsonschema.Schema, tok string) (*jsonschema.Schema, error) {
			if c == nil || slices.Contains(booleanValued, name) && (isTrue(c) || isFalse(c)) {
				return c, nil
			}
			if name == "Not" && isTrue(c) {
				return c, nil // {"not": {}} is the false schema, checked above
			}
			if isTrue(c) {
				if name == "Items" {
					return nil, nil // no items keyword: the same, and not boolean
				}
				return &jsonschema.Schema{Description: anyValue}, nil
			}
			return c, portable(c, at+"/"+tok)
		}
		switch f := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			c, err := child(f, jsonName(v.Type().Field(i)))
			if err != nil {
				return err
			}
			v.Field(i).Set(reflect.ValueOf(c))
		case []*jsonschema.Schema:
			for j := range f {
				c, err := child(f[j], fmt.Sprintf("%s/%d", jsonName(v.Type().Field(i)), j))
				if err != nil {
					return err
				}
				f[j] = c
			}
		case map[string]*jsonschema.Schema:
			for k, c := range f {
				c, err := child(c, jsonName(v.Type().Field(i))+"/"+k)
				if err != nil {
					return err
				}
				f[k] = c
			}
		}
	}
	return nil
}

// nullableAnyOf turns {"type": ["null", T], …} into {"anyOf": [{"type":
// "null"}, {"type": T, …}]}, annotations kept outside.
func nullableAnyOf(s *jsonschema.Schema, at string) error {
	if len(s.Types) != 2 || !slices.Contains(s.Types, "null") || s.Types[0] == s.Types[1] {
		return fmt.Errorf("at %q: type %q is not a nullable type; give the field one type", at, s.Types)
	}
	branch := *s
	branch.Types = nil
	branch.Type = s.Types[0]
	if branch.Type == "null" {
		branch.Type = s.Types[1]
	}
	outer := jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, &branch}}
	src, in, out := reflect.ValueOf(s).Elem(), reflect.ValueOf(&branch).Elem(), reflect.ValueOf(&outer).Elem()
	for _, name := range annotationFields {
		out.FieldByName(name).Set(src.FieldByName(name))
		in.FieldByName(name).SetZero()
	}
	*s = outer
	return nil
}

// nonNull is the non-null branch of a nullable schema (see nullableAnyOf),
// or s itself.
func nonNull(s *jsonschema.Schema) *jsonschema.Schema {
	if s != nil && len(s.AnyOf) == 2 && s.AnyOf[0].Type == "null" {
		return s.AnyOf[1]
	}
	return s
}

// isTrue says whether s admits everything with no keyword at all: what
// jsonschema-go writes as true.
func isTrue(s *jsonschema.Schema) bool { return reflect.ValueOf(*s).IsZero() }

// isFalse says whether s is {"not": {}} and nothing else: what
// jsonschema-go writes as false.
func isFalse(s *jsonschema.Schema) bool {
	if s.Not == nil || !isTrue(s.Not) {
		return false
	}
	c := *s
	c.Not = nil
	return isTrue(&c)
}

// jsonName is a schema field's keyword, for error locations.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		// Items and the like are marshalled by hand: the keyword is the
		// field's name, lower-cased.
		return strings.ToLower(f.Name[:1]) + f.Name[1:]
	}
	return name
}
