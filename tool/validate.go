package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolport/toolport/internal/schemacheck"
	"github.com/toolport/toolport/internal/textclip"
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
	// doc is the published schema, for defaults and field lists. It is
	// never changed once built (callers clone it first).
	doc func() *jsonschema.Schema
	// compiled compiles the schema on first use: `toolport list` and
	// `TOOL --schema` validate nothing, and a server compiles only the
	// tools it is asked to call.
	compiled func() (*schemacheck.Schema, error)
}

// newLazyValidator is a validator whose schema is built on first use. A
// schema that cannot be built (a bug, which CheckSchemas catches in tests)
// admits nothing, and compiled says why.
func newLazyValidator(build func() (*jsonschema.Schema, error)) *validator {
	built := sync.OnceValues(build)
	doc := func() *jsonschema.Schema {
		if s, err := built(); err == nil {
			return s
		}
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	return &validator{doc: doc, compiled: sync.OnceValues(func() (*schemacheck.Schema, error) {
		if _, err := built(); err != nil {
			return nil, err
		}
		return schemacheck.Compile(doc())
	})}
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
	val, err := schemacheck.Decode(raw)
	if err != nil {
		return nil, &Error{Code: CodeValidation, Message: "arguments: not valid JSON: " + jsonErrorText(err), Err: err}
	}
	obj, ok := val.(map[string]any)
	if !ok {
		return nil, &Error{Code: CodeValidation, Message: "arguments: must be a JSON object, got " + schemacheck.TypeOf(val)}
	}
	applyDefaults(v.doc(), obj)
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

// check validates a decoded JSON value (as produced by schemacheck.Decode or
// by json.Unmarshal with UseNumber) and returns at most MaxViolations of its
// violations, sorted by path, and the number left out. A value can break its
// schema in as many ways as it has members (95,000 unknown keys fit in
// MaxArgumentBytes), so only the violations shown are ever described.
func (v *validator) check(val any) (vs []Violation, more int) {
	compiled, err := v.compiled()
	if err != nil {
		// A schema that does not compile is a bug (CheckSchemas catches it
		// in tests): fail closed.
		return []Violation{{Rule: "schema", Message: textclip.Bytes("the tool's schema does not compile: "+err.Error(), maxViolationBytes)}}, 0
	}
	// A nullable field's null branch is noted by its own error; the
	// other errors at or under it say what is wrong.
	leaves := slices.DeleteFunc(compiled.Validate(val), func(e schemacheck.Error) bool { return e.NullBranch })
	if len(leaves) == 0 {
		return nil, 0
	}
	total := 0
	for _, leaf := range leaves {
		total += max(len(leaf.Names), 1)
	}
	// The violations shown are the first in order of instance location.
	slices.SortStableFunc(leaves, func(a, b schemacheck.Error) int {
		return slices.Compare(a.Location, b.Location)
	})
	hinted := map[string]bool{} // locations whose known fields were listed already
	for i := range leaves {
		if len(vs) >= MaxViolations {
			break
		}
		vs = append(vs, v.describe(&leaves[i], MaxViolations-len(vs), hinted)...)
	}
	more = total - len(vs)
	slices.SortStableFunc(vs, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(vs, func(a, b Violation) bool { return a.Message == b.Message }), more
}

// describe renders one error as at most limit violations. The first
// unknown field at a location lists the known fields there (hinted records
// the locations already done), so the list appears once, not per field.
func (v *validator) describe(e *schemacheck.Error, limit int, hinted map[string]bool) []Violation {
	path := renderPath(e.Location)
	at := path
	if at == "" {
		at = "arguments"
	}
	one := func(format string, args ...any) []Violation {
		return []Violation{{Path: path, Rule: e.Keyword, Message: textclip.Bytes(at+": "+fmt.Sprintf(format, args...), maxViolationBytes)}}
	}
	switch e.Keyword {
	case "required":
		var vs []Violation
		for _, m := range e.Names[:min(limit, len(e.Names))] {
			p := joinPath(path, textclip.Bytes(m, maxPathToken))
			vs = append(vs, Violation{Path: p, Rule: "required", Message: p + ": required"})
		}
		return vs
	case "additionalProperties":
		var vs []Violation
		for _, name := range e.Names[:min(limit, len(e.Names))] {
			p := joinPath(path, textclip.Bytes(name, maxPathToken))
			msg := p + ": unknown field"
			if !hinted[path] {
				hinted[path] = true
				if known := v.propertyNames(e.Location); len(known) > 0 {
					msg += " (known fields: " + listText(known, maxKnownFields) + ")"
				}
			}
			vs = append(vs, Violation{Path: p, Rule: "additionalProperties", Message: textclip.Bytes(msg, maxViolationBytes)})
		}
		return vs
	case "type":
		return one("expected %s, got %s %s", strings.Join(e.Types, " or "), e.TypeGot, preview(e.Got))
	case "maximum":
		return one("must be <= %s, got %s", e.Want, e.GotText)
	case "minimum":
		return one("must be >= %s, got %s", e.Want, e.GotText)
	case "exclusiveMaximum":
		return one("must be < %s, got %s", e.Want, e.GotText)
	case "exclusiveMinimum":
		return one("must be > %s, got %s", e.Want, e.GotText)
	case "minLength":
		return one("must be at least %s characters, got %d", e.Want, e.Count)
	case "maxLength":
		return one("must be at most %s characters, got %d", e.Want, e.Count)
	case "minItems":
		return one("must have at least %s items, got %d", e.Want, e.Count)
	case "maxItems":
		return one("must have at most %s items, got %d", e.Want, e.Count)
	case "enum", "const":
		want := make([]string, len(e.Values))
		for i, w := range e.Values {
			want[i] = preview(w)
		}
		if e.Keyword == "const" {
			return one("must be %s, got %s", want[0], preview(e.Got))
		}
		return one("must be one of %s, got %s", strings.Join(want, ", "), preview(e.Got))
	case "pattern":
		return one("must match the pattern %s, got %s", strconv.Quote(e.Want), preview(e.Got))
	case "format":
		return one("must be a valid %s, got %s", e.Want, preview(e.Got))
	case "false":
		return one("no value is allowed here, got %s", preview(e.Got))
	}
	return one("not a JSON value: %s", preview(e.Got))
}

// propertyNames lists the properties the schema allows at an instance location.
func (v *validator) propertyNames(loc []string) []string {
	s := v.doc()
	for _, tok := range loc {
		s = nonNull(s)
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
	if s = nonNull(s); s == nil {
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
		b.WriteString(textclip.Bytes(tok, maxPathToken))
	}
	return b.String()
}

// listText joins at most n names, saying how many were left out.
func listText(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
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
