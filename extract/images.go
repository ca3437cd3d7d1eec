package extract

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Images stay in the Markdown only with a description: an alt text that
// describes (not a label, a share button or a tracking pixel), each image
// once.

// pageImage is a described image of the page: its absolute source and its
// alt text.
type pageImage struct {
	src, alt string
}

// describedImage returns the image's absolute source and alt text, if it has
// both and is not a tracking pixel.
func describedImage(n *html.Node, base *url.URL) (pageImage, bool) {
	var src, lazy, alt, w, h string
	for _, a := range n.Attr {
		switch a.Key {
		case "src":
			src = strings.TrimSpace(a.Val)
		case "data-src", "data-lazy-src", "data-original":
			lazy = strings.TrimSpace(a.Val)
		case "alt":
			alt = strings.Join(strings.Fields(a.Val), " ")
		case "width":
			w = a.Val
		case "height":
			h = a.Val
		}
	}
	if src == "" || strings.HasPrefix(src, "data:") {
		src = lazy
	}
	if src == "" || strings.HasPrefix(src, "data:") || w == "1" || h == "1" || len(alt) > 1000 || !descriptive(alt) || linkedAway(n) {
		return pageImage{}, false
	}
	u, err := url.Parse(src)
	if err != nil {
		return pageImage{}, false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return pageImage{}, false
	}
	return pageImage{src: u.String(), alt: alt}, true
}

// descriptive tells an alt text that describes from one that labels: at
// least two words, and none of the words of site furniture.
func descriptive(alt string) bool {
	words := strings.FieldsFunc(strings.ToLower(alt), func(r rune) bool { return r == ' ' || r == '-' || r == '_' })
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		switch w {
		case "logo", "icon", "avatar", "banner", "advertisement":
			return false
		}
	}
	return true
}

// linkedAway tells whether an image is the face of a link to somewhere else
// (a share button, an advertisement, a teaser): an image linked to a larger
// version of itself is still content.
func linkedAway(img *html.Node) bool {
	for p, depth := img.Parent, 0; p != nil && depth < 4; p, depth = p.Parent, depth+1 {
		if p.DataAtom != atom.A {
			continue
		}
		for _, a := range p.Attr {
			if a.Key == "href" {
				u, err := url.Parse(strings.TrimSpace(a.Val))
				if err != nil {
					return true
				}
				path := strings.ToLower(u.Path)
				for _, ext := range []string{".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"} {
					if strings.HasSuffix(path, ext) {
						return false
					}
				}
				return true
			}
		}
		return false
	}
	return false
}

// filterImages removes from content the images the restore would not have
// put back (no description, a label, a share button, a pixel, a repeat),
// (the extractor keeps the page's own images where they stand).
func filterImages(content *html.Node, base *url.URL) {
	var drop []*html.Node
	seen := make(map[string]bool)
	walk(content, func(n *html.Node) {
		if n.Type != html.ElementNode || n.DataAtom != atom.Img {
			return
		}
		img, ok := describedImage(n, base)
		if !ok || seen[img.src] || seen[img.alt] {
			drop = append(drop, n)
			return
		}
		seen[img.src], seen[img.alt] = true, true
		// The source the reader can load: a lazy-loading page's real one
		// rather than its placeholder, made absolute.
		setAttr(n, "src", img.src)
	})
	for _, n := range drop {
		remove(n)
	}
}

// setAttr sets n's attribute key to val, adding it when missing.
func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key && n.Attr[i].Namespace == "" {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}
