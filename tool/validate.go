package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxArgumentBytes bounds the JSON arguments of one call. Tool inputs are
// small; anything bigger is a mistake or an attack.
const MaxArgumentBytes = 1 << 20

// Bounds of a validation error. Arguments of MaxArgumentBytes can break a
// schema in some hundred thousand ways (one per unknown key); the error
// describes the first MaxViolations, in order of path, and counts the rest.
const (
	// MaxViolations is the number of violations an [Error] lists; the
	// others are counted in MoreViolations and noted as "and K more".
	MaxViolations = 20
	// maxKnownFields bounds the known fields an unknown-field violation lists.
	maxKnownFields = 50
	// maxPathToken bounds one property name in a path: a key can be as long
	// as the arguments.
	maxPathToken = 64
	// maxViolationBytes bounds one violation's message.
	maxViolationBytes = 1 << 10
)

// Violation is one way a value breaks its schema.
type Violation struct {
	Path    string `json:"path"`    // "rows", "filters.tags[2]"; "" for the whole value
	Rule    string `json:"rule"`    // the JSON Schema keyword: "maximum", "type", "required", …
	Message string `json:"message"` // "rows: must be <= 1000, got 10000"
}

// validator checks JSON values against one compiled schema.
type validator struct {
	doc *jsonschema.Schema // the published schema, for defaults and field lists
	// compiled compiles the schema on first use: compiling every tool's
	// schemas (and checking them against the 2020-12 metaschema) is most
	// of what `toolport list` or `TOOL --schema` would otherwise spend at
	// start-up, and neither validates anything.
	compiled func() (*sv.Schema, error)
}

func newValidator(s *jsonschema.Schema) (*validator, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &validator{doc: s, compiled: sync.OnceValues(func() (*sv.Schema, error) { return compileSchema(raw) })}, nil
}

