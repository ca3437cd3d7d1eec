package opendata

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
)

// This file is a lexer for PostgreSQL's SQL, written from the documented
// lexical structure ("Lexical Structure" in the manual) and the behaviour of
// the server's scanner (scan.l) and its token filter (parser.c, for
// UESCAPE), with standard_conforming_strings on. The SQL guard relies on it
// to see the same tokens, and so the same statement boundaries, as the
// server; the guard then sends text rebuilt from these tokens, so what runs
// is what was checked (sqlcheck.go).
//
// Where releases differ it follows PostgreSQL 16 and later (\v is white
// space; integers may be written 0x…, 0o…, 0b… and with underscores). Those
// forms are re-written canonically (decimal digits, spaces), so the text sent
// means the same on older servers too. Anything the server would reject (a
// lexical error, a character it returns as a lone "other" token, $1
// parameters, which the portal never binds) is refused here.

// namedatalen is PostgreSQL's NAMEDATALEN: identifiers keep at most
// namedatalen-1 bytes.
const namedatalen = 64

// sqlTokKind tells tokens apart.
type sqlTokKind byte

const (
	tokIdent  sqlTokKind = iota + 1 // unquoted identifier or key word
	tokQIdent                       // quoted identifier, "…" or U&"…"
	tokString                       // character string constant of any form
	tokBits                         // B'…' or X'…'
	tokNumber                       // numeric constant
	tokOp                           // operator, including the one-character ones (+ - * / % ^ < > =)
	tokPunct                        // , ( ) [ ] . ; : :: := =>
)

// sqlToken is one token. For identifiers val is what PostgreSQL compares:
// unquoted ones lower-cased (ASCII only, as the server does in UTF-8) and
// both kinds truncated to namedatalen-1 bytes; key words are identifiers
// here, matched by val. For strings val is the decoded value. text is the
// token written canonically, as it is sent.
type sqlToken struct {
	kind sqlTokKind
	text string
	val  string
	pos  int // byte offset in the input, for messages

	// Before UESCAPE is resolved: a U& string or identifier (raw content
	// in val), and whether a string is a plain SCONST (what UESCAPE takes).
	unicode, sconst bool
}

// sqlLexError is a lexical error at a byte offset of the input.
type sqlLexError struct {
	pos int
	msg string
}

func (e *sqlLexError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.msg, e.pos) }

