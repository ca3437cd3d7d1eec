package pdftext

import (
	"bytes"
	"errors"
	"strconv"
)

// A small reader of PDF objects (PDF 32000-1:2008, 7.2 and 7.3), enough to
// follow the cross-reference chain and object-stream dictionaries before
// the library does. Values are int64, float64, pdfName, pdfString, []any,
// map[pdfName]any, pdfRef, keyword and nil.
type (
	pdfName   string
	pdfString string
	keyword   string
	pdfRef    struct{ num, gen int64 }
)

// maxNesting bounds arrays and dictionaries inside each other.
const maxNesting = 64

var errSyntax = errors.New("PDF syntax error")

type lexer struct {
	data []byte
	pos  int
}

func isWhite(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isDelimiter(c byte) bool {
	return bytes.IndexByte([]byte("()<>[]{}/%"), c) >= 0
}

// skip passes white space and comments.
func (l *lexer) skip() {
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		switch {
		case isWhite(c):
			l.pos++
		case c == '%':
			for l.pos < len(l.data) && l.data[l.pos] != '\n' && l.data[l.pos] != '\r' {
				l.pos++
			}
		default:
			return
		}
	}
}

// token reads one token: a number, name, string, keyword, or one of the
// delimiters "<<", ">>", "[", "]" (as keywords).
func (l *lexer) token() (any, error) {
	l.skip()
	if l.pos >= len(l.data) {
		return nil, errSyntax
	}
	c := l.data[l.pos]
	switch {
	case c == '[':
		l.pos++
		return keyword("["), nil
	case c == ']':
		l.pos++
		return keyword("]"), nil
	case c == '<' && l.pos+1 < len(l.data) && l.data[l.pos+1] == '<':
		l.pos += 2
		return keyword("<<"), nil
	case c == '>' && l.pos+1 < len(l.data) && l.data[l.pos+1] == '>':
		l.pos += 2
		return keyword(">>"), nil
	case c == '<':
		end := bytes.IndexByte(l.data[l.pos:], '>')
		if end < 0 {
			return nil, errSyntax
		}
		s := l.data[l.pos+1 : l.pos+end]
		l.pos += end + 1
		return hexString(s)
	case c == '(':
		return l.literal()
	case c == '/':
		start := l.pos + 1
		l.pos++
		for l.pos < len(l.data) && !isWhite(l.data[l.pos]) && !isDelimiter(l.data[l.pos]) {
			l.pos++
		}
		return pdfName(l.data[start:l.pos]), nil
	case isDelimiter(c):
		return nil, errSyntax
	}
	start := l.pos
	for l.pos < len(l.data) && !isWhite(l.data[l.pos]) && !isDelimiter(l.data[l.pos]) {
		l.pos++
	}
	word := string(l.data[start:l.pos])
	if i, err := strconv.ParseInt(word, 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(word, 64); err == nil && word[0] != 'I' && word[0] != 'N' && word[0] != 'i' && word[0] != 'n' {
		return f, nil
	}
	return keyword(word), nil
}

// hexString decodes a <hex string>'s digits (7.3.4.3): white space is
// ignored and a missing last digit is 0.
func hexString(s []byte) (pdfString, error) {
	var out []byte
	var hi byte
	odd := false
	for _, c := range s {
		if isWhite(c) {
			continue
		}
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return "", errSyntax
		}
		if odd {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		odd = !odd
	}
	if odd {
		out = append(out, hi<<4)
	}
	return pdfString(out), nil
}

// literal reads a (string), balancing unescaped parentheses, and decodes
// its escapes (7.3.4.2).
func (l *lexer) literal() (any, error) {
	depth := 0
	var out []byte
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		l.pos++
		switch c {
		case '\\':
			if l.pos >= len(l.data) {
				return nil, errSyntax
			}
			e := l.data[l.pos]
			l.pos++
			switch e {
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case '\r':
				if l.pos < len(l.data) && l.data[l.pos] == '\n' {
					l.pos++
				}
			case '\n':
			case '0', '1', '2', '3', '4', '5', '6', '7':
				x := int(e - '0')
				for i := 0; i < 2 && l.pos < len(l.data) && '0' <= l.data[l.pos] && l.data[l.pos] <= '7'; i++ {
					x = x*8 + int(l.data[l.pos]-'0')
					l.pos++
				}
				out = append(out, byte(x))
			default: // \( \) \\, and an unknown escape stands for its character
				out = append(out, e)
			}
			continue
		case '(':
			if depth++; depth == 1 {
				continue
			}
		case ')':
			if depth--; depth == 0 {
				return pdfString(out), nil
			}
		}
		out = append(out, c)
	}
	return nil, errSyntax
}

// object reads one object; "N G R" is a pdfRef.
func (l *lexer) object(depth int) (any, error) {
	if depth > maxNesting {
		return nil, errSyntax
	}
	tok, err := l.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case keyword("<<"):
		d := map[pdfName]any{}
		for {
			k, err := l.token()
			if err != nil {
				return nil, err
			}
			if k == keyword(">>") {
				return d, nil
			}
			key, ok := k.(pdfName)
			if !ok {
				return nil, errSyntax
			}
			if d[key], err = l.object(depth + 1); err != nil {
				return nil, err
			}
		}
	case keyword("["):
		var a []any
		for {
			save := l.pos
			t, err := l.token()
			if err != nil {
				return nil, err
			}
			if t == keyword("]") {
				return a, nil
			}
			l.pos = save
			v, err := l.object(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case keyword("null"):
		return nil, nil
	case keyword("true"):
		return true, nil
	case keyword("false"):
		return false, nil
	case keyword(">>"), keyword("]"):
		return nil, errSyntax
	}
	if num, ok := tok.(int64); ok {
		save := l.pos
		if gen, err := l.token(); err == nil {
			if g, ok := gen.(int64); ok {
				if r, err := l.token(); err == nil && r == keyword("R") {
					return pdfRef{num, g}, nil
				}
			}
		}
		l.pos = save
		return num, nil
	}
	return tok, nil
}
