package opendata

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// sqlGen makes random statements for the differential test: mostly valid
// SELECTs of constants, written with every lexical form that decides where
// a statement ends, and, in a share of them, fragments that move those
// ends when they are misread (a \r in a -- comment, a stray quote, a */,
// a $$, a semicolon followed by another statement).
type sqlGen struct{ r *rand.Rand }

func (g *sqlGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *sqlGen) chance(p float64) bool { return g.r.Float64() < p }

// genHazards are fragments whose misreading moves a statement boundary.
var genHazards = []string{";", "'", "''", `"`, `\`, `\'`, "$", "$$", "$a$", "--", "/*", "*/", "\n", "\r", "\r\n",
	"\f", "\v", "\t", " ", "e'", "E'", "U&'", `U&"`, "x", "a", "1", "é", "א", "; SELECT 2 AS z", "; DROP TABLE victim",
	"SELECT", "*", "-", "/", ")", "("}

func (g *sqlGen) junk(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(genHazards[g.r.IntN(len(genHazards))])
	}
	return b.String()
}

// sep is white space or comments between two tokens.
func (g *sqlGen) sep() string {
	switch g.r.IntN(14) {
	case 0, 1, 2, 3, 4, 5:
		return " "
	case 6:
		return g.pick("\n", "\r", "\r\n", "\t", "\f", "\v", "  ", "\n\r")
	case 7:
		return "--" + g.pick("", " c", " ;", " '", " */") + g.pick("\n", "\r", "\r\n", "\n\r")
	case 8:
		return "/*" + g.pick("", " c ", ";", "'", "--", "\r", " /* in */ ") + "*/"
	case 9:
		return "/* /*" + g.pick("", ";", "'") + "*/ " + g.pick("", ";", "*", "/") + " */"
	case 10:
		return " --" + g.junk(1+g.r.IntN(3)) + g.pick("\n", "\r", "\r\n")
	case 11:
		return "/*" + g.junk(1+g.r.IntN(3)) + "*/ "
	case 12:
		return "--" + g.junk(1+g.r.IntN(2)) + "\r; DROP TABLE victim; SELECT 1 AS b --" + g.pick("\n", "\r", "") + " "
	}
	return " \t"
}

