package webui

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// jsString is a string literal of a script with what it sits in.
type jsString struct {
	text string // the literal's text (a template's literal parts only)
	line int
	sink string // the call or assignment that shows it, or ""
}

// visibleStrings lexes a script just enough (comments, strings, templates,
// regular expressions, brackets) to tell which string literals reach the page
// directly: children of h(…) (the third argument on), arguments of say(…),
// announce(…), .append(…), new Error(…) (the bench and the cards show
// errors' messages), link(…)'s label, and the right side of a .textContent,
// .title, .placeholder or .error (a tool call's, which its card shows)
// assignment, and the value of a label attribute (aria-label, title, alt)
// in an object of attributes. A literal passed to t(…) is a key, and
// one inside any other call (str(…), join(…)) is not shown as it is.
func visibleStrings(src string) []jsString {
	type frame struct {
		call string // the called name for "(", "" for other brackets
		arg  int
	}
	var (
		out    []jsString
		stack  []frame
		assign = -1   // stack depth of a pending text assignment, -1 for none
		target string // the property assigned
		line   = 1
		prev   byte   // last significant character, to tell / from a regex
		word   string // last identifier (a call's name)
		before string // identifier before word, for "new Error"
		dotted bool   // word follows a ".", as in el.textContent
		cmp    bool   // the last operator compares: its operand is not shown
		last   string // the last string's or identifier's text, a key before ":"
		key    string // the object key whose value comes next
	)
	// Attributes that a person reads (or hears) as the element's text.
	labelAttr := map[string]bool{"aria-label": true, "title": true, "alt": true, "aria-valuetext": true, "aria-description": true}
	sinkOf := func() string {
		if cmp {
			return ""
		}
		if key != "" && labelAttr[key] {
			return key + ": …"
		}
		if assign >= 0 && assign == len(stack) {
			return "." + target + " ="
		}
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		switch {
		case f.call == "h" && f.arg >= 2,
			f.call == "link" && f.arg == 1,
			f.call == "say", f.call == "announce", f.call == "append", f.call == "Error":
			return f.call + "(…)"
		}
		return ""
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			if assign >= 0 && assign == len(stack) && prev != '+' && prev != '=' && prev != '?' && prev != ':' && prev != '(' && prev != ',' {
				assign = -1
			}
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
			continue
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			rest := strings.TrimLeft(src[min(j+1, len(src)):], " ")
			if strings.HasPrefix(rest, "==") || strings.HasPrefix(rest, "!=") {
				cmp = true // 'ok' === status
			}
			out = append(out, jsString{src[i+1 : min(j, len(src))], line, sinkOf()})
			last = src[i+1 : min(j, len(src))]
			i = j + 1
			prev, word, cmp, key = 'a', "", false, ""
			continue
		case c == '`':
			// A template: its literal parts are the text; ${…} holes
			// are skipped with their own bracket count.
			var lit strings.Builder
			j := i + 1
			for j < len(src) && src[j] != '`' {
				switch {
				case src[j] == '\\':
					j += 2
				case strings.HasPrefix(src[j:], "${"):
					depth := 1
					j += 2
					for j < len(src) && depth > 0 {
						switch src[j] {
						case '{':
							depth++
						case '}':
							depth--
						case '\n':
							line++
						}
						j++
					}
					lit.WriteString(" ")
				default:
					if src[j] == '\n' {
						line++
					}
					lit.WriteByte(src[j])
					j++
				}
			}
			out = append(out, jsString{lit.String(), line, sinkOf()})
			i = j + 1
			prev, word, key, last = 'a', "", "", ""
			continue
		case c == '/' && strings.IndexByte("(,=:[!&|?{};+-*%<>~^", prev) >= 0 || c == '/' && (word == "return" || word == "typeof"):
			// A regular expression literal.
			j, class := i+1, false
			for j < len(src) && (src[j] != '/' || class) && src[j] != '\n' {
				switch src[j] {
				case '\\':
					j++
				case '[':
					class = true
				case ']':
					class = false
				}
				j++
			}
			i = j + 1
			prev, word = 'a', ""
			continue
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			before, word, last, key = word, src[i:j], src[i:j], ""
			dotted = i > 0 && src[i-1] == '.'
			i = j
			prev = 'a'
			continue
		}
		switch c {
		case '(':
			call := ""
			if prev == 'a' && word != "" {
				call = word
				if word == "Error" && before != "new" {
					call = ""
				}
			}
			stack = append(stack, frame{call: call})
		case '[', '{':
			stack = append(stack, frame{})
		case ')', ']', '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if assign > len(stack) {
				assign = -1
			}
		case ',':
			if len(stack) > 0 {
				stack[len(stack)-1].arg++
			}
			if assign == len(stack) {
				assign = -1
			}
		case ':':
			key = last
		case ';':
			if assign == len(stack) {
				assign = -1
			}
		case '=':
			// ".textContent = …" (not "==", "=>", "<=", ">=", "!=").
			next := byte(0)
			if i+1 < len(src) {
				next = src[i+1]
			}
			if next != '=' && next != '>' && strings.IndexByte("=!<>", prev) < 0 &&
				dotted && (word == "textContent" || word == "title" || word == "placeholder" || word == "error") {
				assign, target = len(stack), word
			}
		}
		if c != ')' {
			word = ""
		}
		cmp = c == '=' && (prev == '=' || prev == '!')
		if c != ':' {
			key, last = "", ""
		}
		prev = c
		i++
	}
	return out
}

