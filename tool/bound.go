package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
)

// Bounds of what a call hands on. A tool's output is only as large as its
// upstream's answer, and an error can quote its input: every surface that
// passes results on to a model, a stream or a database needs a bound.
const (
	// DefaultMaxResultBytes is the default bound of a result an agent sees
	// (see [Result.Bounded]): enough for a page of search results or an
	// article, small next to a model's context window.
	DefaultMaxResultBytes = 64 << 10
	// MinResultBytes is the smallest bound [BoundJSON] honours: below it
	// not even the truncation note fits.
	MinResultBytes = 1 << 10
	// MaxErrorBytes bounds the message of a failed call's [Error].
	MaxErrorBytes = 8 << 10
	// MaxSummaryBytes bounds a successful call's summary.
	MaxSummaryBytes = 1 << 10
	// maxLogBytes bounds a value the registry logs.
	maxLogBytes = 1 << 10
	// maxNameBytes bounds a tool name in spans, logs and errors: a name
	// that long is not registered, whatever the caller sent.
	maxNameBytes = 128
)

// TruncatedField is the member a bounded result gets when something was cut:
// a note saying how large the result was and what was cut.
const TruncatedField = "_truncated"

// Bounded returns the result envelope cut to at most limit bytes (at least
// MinResultBytes; see [BoundJSON]). A result within the bound is returned as
// is.
func (r *Result) Bounded(limit int) json.RawMessage {
	if len(r.JSON) <= max(limit, MinResultBytes) {
		return r.JSON
	}
	return BoundJSON(r.JSON, limit)
}

// BoundedText is [Result.ModelText] cut to at most limit bytes (at least
// MinResultBytes): an output's own text form is cut on a character boundary
// and ends with a note saying so; without one, it is the envelope bounded as
// JSON ([Result.Bounded]).
func (r *Result) BoundedText(limit int) string {
	if r.Err != nil || r.text == "" {
		return string(r.Bounded(limit))
	}
	limit = max(limit, MinResultBytes)
	if len(r.text) <= limit {
		return r.text
	}
	note := fmt.Sprintf("\n…(cut: the text was %d bytes, over the limit of %d)", len(r.text), limit)
	return textclip.Prefix(r.text, limit-len(note)) + note
}

// boundSteps are the cuts BoundJSON tries in turn: the longest string kept
// (a fraction of the limit when positive, bytes when negative) and the most
// members kept of an array or object.
var boundSteps = []struct{ str, items int }{
	{2, 1000}, {8, 200}, {32, 50}, {-256, 20}, {-64, 5},
}

// BoundJSON returns raw cut to at most limit bytes (at least MinResultBytes),
// still valid JSON. It keeps the structure and the order of members and cuts,
// harder until the value fits: long strings (which end in "…(N more bytes)"),
// then arrays and objects (whose last member says how many more there were).
// The top-level object gets a [TruncatedField] note. A value that does not
// fit even so becomes {"_truncated": note, "partial": the first bytes of raw
// as a string}. raw within the limit is returned as is.
func BoundJSON(raw json.RawMessage, limit int) json.RawMessage {
	limit = max(limit, MinResultBytes)
	if len(raw) <= limit {
		return raw
	}
	note := fmt.Sprintf("the result was %d bytes, over the limit of %d: it was cut where marked …", len(raw), limit)
	for _, step := range boundSteps {
		str := step.str
		if str > 0 {
			str = limit / str
		} else {
			str = -str
		}
		out, err := rewriteJSON(raw, cutString(str), step.items)
		if err != nil {
			break // not JSON: only a prefix can be shown
		}
		if out = withNote(out, note); len(out) <= limit {
			return out
		}
	}
	return partial(raw, limit)
}

// partial is the last resort of BoundJSON: the first bytes of raw, as a string.
func partial(raw []byte, limit int) json.RawMessage {
	note := fmt.Sprintf("the result was %d bytes, over the limit of %d: partial holds its first bytes", len(raw), limit)
	for n := limit / 2; ; n /= 2 {
		for n > 0 && n < len(raw) && !utf8.RuneStart(raw[n]) {
			n--
		}
		var b bytes.Buffer
		b.WriteString(`{"` + TruncatedField + `":`)
		writeString(&b, note)
		b.WriteString(`,"partial":`)
		writeString(&b, string(raw[:min(n, len(raw))]))
		b.WriteByte('}')
		if b.Len() <= limit || n == 0 {
			return b.Bytes()
		}
	}
}

