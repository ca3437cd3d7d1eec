// Package schemacheck validates decoded JSON values against the part of JSON
// Schema (draft 2020-12) that Toolport's tool schemas use: type, const, enum,
// format "uri", properties, required, additionalProperties, items, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
// minItems, maxItems and pattern, the boolean schemas, and anyOf in the one
// form Toolport publishes a nullable value in: {"anyOf": [{"type": "null"},
// S]}.
//
// It exists for start-up time: a general validator compiles the metaschemas
// of every draft when its package is initialised, in every executable,
// before any tool is called. This one has no package state; a schema is
// compiled when it is first needed, and one that uses any other keyword
// fails to compile (it is never half-checked).
//
// Errors follow the general validators' conventions: at one location a type,
// const, enum or format failure is the only error reported; otherwise every
// keyword that fails is, and the object and array members are checked too.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxDepth bounds how deeply schemas nest. Validation recurses only as deep
// as the schema does, whatever the value, so this bounds its stack too.
const MaxDepth = 64

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	root *node
}

// Error is one way a value breaks its schema.
type Error struct {
	// Location is the value's path from the root: property names, and
	// array indexes in decimal.
	Location []string
	// Keyword is the schema keyword that failed: "type", "required",
	// "additionalProperties", "maximum", …; "false" for a false schema and
	// "invalid" for a Go value that is not JSON.
	Keyword string
	// Names are the missing properties (required) or the unknown ones
	// (additionalProperties), sorted.
	Names []string
	// Types are the types allowed (type), in the order null, boolean,
	// number, integer, string, array, object.
	Types []string
	// Want is the keyword's value as text: the bound of a number or of a
	// count, the pattern, the format's name.
	Want string
	// Count is the length of the string or array (minLength, maxLength,
	// minItems, maxItems).
	Count int
	// Got is the value at Location; GotText is it as a number for the
	// number keywords (1e3 is "1000").
	Got     any
	GotText string
	// Values are the values allowed (enum, const).
	Values []any
	// TypeGot is the value's type (type): numbers are all "number".
	TypeGot string
	// NullBranch marks the type error of a nullable schema's null branch,
	// reported (as the general validators report it) when the value is
	// not null and its other branch failed: the errors at or under
	// Location say how.
	NullBranch bool
}

type node struct {
	never bool // the false schema: nothing is valid
	// nullable: null is valid, and any other value is checked against the
	// rest of the node ({"anyOf": [{"type": "null"}, S]} is compiled as S).
	nullable   bool
	types      typeSet
	constant   []any // one value when const is set
	enum       []any
	format     string
	properties map[string]*node
	required   []string
	additional *node // nil: any other property is allowed
	items      *node
	minimum    *bound
	maximum    *bound
	exclMin    *bound
	exclMax    *bound
	minLength  int // -1: none
	maxLength  int
	minItems   int
	maxItems   int
	pattern    *regexp.Regexp
}

type bound struct {
	value decimal
	text  string
}

type typeSet uint8

// typeNames are the JSON types in the order errors list them.
func typeNames() [7]string {
	return [...]string{"null", "boolean", "number", "integer", "string", "array", "object"}
}

func typeBit(name string) (typeSet, bool) {
	names := typeNames()
	i := slices.Index(names[:], name)
	if i < 0 {
		return 0, false
	}
	return 1 << i, true
}

func (t typeSet) has(name string) bool {
	b, _ := typeBit(name)
	return t&b != 0
}

