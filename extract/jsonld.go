package extract

import (
	"encoding/json"
	"strings"

	"golang.org/x/net/html"
)

// Bounds on the JSON-LD read for a page's title and site name: the blocks
// come from the page, which may be hostile, and a title needs little.
const (
	maxJSONLDBlock  = 256 << 10 // bytes of one <script type=application/ld+json>; larger ones are skipped
	maxJSONLDTotal  = 1 << 20   // bytes of all blocks of a page
	maxJSONLDBlocks = 16        // blocks read per page
	maxJSONLDDepth  = 32        // nesting of objects and arrays; deeper blocks are skipped
	maxJSONLDNodes  = 256       // objects looked at per page (top level, arrays, @graph)
)

// linkedData is what a page's JSON-LD says about its title and site.
type linkedData struct {
	headline  string // an article's headline (or name)
	pageName  string // a WebPage's name or headline
	publisher string // an article's or page's publisher.name
	siteName  string // a WebSite's name
}

// ldNode is the part of a schema.org node that names a page or its site.
// Fields are raw because JSON-LD allows a string, an object or an array
// for almost any of them.
type ldNode struct {
	Type      json.RawMessage `json:"@type"`
	Graph     json.RawMessage `json:"@graph"`
	Headline  json.RawMessage `json:"headline"`
	Name      json.RawMessage `json:"name"`
	Publisher json.RawMessage `json:"publisher"`
}

// readJSONLD reads the blocks in order; the first value of each kind wins.
// Malformed, oversized or too deeply nested blocks are ignored; reading
// stops at the block that would pass the page's budget.
func readJSONLD(blocks []string) linkedData {
	var ld linkedData
	total, nodes := 0, 0
	for i, b := range blocks {
		if i == maxJSONLDBlocks {
			break
		}
		b = trimScriptWrapper(b)
		if len(b) > maxJSONLDBlock {
			continue
		}
		if total += len(b); total > maxJSONLDTotal {
			break // the page's budget is spent
		}
		if jsonDepth(b) > maxJSONLDDepth {
			continue
		}
		var top json.RawMessage
		if json.Unmarshal([]byte(b), &top) != nil {
			continue
		}
		ld.visit(top, &nodes, 0)
	}
	return ld
}

// visit reads one value: an array of nodes, or a node, whose @graph is
// visited in turn (one level: a graph inside a graph is not JSON-LD).
func (ld *linkedData) visit(v json.RawMessage, nodes *int, graphDepth int) {
	if *nodes >= maxJSONLDNodes || graphDepth > 1 {
		return
	}
	switch firstByte(v) {
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return
		}
		for _, it := range items {
			if firstByte(it) == '{' {
				ld.visit(it, nodes, graphDepth)
			}
		}
	case '{':
		*nodes++
		var n ldNode
		if json.Unmarshal(v, &n) != nil {
			return
		}
		ld.node(n)
		if len(n.Graph) > 0 {
			ld.visit(n.Graph, nodes, graphDepth+1)
		}
	}
}

// node takes the title and site name a node declares, by its type: an
// article's headline, a web page's name, a web site's name; the publisher
// of either is the site. Names of other types (a person, a product, a
// breadcrumb) are not the page's title.
func (ld *linkedData) node(n ldNode) {
	types := ldTypes(n.Type)
	switch {
	case anyType(types, isArticleType):
		if ld.headline == "" {
			ld.headline = cleanLDText(ldString(n.Headline, n.Name))
		}
		if ld.publisher == "" {
			ld.publisher = publisherName(n.Publisher)
		}
	case anyType(types, isPageType):
		if ld.pageName == "" {
			ld.pageName = cleanLDText(ldString(n.Headline, n.Name))
		}
		if ld.publisher == "" {
			ld.publisher = publisherName(n.Publisher)
		}
	case anyType(types, func(t string) bool { return t == "website" }):
		if ld.siteName == "" {
			ld.siteName = cleanLDText(ldString(n.Name))
		}
	}
}

