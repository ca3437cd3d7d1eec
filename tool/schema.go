package tool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor derives the JSON Schema of T.
//
// The structure and descriptions come from jsonschema-go (the `json` and
// `jsonschema` struct tags). Constraints come from the `schema` struct tag, a
// comma-separated list of key=value pairs:
//
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum   numbers
//	minLength, maxLength, minItems, maxItems               integers
//	default                                                a value of the field's type
//	enum                                                   values separated by '|'
//	format, pattern, title                                 strings (pattern may not hold ',')
//	items.KEY                                              KEY applied to each array element
//
// Optional fields (omitempty/omitzero) are not required. A nullable pointer or
// slice field is published as its plain type: an agent omits an optional field
// rather than sending null, and LLM tool formats handle plain types best.
//
// Schemas are published in the forms every MCP SDK and model dialect takes
// (see [portable]): no boolean schema outside additionalProperties, and no
// type arrays.
func SchemaFor[T any]() (*jsonschema.Schema, error) {
	return schemaForType(reflect.TypeFor[T](), true)
}

func schemaForType(t reflect.Type, input bool) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s, input); err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	if err := portable(s, ""); err != nil {
		return nil, fmt.Errorf("schema for %v: %w", t, err)
	}
	return s, nil
}

// applyTags walks the Go type beside its schema and applies `schema` tags.
func applyTags(t reflect.Type, s *jsonschema.Schema, input bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if input {
		dropNull(s)
	} else if t.Kind() == reflect.Map && s.Type == "object" {
		// encoding/json writes a nil map as null; jsonschema-go does not
		// say so (it does for slices and pointers).
		s.Types, s.Type = []string{"null", "object"}, ""
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items, input)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			return applyTags(t.Elem(), s.AdditionalProperties, input)
		}
	case reflect.Struct:
		return applyStructTags(t, s, input)
	}
	return nil
}

func applyStructTags(t reflect.Type, s *jsonschema.Schema, input bool) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			// Embedded struct: its fields are promoted into s.
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := applyStructTags(ft, s, input); err != nil {
					return err
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if err := applyTags(f.Type, ps, input); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !input && neverNull(f) {
			// Exact: the field is left out rather than written as null.
			dropNull(ps)
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := applyTag(ps, tag); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// neverNull says whether encoding/json can never write the field as null:
// an omitempty or omitzero slice, map or pointer is left out when nil, and a
// pointer that is not nil is null only if what it points to can be.
func neverNull(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	omit := false
	for o := range strings.SplitSeq(opts, ",") {
		omit = omit || o == "omitempty" || o == "omitzero"
	}
	if !omit {
		return false
	}
	switch f.Type.Kind() {
	case reflect.Slice, reflect.Map:
		return true
	case reflect.Pointer:
		switch f.Type.Elem().Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			return false
		}
		return true
	}
	return false
}

// dropNull turns ["null", T] into T.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		for _, ty := range s.Types {
			if ty != "null" {
				s.Type = ty
			}
		}
		s.Types = nil
	}
}

func applyTag(s *jsonschema.Schema, tag string) error {
	for part := range strings.SplitSeq(tag, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: want key=value", part)
		}
		if err := applyConstraint(s, key, val); err != nil {
			return fmt.Errorf("schema tag %q: %w", part, err)
		}
	}
	return nil
}

func applyConstraint(s *jsonschema.Schema, key, val string) error {
	if rest, ok := strings.CutPrefix(key, "items."); ok {
		// A constraint on each element of an array field: items.enum=a|b.
		if s.Items == nil {
			return fmt.Errorf("%q on a field that is not an array", key)
		}
		return applyConstraint(s.Items, rest, val)
	}
	num := func(dst **float64) error {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return err
		}
		*dst = &f
		return nil
	}
	count := func(dst **int) error {
		n, err := strconv.Atoi(val)
		if err != nil {
			return err
		}
		*dst = &n
		return nil
	}
	switch key {
	case "minimum":
		return num(&s.Minimum)
	case "maximum":
		return num(&s.Maximum)
	case "exclusiveMinimum":
		return num(&s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return num(&s.ExclusiveMaximum)
	case "minLength":
		return count(&s.MinLength)
	case "maxLength":
		return count(&s.MaxLength)
	case "minItems":
		return count(&s.MinItems)
	case "maxItems":
		return count(&s.MaxItems)
	case "format":
		s.Format = val
	case "pattern":
		s.Pattern = val
	case "title":
		s.Title = val
	case "default":
		v, err := typedValue(s, val)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.Default = raw
	case "enum":
		s.Enum = nil
		for item := range strings.SplitSeq(val, "|") {
			v, err := typedValue(s, item)
			if err != nil {
				return err
			}
			s.Enum = append(s.Enum, v)
		}
	default:
		return fmt.Errorf("unknown constraint %q", key)
	}
	return nil
}

// typedValue parses a tag value as the schema's type.
func typedValue(s *jsonschema.Schema, val string) (any, error) {
	switch s.Type {
	case "integer":
		return strconv.ParseInt(val, 10, 64)
	case "number":
		return strconv.ParseFloat(val, 64)
	case "boolean":
		return strconv.ParseBool(val)
	case "string":
		return val, nil
	}
	var v any
	if err := json.Unmarshal([]byte(val), &v); err != nil {
		return nil, fmt.Errorf("default for type %q must be JSON: %w", s.Type, err)
	}
	return v, nil
}
