package extract

import (
	"cmp"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/language"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// headInfo reads what a page declares about itself: its canonical URL
// (the first <link rel=canonical>, resolved against base, http or https
// only) and its language (<html lang>, else a Content-Language <meta>),
// normalised as a BCP 47 tag. Only <html>, <head> and their children are
// visited: these declarations live there and pages can be large.
func headInfo(root *html.Node, base *url.URL) (canonical, lang string) {
	headElements(root, func(n *html.Node) {
		switch n.Data {
		case "html":
			if lang == "" {
				lang = bcp47(attr(n, "lang"))
			}
		case "link":
			if canonical == "" && hasToken(attr(n, "rel"), "canonical") {
				canonical = resolveHTTP(base, attr(n, "href"))
			}
		case "meta":
			if lang == "" && strings.EqualFold(attr(n, "http-equiv"), "content-language") {
				lang = bcp47(attr(n, "content"))
			}
		}
	})
	return canonical, lang
}

// headElements calls fn for the elements a page declares itself in: <html>,
// <head> and their children (three levels from the document), stopping at
// <body>, since pages can be large.
func headElements(root *html.Node, fn func(*html.Node)) {
	var visit func(n *html.Node, depth int)
	visit = func(n *html.Node, depth int) {
		if n.Type == html.ElementNode {
			if n.Data == "body" {
				return
			}
			fn(n)
		}
		if depth >= 3 {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, depth+1)
		}
	}
	visit(root, 0)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}

func hasToken(list, token string) bool {
	for _, t := range strings.Fields(list) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// resolveHTTP resolves href against base; anything but an absolute http(s)
// URL (javascript:, data:, unresolvable) is dropped.
func resolveHTTP(base *url.URL, href string) string {
	u, err := url.Parse(href)
	if err != nil || href == "" {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	u.Fragment = ""
	return u.String()
}

// bcp47 normalises a declared language (the first of a Content-Language
// list, "en_US" style underscores accepted) to a BCP 47 tag, or "" when
// it is not one.
func bcp47(declared string) string {
	first, _, _ := strings.Cut(declared, ",")
	first = strings.ReplaceAll(strings.TrimSpace(first), "_", "-")
	if first == "" || len(first) > 35 {
		return ""
	}
	tag, err := language.Parse(first)
	if err != nil || tag == language.Und {
		return ""
	}
	return tag.String()
}

// ownMeta reads the title and site name a page declares: the title is
// og:title or twitter:title, else an article's headline in its JSON-LD,
// else <title>, else a web page's name in its JSON-LD, else the first <h1>;
// the site name is og:site_name, else the JSON-LD's web site or publisher
// name. JSON-LD is read only when the head leaves something open: most
// pages declare both in their <meta>.
func ownMeta(root *html.Node) pageMeta {
	var og, tw, title, site string
	headElements(root, func(n *html.Node) {
		switch n.Data {
		case "meta":
			switch strings.ToLower(cmp.Or(attr(n, "property"), attr(n, "name"))) {
			case "og:title":
				og = cmp.Or(og, attr(n, "content"))
			case "twitter:title":
				tw = cmp.Or(tw, attr(n, "content"))
			case "og:site_name":
				site = cmp.Or(site, attr(n, "content"))
			}
		case "title":
			if title == "" {
				title = textOf(n)
			}
		}
	})
	if strings.TrimSpace(cmp.Or(og, tw)) == "" || strings.TrimSpace(site) == "" {
		if blocks := jsonLDBlocks(root); len(blocks) > 0 {
			ld := readJSONLD(blocks)
			title = firstText(og, tw, ld.headline, title, ld.pageName)
			site = firstText(site, ld.siteName, ld.publisher)
		}
	}
	title = firstText(og, tw, title)
	if title == "" {
		title = firstH1(root)
	}
	return pageMeta{title: strings.Join(strings.Fields(title), " "), siteName: strings.Join(strings.Fields(site), " ")}
}

// firstText is the first of texts that is not blank.
func firstText(texts ...string) string {
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			return t
		}
	}
	return ""
}

// jsonLDBlocks returns the text of the page's <script
// type="application/ld+json"> elements, in document order, anywhere in the
// page (many sites put them in the body), at most maxJSONLDBlocks.
func jsonLDBlocks(root *html.Node) []string {
	var blocks []string
	htmltree.Walk(root, func(n *html.Node) bool {
		if len(blocks) == maxJSONLDBlocks {
			return false
		}
		if n.Type != html.ElementNode || n.DataAtom != atom.Script {
			return true
		}
		if strings.EqualFold(strings.TrimSpace(strings.Split(attr(n, "type"), ";")[0]), "application/ld+json") && n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
			blocks = append(blocks, n.FirstChild.Data)
		}
		return false
	})
	return blocks
}

// firstH1 returns the text of the page's first <h1>: the title of a page
// that declares none in its head.
func firstH1(root *html.Node) string {
	var h string
	htmltree.Walk(root, func(n *html.Node) bool {
		if h != "" {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.H1 {
			h = textOf(n)
			return false
		}
		return true
	})
	return h
}
