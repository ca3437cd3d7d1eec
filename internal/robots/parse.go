// Package robots implements the Robots Exclusion Protocol (RFC 9309) for
// one crawler: it parses robots.txt, picks the groups that apply to the
// crawler's product token, and answers whether a URL may be fetched. A
// Checker fetches robots.txt through safehttp, applies the RFC's status
// policy and caches the result per origin.
package robots

import (
	"bytes"
	"slices"
	"strings"
)

// MaxSize is how much of a robots.txt is parsed. RFC 9309 §2.5 requires at
// least 500 KiB; content beyond the limit is ignored.
const MaxSize = 512 << 10

// maxPattern bounds one rule's path. Longer rules are ignored: real paths
// are far shorter, and the bound keeps matching cheap.
const maxPattern = 4 << 10

// MaxRules bounds the rules kept from one robots.txt for one crawler; later
// rules are ignored, like content beyond MaxSize. Real files hold a few
// hundred at most; the bound keeps a hostile file's memory and every
// check's matching cost small.
const MaxRules = 10_000

// Rules are the parsed rules of one robots.txt that apply to one crawler.
// The zero value allows everything. Rules are immutable, and safe for
// concurrent use.
//
// The patterns live in one string and each rule holds offsets into it, so
// that a file of many short rules costs its bytes plus 12 per rule rather
// than a string and its allocation each (a cache of a thousand origins
// serving hostile files grew to gigabytes with one string per rule).
type Rules struct {
	disallowAll bool
	patterns    string
	rules       []rule
}

type rule struct {
	start, end uint32 // the pattern: patterns[start:end], normalised (see normalize); may hold * and a final $
	allow      bool
}

// Size estimates the bytes r holds, for a cache's budget.
func (r *Rules) Size() int {
	const ruleSize = 12 // two uint32 and a bool, padded
	return 48 + len(r.patterns) + ruleSize*cap(r.rules)
}

// ruleSet collects one group kind's rules while parsing.
type ruleSet struct {
	patterns strings.Builder
	rules    []rule
}

func (s *ruleSet) add(allow bool, pattern string) {
	// The patterns' total is bounded too: normalising can triple a pattern.
	if len(s.rules) >= MaxRules || s.patterns.Len()+len(pattern) > MaxSize {
		return
	}
	start := s.patterns.Len()
	s.patterns.WriteString(pattern)
	s.rules = append(s.rules, rule{start: uint32(start), end: uint32(s.patterns.Len()), allow: allow})
}

// compact returns the rules in exactly sized storage.
func (s *ruleSet) compact() *Rules {
	return &Rules{patterns: strings.Clone(s.patterns.String()), rules: slices.Clip(slices.Clone(s.rules))}
}

// AllowAll returns rules that allow every path (RFC 9309 §2.3.1.3: an
// unavailable robots.txt).
func AllowAll() *Rules { return &Rules{} }

// DisallowAll returns rules that disallow every path (RFC 9309 §2.3.1.4: an
// unreachable robots.txt).
func DisallowAll() *Rules { return &Rules{disallowAll: true} }

// Parse reads a robots.txt body and keeps the rules of the groups that
// match token, a crawler's product token, case-insensitively; when no group
// names it, the rules of the "*" groups. Several matching groups are
// combined (RFC 9309 §2.2.1). Lines that do not parse are skipped, as the
// RFC asks; only the first MaxSize bytes are read.
func Parse(body []byte, token string) *Rules {
	if len(body) > MaxSize {
		body = body[:MaxSize]
	}
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	var (
		named, star ruleSet
		foundNamed  bool
		// The group being read: whether it names us or *, and whether
		// its user-agent lines have ended (a rule line ends them).
		inNamed, inStar, inRules bool
	)
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		k := strings.ToLower(string(bytes.TrimSpace(key)))
		v := string(bytes.TrimSpace(value))
		switch k {
		case "user-agent":
			if inRules {
				inNamed, inStar, inRules = false, false, false
			}
			switch agent := productToken(v); {
			case v == "*" || strings.HasPrefix(v, "* ") || strings.HasPrefix(v, "*\t"):
				inStar = true
			case agent != "" && strings.EqualFold(agent, token):
				inNamed, foundNamed = true, true
			}
		case "allow", "disallow":
			inRules = true
			if v == "" || len(v) > maxPattern || (!inNamed && !inStar) {
				// An empty rule matches nothing (RFC 9309 §2.2.2).
				continue
			}
			pattern := normalize(v)
			if inNamed {
				named.add(k == "allow", pattern)
			}
			if inStar {
				star.add(k == "allow", pattern)
			}
		default:
			// Sitemap, crawl-delay and unknown records neither start nor
			// end a group (RFC 9309 §2.2.4).
		}
	}
	if foundNamed {
		return named.compact()
	}
	return star.compact()
}