func lexErr(pos int, format string, args ...any) error {
	return &sqlLexError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

// isSQLSpace is scan.l's {space}.
func isSQLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isOpChar is scan.l's {op_chars}.
func isOpChar(c byte) bool { return strings.IndexByte("~!@#^&|`?+-*/%<>=", c) >= 0 }

// lexSQL splits sql into tokens, skipping white space and comments, and
// resolves U&… constants with their UESCAPE clauses.
func lexSQL(sql string) ([]sqlToken, error) {
	lx := sqlLexer{s: sql}
	for {
		if err := lx.skipSpace(); err != nil {
			return nil, err
		}
		if lx.i >= len(sql) {
			break
		}
		if err := lx.next(); err != nil {
			return nil, err
		}
	}
	return resolveUnicode(lx.toks)
}

type sqlLexer struct {
	s    string
	i    int
	toks []sqlToken
}

func (lx *sqlLexer) emit(t sqlToken) { lx.toks = append(lx.toks, t) }

// skipSpace skips white space, -- comments (to \n or \r: scan.l's newline
// is either) and nested /* */ comments.
func (lx *sqlLexer) skipSpace() error {
	s := lx.s
	for lx.i < len(s) {
		switch {
		case isSQLSpace(s[lx.i]):
			lx.i++
		case strings.HasPrefix(s[lx.i:], "--"):
			lx.i = commentEnd(s, lx.i)
		case strings.HasPrefix(s[lx.i:], "/*"):
			start, depth := lx.i, 0
			lx.i += 2
			for {
				switch {
				case lx.i >= len(s):
					return lexErr(start, "unterminated /* comment")
				case strings.HasPrefix(s[lx.i:], "/*"):
					depth++
					lx.i += 2
					continue
				case strings.HasPrefix(s[lx.i:], "*/"):
					lx.i += 2
					if depth == 0 {
						break
					}
					depth--
					continue
				default:
					lx.i++
					continue
				}
				break
			}
		default:
			return nil
		}
	}
	return nil
}

// commentEnd returns the offset of the newline (\n or \r) ending the --
// comment at i, or len(s).
func commentEnd(s string, i int) int {
	if j := strings.IndexAny(s[i:], "\n\r"); j >= 0 {
		return i + j
	}
	return len(s)
}

// next lexes the token at lx.i (not white space).
func (lx *sqlLexer) next() error {
	s, i := lx.s, lx.i
	c := s[i]
	peek := func(k int) byte {
		if i+k < len(s) {
			return s[i+k]
		}
		return 0
	}
	switch {
	case c == '\'':
		return lx.quoted(i, i, 'q')
	case (c == 'e' || c == 'E') && peek(1) == '\'':
		return lx.quoted(i, i+1, 'e')
	case (c == 'b' || c == 'B') && peek(1) == '\'':
		return lx.quoted(i, i+1, 'b')
	case (c == 'x' || c == 'X') && peek(1) == '\'':
		return lx.quoted(i, i+1, 'x')
	case (c == 'u' || c == 'U') && peek(1) == '&' && peek(2) == '\'':
		return lx.quoted(i, i+2, 'u')
	case (c == 'n' || c == 'N') && peek(1) == '\'':
		// N'…' is the key word NCHAR followed by an ordinary string.
		lx.emit(sqlToken{kind: tokIdent, text: "NCHAR", val: "nchar", pos: i})
		lx.i = i + 1
		return nil
	case c == '"':
		return lx.quotedIdent(i, i, false)
	case (c == 'u' || c == 'U') && peek(1) == '&' && peek(2) == '"':
		return lx.quotedIdent(i, i+2, true)
	case c == '$':
		return lx.dollar(i)
	case isIdentStart(c):
		j := i + 1
		for j < len(s) && isIdentCont(s[j]) {
			j++
		}
		word := s[i:j]
		lx.emit(sqlToken{kind: tokIdent, text: word, val: truncateIdent(asciiLower(word)), pos: i})
		lx.i = j
		return nil
	case isDigit(c) || c == '.' && isDigit(peek(1)):
		return lx.number(i)
	case c == '.':
		if peek(1) == '.' {
			return lexErr(i, `".." is not SQL`)
		}
		lx.emit(sqlToken{kind: tokPunct, text: ".", pos: i})
		lx.i = i + 1
		return nil
	case c == ':':
		n := 1
		if peek(1) == ':' || peek(1) == '=' {
			n = 2
		}
		lx.emit(sqlToken{kind: tokPunct, text: s[i : i+n], pos: i})
		lx.i = i + n
		return nil
	case strings.IndexByte(",()[];", c) >= 0:
		lx.emit(sqlToken{kind: tokPunct, text: s[i : i+1], pos: i})
		lx.i = i + 1
		return nil
	case isOpChar(c):
		return lx.operator(i)
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return lexErr(i, "unexpected character %q", r)
}

// operator lexes scan.l's {operator}: the longest run of operator
// characters, cut before any -- or /* in it, then without trailing + and -
// unless the operator has one of ~ ! @ # ^ & | ` ? % (so "=-" is "=" and
// "-", but "@-" is one operator).
func (lx *sqlLexer) operator(i int) error {
	s := lx.s
	j := i
	for j < len(s) && isOpChar(s[j]) {
		j++
	}
	op := s[i:j]
	for _, cut := range []string{"/*", "--"} {
		if k := strings.Index(op, cut); k >= 0 {
			op = op[:k]
		}
	}
	if len(op) > 1 && (op[len(op)-1] == '+' || op[len(op)-1] == '-') && !strings.ContainsAny(op, "~!@#^&|`?%") {
		for len(op) > 1 && (op[len(op)-1] == '+' || op[len(op)-1] == '-') {
			op = op[:len(op)-1]
		}
	}
	if len(op) >= namedatalen {
		return lexErr(i, "operator too long")
	}
	kind := tokOp
	if op == "=>" {
		kind = tokPunct
	}
	lx.emit(sqlToken{kind: kind, text: op, pos: i})
	lx.i = i + len(op)
	return nil
}

// number lexes the numeric constants of PostgreSQL 16 and later: decimal
// integers and decimals with optional exponent, 0x/0o/0b integers, all with
// single underscores between digits. A constant followed directly by an
// identifier character is "trailing junk", an error.
func (lx *sqlLexer) number(i int) error {
	s := lx.s
	digits := func(j int, ok func(byte) bool) int { // (_?digit)* after a first digit at j-1
		for j < len(s) {
			if ok(s[j]) {
				j++
			} else if s[j] == '_' && j+1 < len(s) && ok(s[j+1]) {
				j += 2
			} else {
				break
			}
		}
		return j
	}
	junk := func(j int) error {
		if j < len(s) && isIdentStart(s[j]) {
			return lexErr(i, "trailing junk after numeric literal")
		}
		return nil
	}
	if s[i] == '0' && i+1 < len(s) && strings.IndexByte("xXoObB", s[i+1]) >= 0 {
		base, ok := 16, isHexDigit
		switch s[i+1] {
		case 'o', 'O':
			base, ok = 8, func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b', 'B':
			base, ok = 2, func(c byte) bool { return c == '0' || c == '1' }
		}
		j := i + 2
		if j < len(s) && s[j] == '_' {
			j++
		}
		if j >= len(s) || !ok(s[j]) {
			return lexErr(i, "invalid integer literal %q", s[i:min(j, len(s))])
		}
		j = digits(j+1, ok)
		if err := junk(j); err != nil {
			return err
		}
		n, _ := new(big.Int).SetString(strings.ReplaceAll(s[i+2:j], "_", ""), base)
		lx.emit(sqlToken{kind: tokNumber, text: n.String(), pos: i})
		lx.i = j
		return nil
	}
	j := i
	if isDigit(s[j]) {
		j = digits(j+1, isDigit)
	}
	if j < len(s) && s[j] == '.' {
		if j+1 < len(s) && s[j+1] == '.' {
			// "1..2" is 1, "..", 2 (and ".." is refused when it is lexed).
			lx.emit(sqlToken{kind: tokNumber, text: strings.ReplaceAll(s[i:j], "_", ""), pos: i})
			lx.i = j
			return nil
		}
		j++
		if j < len(s) && isDigit(s[j]) {
			j = digits(j+1, isDigit)
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
			if k >= len(s) || !isDigit(s[k]) {
				return lexErr(i, "trailing junk after numeric literal")
			}
		}
		if k < len(s) && isDigit(s[k]) {
			j = digits(k+1, isDigit)
		}
		// Otherwise "1e…" is junk, reported just below.
	}
	if err := junk(j); err != nil {
		return err
	}
	lx.emit(sqlToken{kind: tokNumber, text: strings.ReplaceAll(s[i:j], "_", ""), pos: i})
	lx.i = j
	return nil
}

// dollar lexes $n (a parameter, refused) or a dollar-quoted string $tag$…$tag$.
func (lx *sqlLexer) dollar(i int) error {
	s := lx.s
	j := i + 1
	if j < len(s) && isDigit(s[j]) {
		return lexErr(i, "$%c parameters are not supported (put the values in the query)", s[j])
	}
	if j < len(s) && (isIdentStart(s[j])) {
		j++
		for j < len(s) && isIdentStart(s[j]) || j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j >= len(s) || s[j] != '$' {
		return lexErr(i, "unexpected character '$'")
	}
	delim := s[i : j+1]
	end := strings.Index(s[j+1:], delim)
	if end < 0 {
		return lexErr(i, "unterminated dollar-quoted string")
	}
	val := s[j+1 : j+1+end]
	lx.emit(sqlToken{kind: tokString, text: quoteSQLString(val), val: val, pos: i, sconst: true})
	lx.i = j + 1 + end + len(delim)
	return nil
}

// quotedIdent lexes "…" (or U&"…" when unicode), where "" is a quote.
func (lx *sqlLexer) quotedIdent(start, q int, unicode bool) error {
	s := lx.s
	var b strings.Builder
	j := q + 1
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return lexErr(start, "unterminated quoted identifier")
		}
		b.WriteString(s[j : j+k])
		j += k + 1
		if j < len(s) && s[j] == '"' {
			b.WriteByte('"')
			j++
			continue
		}
		break
	}
	if b.Len() == 0 {
		return lexErr(start, "zero-length delimited identifier")
	}
	t := sqlToken{kind: tokQIdent, val: b.String(), pos: start, unicode: unicode}
	if !unicode {
		t.val = truncateIdent(t.val)
		t.text = quoteSQLIdent(t.val)
	}
	lx.emit(t)
	lx.i = j
	return nil
}

// quoted lexes a quoted constant whose opening quote is at q: kind 'q'
// ('…'), 'e' (E'…'), 'b' (B'…'), 'x' (X'…') or 'u' (U&'…'). After each
// closing quote, white space holding a newline and then another quote
// continues the constant (scan.l's {quotecontinue}).
func (lx *sqlLexer) quoted(start, q int, kind byte) error {
	s := lx.s
	var b []byte
	j := q + 1
	highSurrogate := rune(0) // E'…': a \u high surrogate waiting for its low half
	for {
		if j >= len(s) {
			return lexErr(start, "unterminated quoted string")
		}
		c := s[j]
		if highSurrogate != 0 && !(c == '\\' && j+1 < len(s) && (s[j+1] == 'u' || s[j+1] == 'U')) {
			return lexErr(j, "invalid Unicode surrogate pair")
		}
		switch {
		case c == '\'' && kind != 'b' && kind != 'x' && j+1 < len(s) && s[j+1] == '\'':
			b = append(b, '\'')
			j += 2
		case c == '\'':
			if k := quoteContinues(s, j+1); k > 0 {
				j = k + 1
				continue
			}
			return lx.finishQuoted(start, j+1, kind, b)
		case c == '\\' && kind == 'e':
			var err error
			if b, j, highSurrogate, err = unescapeE(s, j, b, highSurrogate); err != nil {
				return err
			}
		default:
			b = append(b, c)
			j++
		}
	}
}

// quoteContinues reports whether the text from i (just after a closing
// quote) is {whitespace_with_newline} followed by a quote, and if so
// returns the offset of that quote (else -1): horizontal white space and --
// comments, a newline, then any white space and -- comments each ended by
// a newline. /* */ comments do not count.
func quoteContinues(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\v' || strings.HasPrefix(s[i:], "--")) {
		if s[i] == '-' {
			i = commentEnd(s, i)
		} else {
			i++
		}
	}
	if i >= len(s) || s[i] != '\n' && s[i] != '\r' {
		return -1
	}
	i++
	for i < len(s) {
		switch {
		case isSQLSpace(s[i]):
			i++
		case strings.HasPrefix(s[i:], "--"):
			i = commentEnd(s, i)
			if i >= len(s) {
				return -1
			}
			i++ // the newline, which {special_whitespace} requires after a comment
		case s[i] == '\'':
			return i
		default:
			return -1
		}
	}
	return -1
}