func compileSchema(raw []byte) (*sv.Schema, error) {
	doc, err := sv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := sv.NewCompiler()
	c.DefaultDraft(sv.Draft2020)
	c.AssertFormat()
	const loc = "toolport:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// decodeArgs parses raw tool arguments, applies schema defaults, validates, and
// returns the normalised JSON ready to unmarshal into the input type.
func (v *validator) decodeArgs(raw []byte) ([]byte, *Error) {
	if len(raw) > MaxArgumentBytes {
		return nil, &Error{Code: CodeValidation, Message: fmt.Sprintf("arguments: too large (%d bytes, limit %d)", len(raw), MaxArgumentBytes)}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	val, err := sv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Code: CodeValidation, Message: "arguments: not valid JSON: " + jsonErrorText(err), Err: err}
	}
	obj, ok := val.(map[string]any)
	if !ok {
		return nil, &Error{Code: CodeValidation, Message: "arguments: must be a JSON object, got " + jsonType(val)}
	}
	applyDefaults(v.doc, obj)
	if vs, more := v.check(obj); len(vs) > 0 {
		return nil, violationError(vs, more)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, &Error{Code: CodeValidation, Message: "arguments: " + err.Error(), Err: err}
	}
	return out, nil
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

// violationError is the CodeValidation error for the violations of one value.
// more counts the violations left out beyond MaxViolations.
func violationError(vs []Violation, more int) *Error {
	return &Error{Code: CodeValidation, Message: violationText(vs, more), Violations: vs, MoreViolations: more}
}

// violationText joins the violations' messages, noting those left out.
func violationText(vs []Violation, more int) string {
	msgs := make([]string, len(vs), len(vs)+1)
	for i, v := range vs {
		msgs[i] = v.Message
	}
	if more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(msgs, "; ")
}

// check validates a decoded JSON value (as produced by sv.UnmarshalJSON or by
// json.Unmarshal with UseNumber) and returns at most MaxViolations of its
// violations, sorted by path, and the number left out. A value can break its
// schema in as many ways as it has members (95,000 unknown keys fit in
// MaxArgumentBytes), so only the violations shown are ever described.
func (v *validator) check(val any) (vs []Violation, more int) {
	compiled, err := v.compiled()
	if err != nil {
		// A schema derived from Go types that does not compile is a bug
		// (CheckSchemas catches it in tests); fail closed.
		return []Violation{{Rule: "schema", Message: clipText("the tool's schema does not compile: "+err.Error(), maxViolationBytes)}}, 0
	}
	err = compiled.Validate(val)
	if err == nil {
		return nil, 0
	}
	var ve *sv.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Rule: "schema", Message: clipText(err.Error(), maxViolationBytes)}}, 0
	}
	var leaves []*sv.ValidationError
	total := collect(ve, &leaves)
	// Which violations are shown must not depend on map order (the validator
	// walks objects in it): take them in order of instance location.
	slices.SortStableFunc(leaves, func(a, b *sv.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	hinted := map[string]bool{} // locations whose known fields were listed already
	for _, leaf := range leaves {
		if len(vs) >= MaxViolations {
			break
		}
		vs = append(vs, v.describe(leaf, val, MaxViolations-len(vs), hinted)...)
	}
	more = total - len(vs)
	slices.SortStableFunc(vs, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(vs, func(a, b Violation) bool { return a.Message == b.Message }), more
}

// collect gathers the leaves of a validation error tree and returns the
// number of violations they hold, without describing any.
func collect(ve *sv.ValidationError, leaves *[]*sv.ValidationError) int {
	if len(ve.Causes) > 0 {
		n := 0
		for _, c := range ve.Causes {
			n += collect(c, leaves)
		}
		return n
	}
	*leaves = append(*leaves, ve)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		return max(len(k.Missing), 1)
	case *kind.AdditionalProperties:
		return max(len(k.Properties), 1)
	}
	return 1
}

var printer = message.NewPrinter(language.English)

// describe renders one leaf error as at most limit violations. The first
// unknown field at a location lists the known fields there (hinted records
// the locations already done), so the list appears once, not per field.
func (v *validator) describe(ve *sv.ValidationError, root any, limit int, hinted map[string]bool) []Violation {
	path := renderPath(ve.InstanceLocation)
	at := path
	if at == "" {
		at = "arguments"
	}
	one := func(rule, format string, args ...any) []Violation {
		return []Violation{{Path: path, Rule: rule, Message: clipText(at+": "+fmt.Sprintf(format, args...), maxViolationBytes)}}
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		var vs []Violation
		for _, m := range smallest(k.Missing, limit) {
			p := joinPath(path, clipText(m, maxPathToken))
			vs = append(vs, Violation{Path: p, Rule: "required", Message: p + ": required"})
		}
		return vs
	case *kind.AdditionalProperties:
		var vs []Violation
		for _, name := range smallest(k.Properties, limit) {
			p := joinPath(path, clipText(name, maxPathToken))
			msg := p + ": unknown field"
			if !hinted[path] {
				hinted[path] = true
				if known := v.propertyNames(ve.InstanceLocation); len(known) > 0 {
					msg += " (known fields: " + listText(known, maxKnownFields) + ")"
				}
			}
			vs = append(vs, Violation{Path: p, Rule: "additionalProperties", Message: clipText(msg, maxViolationBytes)})
		}
		return vs
	case *kind.Type:
		got := valueAt(root, ve.InstanceLocation)
		return one("type", "expected %s, got %s %s", strings.Join(k.Want, " or "), k.Got, preview(got))
	case *kind.Maximum:
		return one("maximum", "must be <= %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.Minimum:
		return one("minimum", "must be >= %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return one("exclusiveMaximum", "must be < %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return one("exclusiveMinimum", "must be > %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.MinLength:
		return one("minLength", "must be at least %d characters, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return one("maxLength", "must be at most %d characters, got %d", k.Want, k.Got)
	case *kind.MinItems:
		return one("minItems", "must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return one("maxItems", "must have at most %d items, got %d", k.Want, k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = preview(w)
		}
		return one("enum", "must be one of %s, got %s", strings.Join(want, ", "), preview(k.Got))
	case *kind.Pattern:
		return one("pattern", "must match the pattern %s, got %s", strconv.Quote(k.Want), preview(k.Got))
	case *kind.Format:
		return one("format", "must be a valid %s, got %s", k.Want, preview(k.Got))
	}
	rule := strings.Join(ve.ErrorKind.KeywordPath(), "/")
	return one(rule, "%s", ve.ErrorKind.LocalizedString(printer))
}

// propertyNames lists the properties the schema allows at an instance location.
func (v *validator) propertyNames(loc []string) []string {
	s := v.doc
	for _, tok := range loc {
		switch {
		case s == nil:
			return nil
		case s.Properties[tok] != nil:
			s = s.Properties[tok]
		case s.Items != nil:
			s = s.Items
		case s.AdditionalProperties != nil:
			s = s.AdditionalProperties
		default:
			return nil
		}
	}
	if s == nil {
		return nil
	}
	if len(s.PropertyOrder) > 0 {
		return slices.Clone(s.PropertyOrder)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func renderPath(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(clipText(tok, maxPathToken))
	}
	return b.String()
}

// smallest returns the n smallest of names, sorted. It sorts names in place:
// they belong to a validation error that is read once.
func smallest(names []string, n int) []string {
	slices.Sort(names)
	return names[:min(n, len(names))]
}

// listText joins at most n names, saying how many were left out.
func listText(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

// clipText cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// preview renders a value for an error message, short enough to read.
func preview(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 60
	if r := []rune(string(raw)); len(r) > max {
		return string(r[:max]) + "…"
	}
	return string(raw)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// applyDefaults fills absent properties that have a schema default, recursing
// into nested objects that are present.
func applyDefaults(s *jsonschema.Schema, obj map[string]any) {
	if s == nil {
		return
	}
	for name, ps := range s.Properties {
		cur, present := obj[name]
		if !present && len(ps.Default) > 0 {
			var dv any
			if err := json.Unmarshal(ps.Default, &dv); err == nil {
				obj[name] = dv
			}
			continue
		}
		if nested, ok := cur.(map[string]any); ok {
			applyDefaults(ps, nested)
		}
	}
}