func (t typeSet) names() []string {
	var out []string
	for i, n := range typeNames() {
		if t&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// knownField says whether Compile reads a field of jsonschema.Schema, or
// whether it changes nothing when validating (annotations). Any other field
// that is set fails the compile, so that a keyword added to a tool's schema
// (or to jsonschema-go) is never skipped.
func knownField(name string) bool {
	switch name {
	case "Title", "Description", "Default", "Deprecated", "ReadOnly", "WriteOnly", "Examples", "Comment", "PropertyOrder",
		"Schema", "Type", "Types", "Const", "Enum", "Format",
		"Properties", "Required", "AdditionalProperties", "Items",
		"Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum",
		"MinLength", "MaxLength", "MinItems", "MaxItems", "Pattern", "Not", "AnyOf":
		return true
	}
	return false
}

// Compile compiles s. It fails if s uses a keyword or format this package
// does not implement, or nests deeper than MaxDepth.
func Compile(s *jsonschema.Schema) (*Schema, error) {
	if s == nil {
		return nil, fmt.Errorf("schemacheck: no schema")
	}
	n, err := compile(s, "", 0)
	if err != nil {
		return nil, err
	}
	return &Schema{root: n}, nil
}

func compile(s *jsonschema.Schema, at string, depth int) (*node, error) {
	fail := func(format string, args ...any) (*node, error) {
		where := at
		if where == "" {
			where = "the root"
		}
		return nil, fmt.Errorf("schemacheck: at %s: %s", where, fmt.Sprintf(format, args...))
	}
	if s == nil {
		return &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}, nil // absent: true
	}
	if depth > MaxDepth {
		return fail("schema nests deeper than %d", MaxDepth)
	}
	if err := unsupported(s); err != nil {
		return fail("%v", err)
	}
	if s.Schema != "" && s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		return fail("$schema %q is not supported", s.Schema)
	}
	if s.AnyOf != nil {
		branch, err := nullableBranch(s)
		if err != nil {
			return fail("%v", err)
		}
		n, err := compile(branch, joinAt(at, "anyOf/1"), depth+1)
		if err != nil {
			return nil, err
		}
		n.nullable = true
		return n, nil
	}
	n := &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	if s.Not != nil {
		if !reflect.ValueOf(*s.Not).IsZero() {
			return fail(`keyword "not" is supported only as the false schema ({"not": {}})`)
		}
		n.never = true
	}
	if s.Type != "" && len(s.Types) > 0 {
		return fail("both type and types are set")
	}
	names := s.Types
	if s.Type != "" {
		names = []string{s.Type}
	}
	for _, name := range names {
		b, ok := typeBit(name)
		if !ok {
			return fail("unknown type %q", name)
		}
		n.types |= b
	}
	if s.Const != nil {
		v, err := canonical(*s.Const)
		if err != nil {
			return fail("const: %v", err)
		}
		n.constant = []any{v}
	}
	if s.Enum != nil {
		n.enum = make([]any, 0, len(s.Enum))
		for _, e := range s.Enum {
			v, err := canonical(e)
			if err != nil {
				return fail("enum: %v", err)
			}
			n.enum = append(n.enum, v)
		}
	}
	if s.Format != "" {
		if formatCheck(s.Format) == nil {
			return fail("format %q is not supported", s.Format)
		}
		n.format = s.Format
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return fail("pattern: %v", err)
		}
		n.pattern = re
	}
	for _, b := range []struct {
		src *float64
		dst **bound
		kw  string
	}{{s.Minimum, &n.minimum, "minimum"}, {s.Maximum, &n.maximum, "maximum"}, {s.ExclusiveMinimum, &n.exclMin, "exclusiveMinimum"}, {s.ExclusiveMaximum, &n.exclMax, "exclusiveMaximum"}} {
		if b.src == nil {
			continue
		}
		if math.IsNaN(*b.src) || math.IsInf(*b.src, 0) {
			return fail("%s is not a finite number", b.kw)
		}
		d := floatDecimal(*b.src)
		*b.dst = &bound{value: d, text: d.String()}
	}
	for _, c := range []struct {
		src *int
		dst *int
		kw  string
	}{{s.MinLength, &n.minLength, "minLength"}, {s.MaxLength, &n.maxLength, "maxLength"}, {s.MinItems, &n.minItems, "minItems"}, {s.MaxItems, &n.maxItems, "maxItems"}} {
		if c.src == nil {
			continue
		}
		if *c.src < 0 {
			return fail("%s is negative", c.kw)
		}
		*c.dst = *c.src
	}
	n.required = slices.Clone(s.Required)
	if len(s.Properties) > 0 {
		n.properties = make(map[string]*node, len(s.Properties))
		for name, ps := range s.Properties {
			if ps == nil {
				return fail("property %q has no schema", name)
			}
			child, err := compile(ps, joinAt(at, "properties/"+name), depth+1)
			if err != nil {
				return nil, err
			}
			n.properties[name] = child
		}
	}
	if s.AdditionalProperties != nil {
		child, err := compile(s.AdditionalProperties, joinAt(at, "additionalProperties"), depth+1)
		if err != nil {
			return nil, err
		}
		n.additional = child
	}
	if s.Items != nil {
		child, err := compile(s.Items, joinAt(at, "items"), depth+1)
		if err != nil {
			return nil, err
		}
		n.items = child
	}
	return n, nil
}