// productToken is the leading run of a user-agent line's value that may
// form a product token ([a-zA-Z_-]+), as crawlers compare it.
func productToken(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return v[:i]
		}
	}
	return v
}

// ProductToken derives the robots.txt product token from a User-Agent
// header: the name of its last product outside comments, reduced to the
// characters a token may hold. "Mozilla/5.0 (X11) Chrome/131 Toolport/1.0"
// gives "Toolport"; "MyBot/2.0 (+https://example.com)" gives "MyBot".
func ProductToken(userAgent string) string {
	var token string
	depth := 0
	for _, field := range strings.FieldsFunc(userAgent, func(r rune) bool { return r == ' ' || r == '\t' }) {
		outside := depth == 0 && !strings.HasPrefix(field, "(")
		depth += strings.Count(field, "(") - strings.Count(field, ")")
		depth = max(depth, 0)
		if !outside {
			continue
		}
		name, _, _ := strings.Cut(field, "/")
		if t := productToken(name); t != "" && t == name {
			token = t
		}
	}
	return token
}

// Allowed reports whether a URL path may be fetched. path is the URL's
// escaped path with its query ("/a/b?c=d"), as url.URL.RequestURI returns
// it. The most specific matching rule (the longest pattern, in octets)
// decides; Allow wins a tie; no match allows (RFC 9309 §2.2.2). /robots.txt
// itself is always allowed.
func (r *Rules) Allowed(path string) bool {
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	if path == "/robots.txt" {
		return true
	}
	if r.disallowAll {
		return false
	}
	path = normalize(path)
	best, allow := -1, true
	for _, ru := range r.rules {
		pattern := r.patterns[ru.start:ru.end]
		n := len(pattern)
		if n < best || (n == best && allow) {
			continue // cannot change the verdict
		}
		if match(pattern, path) {
			best, allow = n, ru.allow
		}
	}
	return allow
}

// match reports whether pattern matches a prefix of path. In a pattern, *
// matches any run of octets and a final $ anchors it at the path's end.
// Matching each literal piece at its leftmost place is enough for patterns
// whose only operator is *, so this is linear in practice.
func match(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	pieces := strings.Split(pattern, "*")
	first := pieces[0]
	if !strings.HasPrefix(path, first) {
		return false
	}
	if len(pieces) == 1 {
		return !anchored || len(path) == len(first)
	}
	pos := len(first)
	last := len(pieces) - 1
	for _, p := range pieces[1:last] {
		i := strings.Index(path[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	tail := pieces[last]
	if anchored {
		return len(path)-len(tail) >= pos && strings.HasSuffix(path, tail)
	}
	return strings.Contains(path[pos:], tail)
}

// normalize brings a path or pattern to one form so that equal URIs compare
// equal (RFC 9309 §2.2.2): octets outside printable US-ASCII are
// percent-encoded, percent-encoded unreserved characters are decoded, other
// escapes are upper-cased, and a lone % is encoded. * and $ are left alone:
// in a pattern they are operators (match decides), in a path plain octets.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[d>>4])
				b.WriteByte(hex[d&15])
			}
			i += 2
		case c == '%' || c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