// TestScriptTextIsTranslated checks the scripts the way
// TestMarkupTextIsTranslated checks the markup: no string literal with words
// reaches the page without going through t(…), so that the Hebrew page shows
// no English of its own. Names and code read the same in every language and
// are listed here.
func TestScriptTextIsTranslated(t *testing.T) {
	// Names, formats and code shown as they are.
	allowed := map[string]bool{
		"Toolport": true, "OpenAI": true, "Anthropic": true, "JSON": true, "M3U8": true,
		"HTTP": true, // api.js: an error without a message is "HTTP 502"
	}
	// Messages of errors no person should meet: a programming error
	// (dom.js) and a broken server's event stream (sse.js), shown, if ever,
	// after the page's translated "Something went wrong."
	internal := map[string]bool{
		"h: event handler attributes are not allowed": true,
		"event stream: line too long":                 true,
		"event stream: event too large":               true,
	}
	words := regexp.MustCompile(`\pL{2,}`)
	files, err := os.ReadDir("static/js")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".js") || f.Name() == "i18n.js" {
			continue
		}
		b, err := os.ReadFile("static/js/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range visibleStrings(string(b)) {
			if s.sink == "" || internal[s.text] {
				continue
			}
			seen++
			for _, w := range words.FindAllString(s.text, -1) {
				if !allowed[w] {
					t.Errorf("%s:%d: %q reaches the page through %s untranslated", f.Name(), s.line, s.text, s.sink)
					break
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found %d shown literals; the scripts' layout changed?", seen)
	}
}

// TestVisibleStrings pins the lexer on the cases it has to tell apart.
func TestVisibleStrings(t *testing.T) {
	src := "h('p', { class: 'x' }, 'Shown', t('key'), str(a) || 'Also')\n" +
		"el.textContent = 'Assigned';\n" +
		"const r = /it's/g; say(`Done ${n} now`)\n" +
		"// h('p', null, 'commented')\n" +
		"if (a == 'b') x = 'not shown'\n" +
		"const title = 'Local'; h('p', null, k === 'ok' ? 'Fine' : 'ok' !== k)\n" +
		"h('button', { 'aria-label': 'Close', title: 'Tip', class: 'c' }, a ? 'b' : 'c')\n" +
		"throw new Error('Failed');\n"
	var got []string
	for _, s := range visibleStrings(src) {
		if s.sink != "" {
			got = append(got, s.text)
		}
	}
	want := []string{"Shown", "Also", "Assigned", "Done   now", "Fine", "Close", "Tip", "b", "c", "Failed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shown literals %q, want %q", got, want)
	}
}