// nullableBranch returns S of {"anyOf": [{"type": "null"}, S]}, the only
// anyOf supported; beside it the schema may hold annotations only.
func nullableBranch(s *jsonschema.Schema) (*jsonschema.Schema, error) {
	errForm := errors.New(`keyword "anyOf" is supported only as {"anyOf": [{"type": "null"}, S]} beside annotations`)
	if len(s.AnyOf) != 2 || s.AnyOf[0] == nil || s.AnyOf[1] == nil {
		return nil, errForm
	}
	first := *s.AnyOf[0]
	if first.Type != "null" {
		return nil, errForm
	}
	first.Type = ""
	if !reflect.ValueOf(first).IsZero() {
		return nil, errForm
	}
	rest := reflect.ValueOf(s).Elem()
	for i := range rest.NumField() {
		switch rest.Type().Field(i).Name {
		case "AnyOf", "Title", "Description", "Default", "Deprecated", "ReadOnly", "WriteOnly", "Examples", "Comment":
			continue
		}
		if !rest.Field(i).IsZero() {
			return nil, errForm
		}
	}
	return s.AnyOf[1], nil
}

func joinAt(at, tok string) string {
	if at == "" {
		return tok
	}
	return at + "/" + tok
}

// unsupported names the keywords of s that Compile does not implement.
func unsupported(s *jsonschema.Schema) error {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	var bad []string
	for i := range t.NumField() {
		f := t.Field(i)
		if knownField(f.Name) || v.Field(i).IsZero() {
			continue
		}
		if f.Name == "Extra" {
			for k := range s.Extra {
				bad = append(bad, k)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		bad = append(bad, name)
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("unsupported keyword(s): %s", strings.Join(bad, ", "))
}

// canonical turns a Go value from a schema into the form decoded arguments
// take (json.Number for numbers), so that equality is JSON equality.
func canonical(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Decode(raw)
}

// Decode reads one JSON value, numbers as json.Number, as Validate wants
// it. Anything after the value but space is an error.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// Validate checks v, a value decoded by [Decode] (or by encoding/json with
// UseNumber), and returns its errors: none if it is valid.
func (s *Schema) Validate(v any) []Error {
	w := walker{loc: make([]string, 0, 8)}
	w.check(s.root, v)
	return w.errs
}

type walker struct {
	loc  []string
	errs []Error
}

func (w *walker) add(e Error) {
	e.Location = slices.Clone(w.loc)
	w.errs = append(w.errs, e)
}

// TypeOf is the JSON type of a decoded value: numbers are all "number" (an
// integer is a number too); "" for a Go value that is not JSON.
func TypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, ok := parseDecimal(string(x)); !ok {
			return ""
		}
		return "number"
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func (w *walker) check(n *node, v any) {
	if !n.nullable {
		w.checkNode(n, v)
		return
	}
	if v == nil {
		return
	}
	before := len(w.errs)
	w.checkNode(n, v)
	if len(w.errs) == before {
		return
	}
	// Both branches failed. As the general validators do, say that the
	// null branch failed too: in the type error at this location, if there
	// is one, or in a type error of its own.
	for i := before; i < len(w.errs); i++ {
		if e := &w.errs[i]; e.Keyword == "type" && slices.Equal(e.Location, w.loc) {
			e.Types = append([]string{"null"}, e.Types...) // null comes first in the order errors list types
			return
		}
	}
	w.errs = slices.Insert(w.errs, before, Error{Location: slices.Clone(w.loc), Keyword: "type", Types: []string{"null"}, TypeGot: TypeOf(v), Got: v, NullBranch: true})
}

func (w *walker) checkNode(n *node, v any) {
	if n.never {
		w.add(Error{Keyword: "false", Got: v})
		return
	}
	t := TypeOf(v)
	if t == "" {
		w.add(Error{Keyword: "invalid", Got: v})
		return
	}
	if n.types != 0 && !n.types.has(t) {
		isInt := false
		if t == "number" && n.types.has("integer") {
			d, _ := decimalOf(v)
			isInt = d.isInt()
		}
		if !isInt {
			w.add(Error{Keyword: "type", Types: n.types.names(), TypeGot: t, Got: v})
			return
		}
	}
	if n.constant != nil && !equal(v, n.constant[0]) {
		w.add(Error{Keyword: "const", Values: n.constant, Got: v})
		return
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return equal(v, e) }) {
		w.add(Error{Keyword: "enum", Values: n.enum, Got: v})
		return
	}
	if n.format != "" {
		if s, ok := v.(string); ok && !formatCheck(n.format)(s) {
			w.add(Error{Keyword: "format", Want: n.format, Got: v})
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		w.object(n, x)
	case []any:
		w.array(n, x)
	case string:
		w.string(n, x)
	case json.Number, float64:
		w.number(n, x)
	}
}

func (w *walker) object(n *node, obj map[string]any) {
	var missing []string
	for _, name := range n.required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		w.add(Error{Keyword: "required", Names: missing})
	}
	if n.properties == nil && n.additional == nil {
		return
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names) // errors in a stable order, whatever the map's
	var unknown []string
	for _, name := range names {
		child := n.properties[name]
		if child == nil {
			child = n.additional
		}
		if child == nil {
			continue
		}
		if child.never && child == n.additional {
			unknown = append(unknown, name)
			continue
		}
		w.loc = append(w.loc, name)
		w.check(child, obj[name])
		w.loc = w.loc[:len(w.loc)-1]
	}
	if len(unknown) > 0 {
		w.add(Error{Keyword: "additionalProperties", Names: unknown})
	}
}

func (w *walker) array(n *node, arr []any) {
	if n.minItems >= 0 && len(arr) < n.minItems {
		w.add(Error{Keyword: "minItems", Want: strconv.Itoa(n.minItems), Count: len(arr)})
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		w.add(Error{Keyword: "maxItems", Want: strconv.Itoa(n.maxItems), Count: len(arr)})
	}
	if n.items == nil {
		return
	}
	for i, item := range arr {
		w.loc = append(w.loc, strconv.Itoa(i))
		w.check(n.items, item)
		w.loc = w.loc[:len(w.loc)-1]
	}
}

func (w *walker) string(n *node, s string) {
	if n.minLength >= 0 || n.maxLength >= 0 {
		count := utf8.RuneCountInString(s)
		if n.minLength >= 0 && count < n.minLength {
			w.add(Error{Keyword: "minLength", Want: strconv.Itoa(n.minLength), Count: count, Got: s})
		}
		if n.maxLength >= 0 && count > n.maxLength {
			w.add(Error{Keyword: "maxLength", Want: strconv.Itoa(n.maxLength), Count: count, Got: s})
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		w.add(Error{Keyword: "pattern", Want: n.pattern.String(), Got: s})
	}
}

func (w *walker) number(n *node, v any) {
	if n.minimum == nil && n.maximum == nil && n.exclMin == nil && n.exclMax == nil {
		return
	}
	d, _ := decimalOf(v) // TypeOf checked it
	for _, c := range []struct {
		b     *bound
		kw    string
		fails func(int) bool
	}{
		{n.minimum, "minimum", func(c int) bool { return c < 0 }},
		{n.maximum, "maximum", func(c int) bool { return c > 0 }},
		{n.exclMin, "exclusiveMinimum", func(c int) bool { return c <= 0 }},
		{n.exclMax, "exclusiveMaximum", func(c int) bool { return c >= 0 }},
	} {
		if c.b != nil && c.fails(d.cmp(c.b.value)) {
			w.add(Error{Keyword: c.kw, Want: c.b.text, Got: v, GotText: d.String()})
		}
	}
}

// equal is JSON equality: numbers by value (1, 1.0 and 1e0 are equal).
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number, float64:
		dx, okx := decimalOf(x)
		dy, oky := decimalOf(b)
		return okx && oky && dx.cmp(dy) == 0
	case nil, bool, string:
		return a == b
	}
	return false
}

// formatCheck returns the check of a format, nil for one not implemented.
func formatCheck(name string) func(string) bool {
	switch name {
	case "uri":
		return isURI
	}
	return nil
}

// isURI says whether s is an absolute URI (RFC 3986 section 4.3 with a
// fragment allowed, as JSON Schema's "uri" format is defined): it parses,
// has a scheme, and an IPv6 host is in brackets and has no zone.
func isURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return false
	}
	host := u.Hostname()
	if !strings.Contains(host, ":") {
		return true
	}
	if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
		return false
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Zone() == ""
}