// ldTypes returns a node's @type values, lower case and without a
// vocabulary prefix ("schema:NewsArticle", "https://schema.org/NewsArticle").
func ldTypes(raw json.RawMessage) []string {
	var types []string
	switch firstByte(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			types = []string{s}
		}
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			for _, it := range list {
				var s string
				if json.Unmarshal(it, &s) == nil {
					types = append(types, s)
				}
			}
		}
	}
	for i, t := range types {
		if j := strings.LastIndexAny(t, "/:#"); j >= 0 {
			t = t[j+1:]
		}
		types[i] = strings.ToLower(strings.TrimSpace(t))
	}
	return types
}

func anyType(types []string, is func(string) bool) bool {
	for _, t := range types {
		if is(t) {
			return true
		}
	}
	return false
}

// isArticleType says whether a schema.org type is a written work whose
// headline is the page's title: Article and its subtypes (NewsArticle,
// BlogPosting, ScholarlyArticle, …), Report, Recipe, HowTo.
func isArticleType(t string) bool {
	return strings.HasSuffix(t, "article") || strings.HasSuffix(t, "posting") ||
		t == "report" || t == "recipe" || t == "howto" || t == "creativework"
}

// isPageType says whether a schema.org type is a web page (WebPage and its
// subtypes: ItemPage, AboutPage, CollectionPage, …).
func isPageType(t string) bool {
	return t == "webpage" || strings.HasSuffix(t, "page")
}

// publisherName is the name of a publisher given as an object, an array of
// objects (the first named one) or a plain string.
func publisherName(raw json.RawMessage) string {
	switch firstByte(raw) {
	case '"':
		return cleanLDText(ldString(raw))
	case '{':
		var p struct {
			Name json.RawMessage `json:"name"`
		}
		if json.Unmarshal(raw, &p) == nil {
			return cleanLDText(ldString(p.Name))
		}
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			for _, it := range list {
				if name := publisherName(it); name != "" {
					return name
				}
			}
		}
	}
	return ""
}

// ldString returns the first candidate that is a string, or the first
// string of an array (JSON-LD's multiple values, or language variants as
// {"@value": …} objects).
func ldString(candidates ...json.RawMessage) string {
	for _, raw := range candidates {
		switch firstByte(raw) {
		case '"':
			var s string
			if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
				return s
			}
		case '{':
			var v struct {
				Value json.RawMessage `json:"@value"`
			}
			if json.Unmarshal(raw, &v) == nil && firstByte(v.Value) == '"' {
				if s := ldString(v.Value); s != "" {
					return s
				}
			}
		case '[':
			var list []json.RawMessage
			if json.Unmarshal(raw, &list) == nil {
				for _, it := range list {
					if firstByte(it) == '"' || firstByte(it) == '{' {
						if s := ldString(it); s != "" {
							return s
						}
					}
				}
			}
		}
	}
	return ""
}

// maxLDText bounds a title or site name taken from JSON-LD, in bytes; a
// longer one is not a title.
const maxLDText = 512

// cleanLDText unescapes HTML entities (sites often escape the JSON's
// strings twice) and collapses white space.
func cleanLDText(s string) string {
	s = strings.Join(strings.Fields(html.UnescapeString(s)), " ")
	if len(s) > maxLDText {
		return ""
	}
	return s
}

// trimScriptWrapper removes the HTML comment or CDATA markers some sites
// put around a script's text.
func trimScriptWrapper(s string) string {
	s = strings.TrimSpace(s)
	for _, w := range [][2]string{{"<!--", "-->"}, {"<![CDATA[", "]]>"}, {"//<![CDATA[", "//]]>"}, {"/*<![CDATA[*/", "/*]]>*/"}} {
		if len(s) >= len(w[0])+len(w[1]) && strings.HasPrefix(s, w[0]) && strings.HasSuffix(s, w[1]) {
			s = strings.TrimSpace(s[len(w[0]) : len(s)-len(w[1])])
		}
	}
	return s
}

// jsonDepth returns the deepest nesting of objects and arrays in s,
// without decoding it (brackets inside strings do not count).
func jsonDepth(s string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// firstByte is the first byte of a JSON value other than white space, 0
// for an empty one.
func firstByte(v json.RawMessage) byte {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