// unescapeE decodes the backslash escape at s[j] of an E'…' string.
func unescapeE(s string, j int, b []byte, high rune) ([]byte, int, rune, error) {
	if j+1 >= len(s) {
		return nil, 0, 0, lexErr(j, "unterminated quoted string")
	}
	c := s[j+1]
	hexRun := func(from, max int) int {
		n := 0
		for n < max && from+n < len(s) && isHexDigit(s[from+n]) {
			n++
		}
		return n
	}
	switch {
	case c == 'u' || c == 'U':
		want := 4
		if c == 'U' {
			want = 8
		}
		if hexRun(j+2, want) < want {
			return nil, 0, 0, lexErr(j, `invalid Unicode escape: write \uXXXX or \UXXXXXXXX`)
		}
		v, _ := new(big.Int).SetString(s[j+2:j+2+want], 16)
		r := rune(v.Int64())
		if v.Int64() > 0x10FFFF {
			return nil, 0, 0, lexErr(j, "invalid Unicode escape value")
		}
		next := j + 2 + want
		switch {
		case high != 0:
			if r < 0xDC00 || r > 0xDFFF {
				return nil, 0, 0, lexErr(j, "invalid Unicode surrogate pair")
			}
			return utf8.AppendRune(b, (high-0xD800)<<10+(r-0xDC00)+0x10000), next, 0, nil
		case r >= 0xD800 && r <= 0xDBFF:
			return b, next, r, nil
		case r >= 0xDC00 && r <= 0xDFFF:
			return nil, 0, 0, lexErr(j, "invalid Unicode surrogate pair")
		case r == 0:
			return nil, 0, 0, lexErr(j, "invalid Unicode escape value")
		}
		return utf8.AppendRune(b, r), next, 0, nil
	case c >= '0' && c <= '7':
		n, v := 0, 0
		for n < 3 && j+1+n < len(s) && s[j+1+n] >= '0' && s[j+1+n] <= '7' {
			v = v*8 + int(s[j+1+n]-'0')
			n++
		}
		return append(b, byte(v)), j + 1 + n, 0, nil
	case c == 'x' && hexRun(j+2, 2) > 0:
		n := hexRun(j+2, 2)
		v, _ := new(big.Int).SetString(s[j+2:j+2+n], 16)
		return append(b, byte(v.Int64())), j + 2 + n, 0, nil
	case c == 'v':
		// \v is a vertical tab since PostgreSQL 16 but the letter v before
		// it: refused rather than guessed.
		return nil, 0, 0, lexErr(j, `\v in E'…' means different things on different PostgreSQL versions; write \013`)
	}
	switch c {
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	}
	return append(b, c), j + 2, 0, nil
}

