package pdftext

import (
	"fmt"

	"github.com/ledongthuc/pdf"
)

// Bounds of the page tree (PDF 32000-1:2008, 7.7.3). Real trees are a few
// levels deep; a cycle of /Kids or /Parent references is endless, and the
// library's Reader.Page and Page.findInherited would follow it forever.
const (
	maxTreeDepth = 256 // levels of /Kids below the root, and /Parent hops above a page
	// treeNodesBase and treeNodesPerPage bound the nodes looked at while
	// collecting the pages read: a tree has about one node per page, and
	// each node looked at costs a lookup (an object stream inflated again).
	treeNodesBase    = 10_000
	treeNodesPerPage = 4
)

// collectPages walks the page tree from the catalog's /Pages in document
// order and returns its first limit pages (more reports whether the tree
// has pages beyond them). It replaces Reader.Page, which has no bound,
// and keeps its rules: a node whose /Type is /Pages is descended into, one
// whose /Type is /Page is a page, anything else is passed over. Each page's
// /Parent chain must end within maxTreeDepth hops, since the library walks
// it to find inherited resources.
func collectPages(r *pdf.Reader, limit int) (pages []pdf.Page, more bool, err error) {
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Key("Type").Name() != "Pages" {
		return nil, false, nil
	}
	type frame struct {
		kids pdf.Value
		next int
	}
	stack := []frame{{kids: root.Key("Kids")}}
	nodes, budget := 1, treeNodesBase+treeNodesPerPage*limit
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next >= top.kids.Len() {
			stack = stack[:len(stack)-1]
			continue
		}
		kid := top.kids.Index(top.next)
		top.next++
		if nodes++; nodes > budget {
			return nil, false, fmt.Errorf("%w: the page tree has over %d nodes before page %d (a /Kids cycle?)", ErrMalformed, budget, len(pages)+1)
		}
		switch kid.Key("Type").Name() {
		case "Pages":
			if len(stack) >= maxTreeDepth {
				return nil, false, fmt.Errorf("%w: the page tree is over %d levels deep (a /Kids cycle?)", ErrMalformed, maxTreeDepth)
			}
			stack = append(stack, frame{kids: kid.Key("Kids")})
		case "Page":
			if len(pages) == limit {
				return pages, true, nil
			}
			if !parentsEnd(kid) {
				return nil, false, fmt.Errorf("%w: page %d's /Parent chain is over %d nodes long (a /Parent cycle?)", ErrMalformed, len(pages)+1, maxTreeDepth)
			}
			pages = append(pages, pdf.Page{V: kid})
		}
	}
	return pages, false, nil
}

// parentsEnd reports whether page's /Parent chain ends within
// maxTreeDepth hops (a cycle would hang the library's lookup of inherited
// attributes such as /Resources).
func parentsEnd(page pdf.Value) bool {
	v := page
	for range maxTreeDepth + 1 {
		if v = v.Key("Parent"); v.IsNull() {
			return true
		}
	}
	return false
}
