package opendata

import (
	"strings"
	"testing"
)

// lexTexts renders the tokens of s as their sent texts, joined by " | ".
func lexTexts(s string) (string, error) {
	toks, err := lexSQL(s)
	if err != nil {
		return "", err
	}
	texts := make([]string, len(toks))
	for i, t := range toks {
		texts[i] = t.text
	}
	return strings.Join(texts, " | "), nil
}

// TestLexSQL pins the lexer to the behaviour of PostgreSQL's scanner, case
// by case (TestSQLGuardDifferential checks it against the server at large).
func TestLexSQL(t *testing.T) {
	tests := []struct{ in, want string }{
		// -- comments end at \n or \r; /* */ comments nest.
		{"1 --x\r2", "1 | 2"},
		{"1 --x\n2 --y", "1 | 2"},
		{"/* /* */ x */ 1", "1"},
		{"/*/ */ 1", "1"},
		{"1 /**/ 2", "1 | 2"},
		{"1 /* ** / */ 2", "1 | 2"},
		{"1 */ 2", "1 | */ | 2"},
		{"\t1\v\f2\r\n", "1 | 2"},
		// Operators: the longest run, cut at -- or /*, trailing + and -
		// dropped unless the operator holds one of ~!@#^&|`?%.
		{"a=-1", "a | = | - | 1"},
		{"a@-1", "a | @- | 1"},
		{"a+/*c*/b", "a | + | b"},
		{"a<--b\nc", "a | < | c"},
		{"a*-+b", "a | * | - | + | b"},
		{"a?-b", "a | ?- | b"},
		{"1 <=> 2 != 3 >= 4", "1 | <=> | 2 | != | 3 | >= | 4"},
		{"f(a => 1, b := 2)::int[1:2]", "f | ( | a | => | 1 | , | b | := | 2 | ) | :: | int | [ | 1 | : | 2 | ]"},
		// Strings: '' is a quote; constants continue across white space
		// holding a newline (and -- comments), not across /* */ or one line.
		{"'it''s'", "'it''s'"},
		{"'a'\n'b'", "'ab'"},
		{"'a' -- c\r'b'", "'ab'"},
		{"'a'\n-- c\n 'b'", "'ab'"},
		{"'a'\n--c", "'a'"},
		{"'a' /* c */\n'b'", "'a' | 'b'"},
		{"'a' 'b'", "'a' | 'b'"},
		{"'a'\n/* c */'b'", "'a' | 'b'"},
		{"'a'\v\n'b'", "'ab'"},
		{"'a'\n -'b'", "'a' | - | 'b'"},
		{`'a\'`, `E'a\\'`},
		// E'…' escapes; a continued E string keeps its escapes.
		{`E'\x41\101\u00e9\U0001F600\q\''`, `'AAé😀q'''`},
		{`e'a\\'`, `E'a\\'`},
		{`E'\x4g\7'`, "'\x04g\x07'"},
		{"E'\\n'\n'\\t'", "'\n\t'"},
		{`E'\uD83D\uDE00'`, `'😀'`},
		// Dollar quotes end at the first copy of their own delimiter.
		{"$a$x$b$y$$a$", "'x$b$y$'"},
		{"$$it's$$", "'it''s'"},
		{"$é$;$é$", "';'"},
		{"a$b$c", "a$b$c"},
		{"1$a$x$a$", "1 | 'x'"},
		// Unicode escapes, with UESCAPE, also across a continuation.
		{`U&'d\0061t\+000061'`, `'data'`},
		{`U&'d!0061t!!' UESCAPE '!'`, `'dat!'`},
		{`u&'\0041' uescape $$!$$`, `E'\\0041'`},
		{"U&'\\00'\n'41'", "'A'"},
		{`U&"\D83D\DE00"`, `"😀"`},
		{`U&"a""b"`, `"a""b"`},
		{"u&x", "u | & | x"},
		// Other prefixes.
		{"N'x'", "NCHAR | 'x'"},
		{"B'01'\n'10' X'aF'", "B'0110' | X'aF'"},
		{"b'01''1'", "B'01' | '1'"},
		{"xy'1'", "xy | '1'"},
		// Numbers, written canonically.
		{"0x1F 0o17 0b1_0 0X_f 1_000 00012", "31 | 15 | 2 | 15 | 1000 | 00012"},
		{".5e-3 1.e5 1. 1.5_5 1e+1_0", ".5e-3 | 1.e5 | 1. | 1.55 | 1e+10"},
		{"1.5.3", "1.5 | .3"},
		{"t.1", "t | .1"},
		{"9223372036854775808 0x8000000000000000", "9223372036854775808 | 9223372036854775808"},
		// Identifiers: ASCII folded, quotes kept, truncated as the server does.
		{`SeLeCt "A""b" Ünï`, `SeLeCt | "A""b" | Ünï`},
	}
	for _, tt := range tests {
		got, err := lexTexts(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("lexSQL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestLexSQLValues(t *testing.T) {
	long := strings.Repeat("א", 40) // 80 bytes
	toks, err := lexSQL(`SeLeCt Ünï "Q" ` + long + ` "` + long + `"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"select", "Ünï", "Q", strings.Repeat("א", 31), strings.Repeat("א", 31)}
	for i, w := range want {
		if toks[i].val != w {
			t.Errorf("token %d: val %q, want %q", i, toks[i].val, w)
		}
	}
}

func TestLexSQLErrors(t *testing.T) {
	tests := []struct{ in, why string }{
		{"'a", "unterminated quoted string"},
		{"'a'\n'", "unterminated quoted string"},
		{`E'\`, "unterminated quoted string"},
		{`"a`, "unterminated quoted identifier"},
		{`""`, "zero-length"},
		{`U&""`, "zero-length"},
		{"/* /* */", "unterminated /* comment"},
		{"$a$ x $b$", "unterminated dollar-quoted string"},
		{"$1", "parameters"},
		{"$ a", "unexpected character '$'"},
		{"$a", "unexpected character '$'"},
		{"{", "unexpected character '{'"},
		{"\x01", "unexpected character"},
		{"1..2", `".."`},
		{"1.x", "trailing junk"},
		{"1e", "trailing junk"},
		{"1e-", "trailing junk"},
		{"1_", "trailing junk"},
		{"1__0", "trailing junk"},
		{"0x", "invalid integer"},
		{"0x_", "invalid integer"},
		{"0b2", "invalid integer"},
		{"0x1g", "trailing junk"},
		{`E'\u12'`, "invalid Unicode escape"},
		{`E'\U0011FFFF'`, "invalid Unicode escape value"},
		{`E'\u0000'`, "invalid Unicode escape value"},
		{`E'\uD83D'`, "surrogate"},
		{`E'\uD83Dx'`, "surrogate"},
		{`E'\uDE00'`, "surrogate"},
		{`E'\xC3'`, "not valid UTF-8"},
		{`E'\v'`, `\v`},
		{`U&'\0000'`, "invalid Unicode escape value"},
		{`U&'\+110000'`, "invalid Unicode escape value"},
		{`U&'\DE00'`, "surrogate"},
		{`U&'\D83Dx'`, "surrogate"},
		{`U&'\12'`, "invalid Unicode escape"},
		{`U&'x' UESCAPE`, "UESCAPE must be followed"},
		{`U&'x' UESCAPE "!"`, "UESCAPE must be followed"},
		{`U&'x' UESCAPE '!!'`, "invalid Unicode escape character"},
		{`U&'x' UESCAPE '+'`, "invalid Unicode escape character"},
		{`U&'x' UESCAPE ' '`, "invalid Unicode escape character"},
		{`B'2'`, "binary digit"},
		{`X'g'`, "hexadecimal digit"},
	}
	for _, tt := range tests {
		toks, err := lexSQL(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("lexSQL(%q) = %+v, %v; want an error about %q", tt.in, toks, err, tt.why)
		}
	}
}
