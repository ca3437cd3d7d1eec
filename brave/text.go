package brave

import (
	"html"
	"strings"
)

// PlainText turns a Brave title or description (an HTML fragment with
// <strong> highlighting and entities such as &#x27;) into plain text: tags are
// dropped, entities decoded and runs of white space collapsed. Tags are removed
// before entities are decoded, so an escaped "&lt;b&gt;" stays visible text.
func PlainText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i:]
		if len(rest) < 2 || !isTagStart(rest[1]) {
			b.WriteByte('<') // a bare '<' is text, not markup
			s = rest[1:]
			continue
		}
		j := strings.IndexByte(rest, '>')
		if j < 0 {
			break // an unterminated tag at the end: drop it
		}
		s = rest[j+1:]
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
}

func isTagStart(c byte) bool {
	return c == '/' || c == '!' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
