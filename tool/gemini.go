package tool

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// geminiSchema is the Gemini API's Schema: "a select subset of an OpenAPI
// 3.0 schema object", as the Gemini API reference documents it
// (https://ai.google.dev/api/caching#Schema; Vertex AI's
// https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema
// is the same subset). Types are the Type enum's upper-case names; enum
// holds strings; format is one the reference lists for the type. There is
// no $schema, additionalProperties, const, exclusiveMinimum or
// exclusiveMaximum, and one type per schema (nullable says null is allowed).
type geminiSchema struct {
	Type             string                   `json:"type,omitempty"`
	Format           string                   `json:"format,omitempty"`
	Title            string                   `json:"title,omitempty"`
	Description      string                   `json:"description,omitempty"`
	Nullable         bool                     `json:"nullable,omitempty"`
	Enum             []string                 `json:"enum,omitempty"`
	Default          json.RawMessage          `json:"default,omitempty"`
	Items            *geminiSchema            `json:"items,omitempty"`
	MinItems         *int                     `json:"minItems,omitempty"`
	MaxItems         *int                     `json:"maxItems,omitempty"`
	Properties       map[string]*geminiSchema `json:"properties,omitempty"`
	PropertyOrdering []string                 `json:"propertyOrdering,omitempty"`
	Required         []string                 `json:"required,omitempty"`
	Minimum          *float64                 `json:"minimum,omitempty"`
	Maximum          *float64                 `json:"maximum,omitempty"`
	MinLength        *int                     `json:"minLength,omitempty"`
	MaxLength        *int                     `json:"maxLength,omitempty"`
	Pattern          string                   `json:"pattern,omitempty"`
}

// geminiFunction is the Gemini API's FunctionDeclaration
// (https://ai.google.dev/api/caching#FunctionDeclaration). Parameters are
// given in the OpenAPI subset when they fit it, and otherwise as
// parametersJsonSchema, which the reference documents as the alternative
// (mutually exclusive with parameters) taking JSON Schema: an object whose
// keys are free (queryDatastore's filters) has no form in the subset, where
// the API refuses an OBJECT without properties. Parameters are left out for
// a function without any, as the reference allows.
type geminiFunction struct {
	Name                 string             `json:"name"`
	Description          string             `json:"description"`
	Parameters           *geminiSchema      `json:"parameters,omitempty"`
	ParametersJSONSchema *jsonschema.Schema `json:"parametersJsonSchema,omitempty"`
}

// geminiFormats are the formats the reference lists, by type; any other
// format (uri) is left out, since the Gemini API refuses it.
var geminiFormats = map[string][]string{
	"NUMBER":  {"float", "double"},
	"INTEGER": {"int32", "int64"},
	"STRING":  {"enum", "date-time"},
}

func (t *Tool) geminiDefinition() geminiFunction {
	in := t.InputSchema()
	params, err := toGemini(in, "")
	if err != nil {
		return geminiFunction{Name: t.spec.Name, Description: t.spec.Description, ParametersJSONSchema: in}
	}
	if len(params.Properties) == 0 {
		params = nil
	}
	return geminiFunction{Name: t.spec.Name, Description: t.spec.Description, Parameters: params}
}

// toGemini converts a published schema to the Gemini subset, or says why it
// cannot. What the
// subset cannot say is said in the description (an exclusive bound on a
// number, a non-string enum or const) or, where it changes nothing an
// argument may be, dropped: additionalProperties: false (a Gemini object
// has only its properties) and the uri format.
func toGemini(s *jsonschema.Schema, at string) (*geminiSchema, error) {
	if s == nil {
		return nil, nil
	}
	nullable := false
	if len(s.AnyOf) > 0 {
		// {"anyOf": [{"type": "null"}, T]}, how portable marks nullable.
		if len(s.AnyOf) != 2 || s.AnyOf[0].Type != "null" {
			return nil, fmt.Errorf("at %q: anyOf other than [null, T] has no Gemini form", at)
		}
		branch := *s.AnyOf[1]
		branch.Title, branch.Description, branch.Default = s.Title, s.Description, s.Default
		s, nullable = &branch, true
	}
	if len(s.Types) > 0 || s.Not != nil || len(s.AllOf)+len(s.OneOf) > 0 || s.Ref != "" {
		return nil, fmt.Errorf("at %q: no Gemini form for this schema (type array, not, allOf, oneOf or $ref)", at)
	}
	g := &geminiSchema{
		Type: strings.ToUpper(s.Type), Title: s.Title, Description: s.Description, Nullable: nullable,
		Default: s.Default, MinItems: s.MinItems, MaxItems: s.MaxItems, PropertyOrdering: s.PropertyOrder,
		Required: s.Required, Minimum: s.Minimum, Maximum: s.Maximum, MinLength: s.MinLength, MaxLength: s.MaxLength,
		Pattern: s.Pattern,
	}
	if slices.Contains(geminiFormats[g.Type], s.Format) {
		g.Format = s.Format
	}
	var notes []string
	enum := s.Enum
	if s.Const != nil {
		enum = []any{*s.Const}
	}
	for _, v := range enum {
		if str, ok := v.(string); ok && g.Type == "STRING" {
			g.Enum = append(g.Enum, str)
			continue
		}
		raw, _ := json.Marshal(enum)
		g.Enum, notes = nil, append(notes, "one of "+string(raw))
		break
	}
	for _, b := range []struct {
		bound *float64
		dst   **float64
		step  float64
		rel   string
	}{{s.ExclusiveMinimum, &g.Minimum, 1, ">"}, {s.ExclusiveMaximum, &g.Maximum, -1, "<"}} {
		if b.bound == nil {
			continue
		}
		if g.Type == "INTEGER" {
			// Exact for integers: > 2.5 is >= 3, > 2 is >= 3.
			v := math.Floor(*b.bound) + b.step
			if b.step < 0 {
				v = math.Ceil(*b.bound) + b.step
			}
			*b.dst = &v
			continue
		}
		notes = append(notes, fmt.Sprintf("%s %v", b.rel, *b.bound))
	}
	if len(notes) > 0 {
		g.Description = strings.TrimSpace(g.Description + " (" + strings.Join(notes, "; ") + ")")
	}
	var err error
	if g.Items, err = toGemini(s.Items, at+"/items"); err != nil {
		return nil, err
	}
	if g.Type == "OBJECT" && len(s.Properties) == 0 && at != "" {
		return nil, fmt.Errorf("at %q: an object without properties has no Gemini form", at)
	}
	if len(s.Properties) > 0 {
		g.Properties = make(map[string]*geminiSchema, len(s.Properties))
		for name, ps := range s.Properties {
			if g.Properties[name], err = toGemini(ps, at+"/properties/"+name); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}
