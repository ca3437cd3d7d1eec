// Package htmltree walks parsed HTML trees without recursion, so that a
// deeply nested page cannot exhaust the stack.
package htmltree

import (
	"iter"

	"golang.org/x/net/html"
)

// Walk calls fn for n and the nodes below it in document order; when fn
// returns false, the node's children are skipped. fn may change the node
// it is given (its attributes, its children) but not detach it.
func Walk(n *html.Node, fn func(*html.Node) bool) {
	for c := n; c != nil; c = next(n, c, fn(c)) {
	}
}

// All yields n and every node below it in document order.
func All(n *html.Node) iter.Seq[*html.Node] {
	return func(yield func(*html.Node) bool) {
		for c := n; c != nil; c = next(n, c, true) {
			if !yield(c) {
				return
			}
		}
	}
}

// next is the node after c in a walk of root: its first child when
// descend, else its next sibling or an ancestor's, within root.
func next(root, c *html.Node, descend bool) *html.Node {
	if descend && c.FirstChild != nil {
		return c.FirstChild
	}
	for c != root && c.NextSibling == nil {
		c = c.Parent
	}
	if c == root {
		return nil
	}
	return c.NextSibling
}
