package extract

import (
	"cmp"
	"fmt"
	"net/url"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// The peers Toolport's extractor is measured against (bench_test.go,
// multilingual_test.go): go-readability and go-trafilatura alone, and the
// pipeline web_fetch used before the extractor of its own ("legacy":
// go-trafilatura, readability when it finds little, a clean-up and the
// page's described images put back). They live in the tests only, so the
// executables link neither library (their package init alone cost every
// start-up tens of milliseconds; see BENCHMARKS.md).

// strategy names a pipeline the benchmark compares.
type strategy int

const (
	strategyLegacy strategy = iota
	strategyReadability
	strategyTrafilatura
	strategyTrafilaturaFallback
	strategyWholePage
	strategyOwn
)

func (s strategy) String() string { return s.finder().name }

// finder returns the pipeline's finder for extractWith.
func (s strategy) finder() finder {
	switch s {
	case strategyOwn:
		return own
	case strategyLegacy:
		return finder{name: "legacy", prune: true, find: findLegacy}
	case strategyReadability:
		return finder{name: "readability", find: runReadability}
	case strategyTrafilatura:
		return finder{name: "trafilatura", find: func(root *html.Node, base *url.URL) (*html.Node, pageMeta) {
			content, meta, _ := runTrafilatura(root, base, false)
			return content, meta
		}}
	case strategyTrafilaturaFallback:
		return finder{name: "trafilatura-fallback", find: func(root *html.Node, base *url.URL) (*html.Node, pageMeta) {
			content, meta, _ := runTrafilatura(root, base, true)
			return content, meta
		}}
	case strategyWholePage:
		return finder{name: "whole-page", find: func(root *html.Node, _ *url.URL) (*html.Node, pageMeta) {
			return findBody(root), pageMeta{}
		}}
	}
	return finder{name: fmt.Sprintf("strategy(%d)", int(s))}
}

// findLegacy is the previous pipeline.
func findLegacy(root *html.Node, base *url.URL) (*html.Node, pageMeta) {
	// Links are made absolute on the extracted content only, which is much
	// smaller than the page; trafilatura is given no URL so that it leaves
	// them as they are (it resolves some relative paths wrongly).
	content, meta, textLen := runTrafilatura(root, nil, false)
	fromTrafilatura := true
	if content == nil || textLen < trafilaturaMinText || isBaseline(content) {
		// Trafilatura found little or nothing, and then returns its
		// "baseline": the page's text glued into one paragraph. Readability
		// keeps the structure; failing that, so does the whole body.
		content, fromTrafilatura = nil, false
		if rc, rm := runReadability(root, base); rc != nil && textOf(rc) != "" {
			content = rc
			meta = pageMeta{title: cmp.Or(meta.title, rm.title), siteName: cmp.Or(meta.siteName, rm.siteName), lang: cmp.Or(meta.lang, rm.lang)}
		} else {
			content = findBody(root)
		}
	}
	absolutize(content, base)
	cleanContent(content, meta.title, false)
	if fromTrafilatura {
		restoreImages(content, collectImages(root, base))
	} else {
		filterImages(content, base)
	}
	return content, meta
}

// trafilaturaMinText is go-trafilatura's MinExtractedSize: below it the
// library gives up on its own extraction and returns its baseline.
const trafilaturaMinText = 250

func runReadability(root *html.Node, base *url.URL) (*html.Node, pageMeta) {
	p := readability.NewParser()
	art, err := p.ParseDocument(root, base)
	if err != nil || art.Node == nil {
		return nil, pageMeta{}
	}
	return art.Node, pageMeta{title: art.Title(), siteName: art.SiteName(), lang: art.Language()}
}

// runTrafilatura returns go-trafilatura's content, its metadata and the
// length of its text in runes.
func runTrafilatura(root *html.Node, base *url.URL, fallback bool) (*html.Node, pageMeta, int) {
	res, err := trafilatura.ExtractDocument(root, trafilatura.Options{
		OriginalURL:     base,
		EnableFallback:  fallback,
		ExcludeComments: true,
		IncludeLinks:    true,
		IncludeImages:   false,
		HtmlDateMode:    trafilatura.Disabled,
		Focus:           trafilatura.Balanced,
	})
	if err != nil || res == nil || res.ContentNode == nil {
		return nil, pageMeta{}, 0
	}
	return res.ContentNode, pageMeta{
		title:    res.Metadata.Title,
		siteName: res.Metadata.Sitename,
		lang:     res.Metadata.Language,
	}, utf8.RuneCountInString(res.ContentText)
}

// isBaseline tells whether go-trafilatura returned its baseline rather than
// an extraction: only paragraphs of bare text, one of them holding the text
// of a whole container glued together. Its own extraction keeps inline
// markup and splits text into many paragraphs.
func isBaseline(content *html.Node) bool {
	n := 0
	for c := content.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data != "p" || c.FirstChild == nil || c.FirstChild != c.LastChild || c.FirstChild.Type != html.TextNode {
			return false
		}
		n++
	}
	return n > 0 && n <= 3
}

// The legacy pipeline put images back after extraction rather than asking
// go-trafilatura for them: its IncludeImages option changes which blocks it
// keeps and costs 0.010 F1 on the development set. Each described image of
// the page is tied to a text block beside it (its figure's caption, else the
// block before it, else the one after it); when that block is in the
// extracted content, the image goes back next to it.

// anchoredImage is a described image with the text blocks it may go back
// beside, best first.
type anchoredImage struct {
	pageImage
	anchors []anchor
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
func collectImages(root *html.Node, base *url.URL) []anchoredImage {
	var out []anchoredImage
	var prev *html.Node // last text block seen, in document order
	var pending []anchoredImage
	htmltree.Walk(root, func(n *html.Node) bool {
		if len(out)+len(pending) >= maxImages {
			return false
		}
		if n.Type != html.ElementNode {
			return true
		}
		if n.DataAtom == atom.Img {
			described, ok := describedImage(n, base)
			if !ok {
				return false
			}
			img := anchoredImage{pageImage: described}
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
func restoreImages(content *html.Node, images []anchoredImage) {
	if len(images) == 0 {
		return
	}
	blocks := make(map[string]*html.Node)
	htmltree.Walk(content, func(n *html.Node) bool {
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