func (g *sqlGen) plainContent() string {
	var b strings.Builder
	for range g.r.IntN(5) {
		b.WriteString(g.pick("a", "Z", " ", "''", `\`, ";", "--", "/*", "*/", `"`, "$$", "\n", "\r", "é", "א", "$a$", "\t"))
	}
	return b.String()
}

func (g *sqlGen) escapeContent() string {
	var b strings.Builder
	for range g.r.IntN(5) {
		b.WriteString(g.pick("a", " ", `\'`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, `\x41`, `\x4`, `\x4g`, `\101`, `\7`, `\58`,
			`\u00e9`, `\U0001F600`, `\uD83D\uDE00`, "''", ";", `\q`, `\"`, `\;`, "--", "\r", `\é`,
			`\uD800`, `\xff`, `\0`, `\v`, `\u12`, `\x`, `\U0000`))
	}
	return b.String()
}

func (g *sqlGen) unicodeContent(esc string) string {
	var b strings.Builder
	for range g.r.IntN(5) {
		b.WriteString(g.pick("a", ";", "''", esc+"0041", esc+"+01F600", esc+esc, esc+"00e9", `\`, "!",
			esc+"D83D"+esc+"DE00", esc+"D800", esc+"12", esc+"0000", esc+"+110000"))
	}
	return b.String()
}

// continuation is what may follow a closing quote and continue the
// constant: white space holding a newline (and -- comments), or text that
// looks like it but is not.
func (g *sqlGen) continuation() string {
	return g.pick("\n", "\r", " \n ", " -- c\n", "\n-- c\r", "\r\n\t", "\v\n", "\n\v", "\f\n", " ", "\n/* c */\n",
		" /* */\n", "--\n", "\n--", "\n -")
}

func (g *sqlGen) literal() string {
	var s string
	switch g.r.IntN(9) {
	case 0, 1:
		s = "'" + g.plainContent() + "'"
	case 2, 3:
		s = g.pick("E", "e") + "'" + g.escapeContent() + "'"
	case 4:
		if g.chance(0.5) {
			s = "U&'" + g.unicodeContent("!") + "'" + g.sep() + g.pick("UESCAPE", "uescape") + g.sep() + g.pick("'!'", "E'!'", "$$!$$", "'!!'", "'a'", "U&'!'")
		} else {
			s = g.pick("U&", "u&") + "'" + g.unicodeContent(`\`) + "'"
		}
	case 5:
		tag := g.pick("", "a", "tag", "_1", "é", "A")
		d := "$" + tag + "$"
		var b strings.Builder
		for range g.r.IntN(4) {
			b.WriteString(g.pick("x", "$", "$$", "$a$", "'", ";", "$tag", "--", "\r", d))
		}
		s = d + b.String() + d
	case 6:
		s = g.pick("B'0101'", "X'1F'", "b'1'", "x''", "B'012'", "X'g'", "N'n'", "n''")
	case 7:
		return g.number()
	default:
		s = "'" + g.plainContent() + "'" + g.continuation() + "'" + g.plainContent() + "'"
	}
	for g.chance(0.15) {
		s += g.continuation() + "'" + g.plainContent() + "'"
	}
	return s
}

func (g *sqlGen) number() string {
	return g.pick("1", "42", "1.5", ".5", "1.", "1e3", "1.5E-2", "0x1F", "0o17", "0b101", "1_000", "00012",
		"2147483648", "9223372036854775808", "0X_f", "1.5_5", "1a", "0x", "1e", "1__0", "1..2", "0b2", "1e+")
}

func (g *sqlGen) name() string {
	return g.pick("a", "b", "x_1", "שם", `"a"`, `"x;y"`, `"a""b"`, `U&"\0061"`, `U&"!0061" UESCAPE '!'`, `"--"`,
		`"/*"`, "select", `""`, "é")
}

func (g *sqlGen) function() string {
	return g.pick("lower", "upper", "length", "abs", "round", "concat", "coalesce", "pg_catalog.lower", `"lower"`,
		`U&"l\006fwer"`, "LOWER", "md5", "pg_sleep", `"pg_sleep"`, `U&"pg\005fsleep"`, "set_config", "pg_notify",
		"public.lower", "nextval")
}

func (g *sqlGen) expr(depth int) string {
	if depth > 2 {
		return g.literal()
	}
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		return g.literal()
	case 4:
		return g.expr(depth+1) + g.sep() + g.pick("+", "-", "*", "/", "||", "=", "<>", "!=", "<=", ">=", "<", ">", "%",
			"=-", "*-", "+-", "@-", "|| -", "-/**/-") + g.sep() + g.expr(depth+1)
	case 5:
		args := g.expr(depth + 1)
		if g.chance(0.3) {
			args += "," + g.sep() + g.expr(depth+1)
		}
		return g.function() + g.pick("", " ", "/**/") + "(" + args + ")"
	case 6:
		return "(" + g.sep() + g.expr(depth+1) + g.sep() + ")"
	case 7:
		return g.expr(depth+1) + g.pick("::", " :: ") + g.pick("text", "int", "numeric", "varchar(5)", `"char"`, "bpchar", "numeric(10,2)")
	case 8:
		return "CASE WHEN" + g.sep() + g.expr(depth+1) + " IS NULL THEN" + g.sep() + g.expr(depth+1) + " ELSE" + g.sep() + g.expr(depth+1) + " END"
	}
	return g.name()
}

// statement makes one statement, perhaps with a second one or a hazard.
func (g *sqlGen) statement() string {
	var b strings.Builder
	from := "(SELECT 1)" + g.sep() + "t"
	if g.chance(0.1) {
		b.WriteString("WITH w AS (SELECT 1 AS x)" + g.sep())
		from = "w"
	}
	b.WriteString(g.pick("SELECT", "select", "SeLeCt"))
	for i := range 1 + g.r.IntN(4) {
		if i > 0 {
			b.WriteString(g.sep() + ",")
		}
		b.WriteString(g.sep() + g.expr(0))
		if g.chance(0.4) {
			b.WriteString(g.sep() + g.pick("AS", "as") + g.sep() + g.name())
		}
	}
	if g.chance(0.3) {
		b.WriteString(g.sep() + "FROM" + g.sep() + from)
	}
	if g.chance(0.25) {
		b.WriteString(g.sep() + g.pick(";", "; SELECT 2", ";;", "; DROP TABLE victim", ";"+g.sep()))
	}
	s := b.String()
	if g.chance(0.3) {
		// A hazard at a random character boundary.
		i := g.r.IntN(len(s) + 1)
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		s = s[:i] + g.junk(1+g.r.IntN(3)) + s[i:]
	}
	return s
}