// finishQuoted checks and emits a quoted constant ending before end.
func (lx *sqlLexer) finishQuoted(start, end int, kind byte, b []byte) error {
	val := string(b)
	t := sqlToken{kind: tokString, val: val, pos: start}
	switch kind {
	case 'b', 'x':
		ok := isHexDigit
		if kind == 'b' {
			ok = func(c byte) bool { return c == '0' || c == '1' }
		}
		for k := 0; k < len(val); k++ {
			if !ok(val[k]) {
				return lexErr(start, "%q is not a valid %s digit", val[k], map[byte]string{'b': "binary", 'x': "hexadecimal"}[kind])
			}
		}
		t.kind, t.text = tokBits, strings.ToUpper(string(kind))+"'"+val+"'"
	case 'u':
		t.unicode = true
	default:
		// Escapes can make bytes that are not UTF-8, or a NUL, which the
		// server refuses.
		if !utf8.ValidString(val) || strings.IndexByte(val, 0) >= 0 {
			return lexErr(start, "string constant is not valid UTF-8 or contains a NUL byte")
		}
		t.text, t.sconst = quoteSQLString(val), true
	}
	lx.emit(t)
	lx.i = end
	return nil
}

// resolveUnicode decodes U&'…' and U&"…" with their escape character: \,
// or the one given by a following UESCAPE 'c' (as parser.c does, which
// also requires the UESCAPE string to be a plain string constant).
func resolveUnicode(toks []sqlToken) ([]sqlToken, error) {
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.unicode {
			out = append(out, t)
			continue
		}
		esc := byte('\\')
		if i+1 < len(toks) && toks[i+1].kind == tokIdent && toks[i+1].val == "uescape" {
			if i+2 >= len(toks) || !toks[i+2].sconst {
				return nil, lexErr(toks[i+1].pos, "UESCAPE must be followed by a simple string literal")
			}
			e := toks[i+2].val
			if len(e) != 1 || isHexDigit(e[0]) || e[0] == '+' || e[0] == '\'' || e[0] == '"' || isSQLSpace(e[0]) {
				return nil, lexErr(toks[i+2].pos, "invalid Unicode escape character")
			}
			esc = e[0]
			i += 2
		}
		val, err := decodeUnicodeEscapes(t.val, esc)
		if err != nil {
			return nil, lexErr(t.pos, "%v", err)
		}
		t.unicode = false
		if t.kind == tokQIdent {
			t.val = truncateIdent(val)
			t.text = quoteSQLIdent(t.val)
		} else {
			t.val, t.text, t.sconst = val, quoteSQLString(val), false
		}
		out = append(out, t)
	}
	return out, nil
}