// withNote adds the truncation note to a JSON object, or wraps any other
// value in one.
func withNote(v []byte, note string) []byte {
	var b bytes.Buffer
	b.Grow(len(v) + len(note) + 32)
	if len(v) >= 2 && v[0] == '{' {
		b.Write(v[:len(v)-1])
		if len(v) > 2 {
			b.WriteByte(',')
		}
		writeString(&b, TruncatedField)
		b.WriteByte(':')
		writeString(&b, note)
		b.WriteByte('}')
		return b.Bytes()
	}
	b.WriteString(`{"` + TruncatedField + `":`)
	writeString(&b, note)
	b.WriteString(`,"value":`)
	b.Write(v)
	b.WriteByte('}')
	return b.Bytes()
}

// cutString returns a function cutting strings longer than n bytes.
func cutString(n int) func(string) string {
	return func(s string) string {
		if len(s) <= n {
			return s
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…(" + strconv.Itoa(len(s)-cut) + " more bytes)"
	}
}

// rewriteJSON re-encodes one JSON value token by token, keeping the order of
// members: each string (object keys too) goes through str, and arrays and
// objects keep at most items members (items < 0: all), then a marker of
// those left out. Numbers go through str too and are kept as written unless
// str changes them.
func rewriteJSON(raw []byte, str func(string) string, items int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	w := rewriter{dec: dec, str: str, items: items}
	w.out.Grow(min(len(raw), 1<<20))
	if err := w.value(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("tool: trailing data after the JSON value")
	}
	return w.out.Bytes(), nil
}

type rewriter struct {
	dec   *json.Decoder
	out   bytes.Buffer
	str   func(string) string
	items int
}

func (w *rewriter) value() error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return w.object()
		case '[':
			return w.array()
		}
		return fmt.Errorf("tool: unexpected %v", t)
	case string:
		writeString(&w.out, w.str(t))
	case json.Number:
		// A number goes through str as well (a secret can be all digits);
		// if str changes it, it can only be written as a string.
		if s := w.str(t.String()); s != t.String() {
			writeString(&w.out, s)
		} else {
			w.out.WriteString(s)
		}
	case bool:
		w.out.WriteString(strconv.FormatBool(t))
	case nil:
		w.out.WriteString("null")
	}
	return nil
}

func (w *rewriter) object() error {
	w.out.WriteByte('{')
	n := 0
	for w.dec.More() {
		key, err := w.dec.Token()
		if err != nil {
			return err
		}
		k, _ := key.(string)
		if w.items >= 0 && n >= w.items {
			if err := w.skip(); err != nil {
				return err
			}
			n++
			continue
		}
		if n > 0 {
			w.out.WriteByte(',')
		}
		writeString(&w.out, w.str(k))
		w.out.WriteByte(':')
		if err := w.value(); err != nil {
			return err
		}
		n++
	}
	if w.items >= 0 && n > w.items {
		if w.items > 0 {
			w.out.WriteByte(',')
		}
		w.out.WriteString(`"…":`)
		writeString(&w.out, strconv.Itoa(n-w.items)+" more fields")
	}
	_, err := w.dec.Token() // '}'
	w.out.WriteByte('}')
	return err
}

func (w *rewriter) array() error {
	w.out.WriteByte('[')
	n := 0
	for w.dec.More() {
		if w.items >= 0 && n >= w.items {
			if err := w.skip(); err != nil {
				return err
			}
			n++
			continue
		}
		if n > 0 {
			w.out.WriteByte(',')
		}
		if err := w.value(); err != nil {
			return err
		}
		n++
	}
	if w.items >= 0 && n > w.items {
		if w.items > 0 {
			w.out.WriteByte(',')
		}
		writeString(&w.out, "…("+strconv.Itoa(n-w.items)+" more items)")
	}
	_, err := w.dec.Token() // ']'
	w.out.WriteByte(']')
	return err
}

// skip reads past one value.
func (w *rewriter) skip() error {
	var skipped json.RawMessage
	return w.dec.Decode(&skipped)
}

// writeString writes s as a JSON string, escaping only what JSON requires (as
// [Marshal] does, < > & stay as they are). Invalid UTF-8 becomes U+FFFD.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029': // as encoding/json does, for JavaScript
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}
