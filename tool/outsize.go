package tool

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// DefaultMaxOutputBytes bounds a tool's output as JSON (see
// [WithMaxOutputBytes]). It is checked before the output is encoded: an
// output can hold the same large string many times over, cheap in memory and
// enormous once encoded, and encoding it whole before any bound applied
// could run a server out of memory.
const DefaultMaxOutputBytes = 16 << 20

// maxSizeDepth bounds how deep the size estimate walks; encoding/json itself
// gives up on pointer cycles about that deep.
const maxSizeDepth = 1000

// WithMaxOutputBytes sets the bound of a tool's output as JSON (default
// [DefaultMaxOutputBytes]); an output over it fails with
// [CodeResultTooLarge]. n <= 0 keeps the default.
func WithMaxOutputBytes(n int) Option {
	return func(r *Registry) {
		if n > 0 {
			r.maxOutput = n
		}
	}
}

// tooLarge is the failure of an output over the bound.
func tooLarge(size, limit int) *Error {
	return &Error{Code: CodeResultTooLarge, Message: fmt.Sprintf(
		"the result is larger than the %d bytes a tool may return (at least %d bytes as JSON); ask for less: fewer rows, a smaller page or a narrower query",
		limit, size)}
}

// checkOutputSize fails an output whose JSON would be over limit, without
// encoding it.
func checkOutputSize(value any, limit int) error {
	if n := jsonSizeAtLeast(reflect.ValueOf(value), limit); n > limit {
		return tooLarge(n, limit)
	}
	return nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	rawMessage    = reflect.TypeFor[json.RawMessage]()
)

// jsonSizeAtLeast returns a lower bound of the size of v encoded as JSON by
// encoding/json, walking v without encoding it; it stops as soon as the
// bound passes limit, so its work is bounded by limit too (not by how many
// times a value is referenced). Values with their own marshalers count as
// little as they might encode to (json.RawMessage as its length).
func jsonSizeAtLeast(v reflect.Value, limit int) int {
	s := sizer{limit: limit}
	s.value(v, 0)
	return s.n
}

type sizer struct{ n, limit int }

func (s *sizer) value(v reflect.Value, depth int) {
	if s.n > s.limit || depth > maxSizeDepth {
		return
	}
	if !v.IsValid() {
		s.n += len("null")
		return
	}
	t := v.Type()
	if t == rawMessage {
		s.n += max(v.Len(), len("null"))
		return
	}
	if t.Kind() != reflect.Interface && (t.Implements(jsonMarshaler) || t.Implements(textMarshaler)) {
		s.n += 2 // at least "" or {} (or null): what it writes is its own
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		s.n += len("true")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		s.n++
	case reflect.String:
		s.n += v.Len() + 2 // escapes only add
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			s.n += len("null")
			return
		}
		s.value(v.Elem(), depth+1)
	case reflect.Slice:
		if v.IsNil() {
			s.n += len("null")
			return
		}
		if t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(jsonMarshaler) && !t.Elem().Implements(textMarshaler) {
			s.n += (v.Len()+2)/3*4 + 2 // base64
			return
		}
		s.list(v, depth)
	case reflect.Array:
		s.list(v, depth)
	case reflect.Map:
		if v.IsNil() {
			s.n += len("null")
			return
		}
		s.n += 2
		it := v.MapRange()
		for i := 0; it.Next() && s.n <= s.limit; i++ {
			if i > 0 {
				s.n++
			}
			k := it.Key()
			if k.Kind() == reflect.String {
				s.n += k.Len() + 3
			} else {
				s.n += 4 // "1":
			}
			s.value(it.Value(), depth+1)
		}
	case reflect.Struct:
		s.n += 2
		s.fields(v, depth)
	}
}

func (s *sizer) list(v reflect.Value, depth int) {
	s.n += 2 + max(v.Len()-1, 0) // brackets and commas
	for i := 0; i < v.Len() && s.n <= s.limit; i++ {
		s.value(v.Index(i), depth+1)
	}
}

// fields counts the members a struct encodes to: exported fields not tagged
// "-", not omitted as empty, and the fields of embedded structs.
func (s *sizer) fields(v reflect.Value, depth int) {
	t := v.Type()
	for i := 0; i < t.NumField() && s.n <= s.limit; i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				ft, fv = ft.Elem(), fv.Elem()
			}
			if ft.Kind() == reflect.Struct {
				s.fields(fv, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if strings.Contains(","+opts+",", ",omitempty,") && emptyValue(fv) ||
			strings.Contains(","+opts+",", ",omitzero,") && fv.IsZero() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.n += len(name) + 3 // "name":
		s.value(fv, depth+1)
	}
}

// emptyValue is encoding/json's test for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