// decodeUnicodeEscapes decodes esc+XXXX, esc+'+'+XXXXXX and esc esc.
func decodeUnicodeEscapes(s string, esc byte) (string, error) {
	var b []byte
	high := rune(0)
	hexAt := func(i, n int) (rune, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := rune(0)
		for k := i; k < i+n; k++ {
			if !isHexDigit(s[k]) {
				return 0, false
			}
			v = v*16 + rune(hexVal(s[k]))
		}
		return v, true
	}
	for i := 0; i < len(s); {
		if s[i] != esc {
			if high != 0 {
				return "", fmt.Errorf("invalid Unicode surrogate pair")
			}
			b = append(b, s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == esc {
			if high != 0 {
				return "", fmt.Errorf("invalid Unicode surrogate pair")
			}
			b = append(b, esc)
			i += 2
			continue
		}
		r, ok := hexAt(i+1, 4)
		n := 5
		if !ok && i+1 < len(s) && s[i+1] == '+' {
			r, ok = hexAt(i+2, 6)
			n = 8
		}
		if !ok {
			return "", fmt.Errorf("invalid Unicode escape: write %cXXXX or %c+XXXXXX", esc, esc)
		}
		if r == 0 || r > 0x10FFFF {
			return "", fmt.Errorf("invalid Unicode escape value")
		}
		i += n
		switch {
		case high != 0:
			if r < 0xDC00 || r > 0xDFFF {
				return "", fmt.Errorf("invalid Unicode surrogate pair")
			}
			b = utf8.AppendRune(b, (high-0xD800)<<10+(r-0xDC00)+0x10000)
			high = 0
		case r >= 0xDC00 && r <= 0xDFFF:
			return "", fmt.Errorf("invalid Unicode surrogate pair")
		case r >= 0xD800 && r <= 0xDBFF:
			high = r
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	if high != 0 {
		return "", fmt.Errorf("invalid Unicode surrogate pair")
	}
	return string(b), nil
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// asciiLower lower-cases ASCII letters only, as PostgreSQL does to unquoted
// identifiers and key words in a multi-byte encoding.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// truncateIdent keeps at most namedatalen-1 bytes, not splitting a character.
func truncateIdent(s string) string {
	return textclip.Prefix(s, namedatalen-1)
}

// quoteSQLString writes a string constant that reads the same whatever
// standard_conforming_strings is: '…' without backslashes, else E'…'.
func quoteSQLString(v string) string {
	q := strings.ReplaceAll(v, "'", "''")
	if strings.Contains(v, `\`) {
		return "E'" + strings.ReplaceAll(q, `\`, `\\`) + "'"
	}
	return "'" + q + "'"
}

func quoteSQLIdent(v string) string { return `"` + strings.ReplaceAll(v, `"`, `""`) + `"` }
