package extract

import (
	"bytes"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// uncounted are elements that never deepen the tree on their own: void
// elements, and elements the parser closes implicitly when a sibling opens
// (so a run of unclosed <p> or <li> stays flat).
func uncounted(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Param, atom.Source, atom.Track, atom.Wbr, atom.Keygen,
		atom.Frame, atom.Basefont, atom.Bgsound, atom.Image,
		atom.P, atom.Li, atom.Dt, atom.Dd, atom.Option, atom.Optgroup, atom.Tr, atom.Td, atom.Th,
		atom.Tbody, atom.Thead, atom.Tfoot, atom.Rb, atom.Rt, atom.Rp, atom.Rtc, atom.Colgroup,
		atom.Caption, atom.Html, atom.Head, atom.Body, atom.A, atom.Nobr:
		return true
	}
	return false
}

// endTagReach is how far down the open-element stack an end tag is matched.
// Bounding it keeps the scan linear on pages made of stray end tags.
const endTagReach = 16

// limitDepth returns page with the start and end tags that would nest
// elements deeper than maxDepth removed (their text stays). The HTML parser
// refuses pages nesting more than 512 open elements (its algorithm does work
// proportional to that depth on every tag); flattened, such a page can still
// be read. Pages within the limit are returned unchanged, without copying.
func limitDepth(page []byte, maxDepth int) []byte {
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(0)
	var (
		stack   []atom.Atom // unknown elements are all atom 0
		foreign int         // <svg> and <math> elements on the stack
		out     []byte      // nil until something is dropped
		pos     int         // bytes of page consumed so far
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := z.Raw()
		start := pos
		pos += len(raw)
		keep := true
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if uncounted(a) || tt == html.SelfClosingTagToken && foreign > 0 {
				break // in SVG and MathML, <x/> opens nothing
			}
			if len(stack) >= maxDepth {
				keep = false
				break
			}
			stack = append(stack, a)
			if isForeign(a) {
				foreign++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if uncounted(a) {
				break
			}
			found := false
			for i := len(stack) - 1; i >= 0 && i >= len(stack)-endTagReach; i-- {
				if stack[i] == a {
					for _, s := range stack[i:] {
						if isForeign(s) {
							foreign--
						}
					}
					stack = stack[:i]
					found = true
					break
				}
			}
			keep = found || len(stack) < maxDepth
		}
		if keep {
			if out != nil {
				out = append(out, raw...)
			}
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(page))
			out = append(out, page[:start]...)
		}
	}
	if out == nil {
		return page
	}
	return append(out, page[pos:]...)
}

func isForeign(a atom.Atom) bool { return a == atom.Svg || a == atom.Math }
