package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Images are put back after extraction rather than asked of go-trafilatura:
// its IncludeImages option changes which blocks it keeps and costs 0.010 F1
// on the development set. Each described image of the page is tied to a
// text block beside it (its figure's caption, else the block before it,
// else the one after it); when that block is in the extracted content, the
// image goes back next to it. An image whose neighbour was dropped as
// boilerplate is dropped with it.

// pageImage is an image of the original page with the text blocks it may
// go back beside, best first.
type pageImage struct {
	src, alt string
	anchors  []anchor
}

// anchor is a text block an image sits beside: its key (see blockKey), and
// whether the image goes before it rather than after it.
type anchor struct {
	key    string
	before bool
}

// Bounds on the work done for images.
const (
	maxImages    = 200
	minAnchorKey = 20 // runes of letters: shorter blocks are not unique enough to anchor to
	keyRunes     = 80
)

// blockKey identifies a text block across the extraction: the first
// letters and digits of its text, lower-cased.
func blockKey(n *html.Node) string {
	k := normText(textOf(n))
	if utf8.RuneCountInString(k) < minAnchorKey {
		return ""
	}
	i, r := 0, 0
	for i < len(k) && r < keyRunes {
		_, sz := utf8.DecodeRuneInString(k[i:])
		i += sz
		r++
	}
	return k[:i]
}

// textBlock tells whether n is a block whose text can anchor an image.
func textBlock(n *html.Node) bool {
	switch n.DataAtom {
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Li, atom.Blockquote, atom.Figcaption, atom.Dd, atom.Pre, atom.Table:
		return true
	}
	return false
}

// collectImages lists the page's described images with their anchors.
func collectImages(root *html.Node, base *url.URL) []pageImage {
	var out []pageImage
	var prev *html.Node // last text block seen, in document order
	var pending []pageImage
	walkSkip(root, func(n *html.Node) bool {
		if len(out)+len(pending) >= maxImages {
			return false
		}
		if n.Type != html.ElementNode {
			return true
		}
		if n.DataAtom == atom.Img {
			img, ok := describedImage(n, base)
			if !ok {
				return false
			}
			if cap := figcaptionOf(n); cap != nil {
				if key := blockKey(cap); key != "" {
					img.anchors = append(img.anchors, anchor{key: key, before: true})
				}
			}
			if prev != nil {
				if key := blockKey(prev); key != "" {
					img.anchors = append(img.anchors, anchor{key: key})
				}
			}
			if len(img.anchors) == 0 {
				pending = append(pending, img)
			} else {
				out = append(out, img)
			}
			return false
		}
		if textBlock(n) {
			if len(pending) > 0 {
				if key := blockKey(n); key != "" {
					for _, p := range pending {
						p.anchors = append(p.anchors, anchor{key: key, before: true})
						out = append(out, p)
					}
					pending = pending[:0]
				}
			}
			prev = n
			// Images inside a text block anchor to that block (prev is
			// already n), so keep walking into it.
		}
		return true
	})
	return out
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

// figcaptionOf returns the caption of the <figure> an image is in, if any.
func figcaptionOf(img *html.Node) *html.Node {
	for p, depth := img.Parent, 0; p != nil && depth < 4; p, depth = p.Parent, depth+1 {
		if p.DataAtom != atom.Figure {
			continue
		}
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Figcaption {
				return c
			}
		}
		return nil
	}
	return nil
}

// restoreImages puts the images back beside their anchors in content, each
// in a paragraph of its own, at most once each: beside the first of its
// anchors that the extraction kept.
func restoreImages(content *html.Node, images []pageImage) {
	if len(images) == 0 {
		return
	}
	blocks := make(map[string]*html.Node)
	walkSkip(content, func(n *html.Node) bool {
		if n.Type == html.ElementNode && textBlock(n) {
			if key := blockKey(n); key != "" && blocks[key] == nil {
				blocks[key] = n
			}
			return false
		}
		return true
	})
	// Images placed after a block follow it in page order: remember where
	// the last one went.
	lastAfter := make(map[*html.Node]*html.Node)
	seen := make(map[string]bool) // sources and alt texts already placed
	for _, img := range images {
		if seen[img.src] || seen[img.alt] {
			continue
		}
		for _, a := range img.anchors {
			n := blocks[a.key]
			if n == nil || n.Parent == nil {
				continue
			}
			seen[img.src], seen[img.alt] = true, true
			p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			p.AppendChild(&html.Node{Type: html.ElementNode, Data: "img", DataAtom: atom.Img, Attr: []html.Attribute{{Key: "src", Val: img.src}, {Key: "alt", Val: img.alt}}})
			if a.before {
				n.Parent.InsertBefore(p, n)
			} else {
				at := n
				if last := lastAfter[n]; last != nil {
					at = last
				}
				n.Parent.InsertBefore(p, at.NextSibling)
				lastAfter[n] = p
			}
			break
		}
	}
}

// filterImages removes from content the images the restore would not have
// put back (no description, a label, a share button, a pixel, a repeat),
// for content that kept its own images (readability's, or the whole page).
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
