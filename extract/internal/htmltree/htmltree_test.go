package htmltree

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestWalkOrderAndSkip(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<div id=a><p id=b><i id=c></i></p><p id=d></p></div><div id=e></div>`))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(skip string) string {
		var got []string
		Walk(doc, func(n *html.Node) bool {
			for _, a := range n.Attr {
				if a.Key == "id" {
					got = append(got, a.Val)
					return a.Val != skip
				}
			}
			return true
		})
		return strings.Join(got, "")
	}
	if got := ids(""); got != "abcde" {
		t.Errorf("walk = %q, want abcde", got)
	}
	if got := ids("b"); got != "abde" {
		t.Errorf("walk skipping b's children = %q, want abde", got)
	}
	var all []string
	for n := range All(doc) {
		if n.Type == html.ElementNode && n.Data == "p" {
			all = append(all, n.Attr[0].Val)
			break // All stops when asked
		}
	}
	if strings.Join(all, "") != "b" {
		t.Errorf("All = %v", all)
	}
}

// A tree deeper than any stack would allow recursion through is walked.
func TestWalkDeepTree(t *testing.T) {
	root := &html.Node{Type: html.ElementNode, Data: "div"}
	n := root
	for range 200000 {
		c := &html.Node{Type: html.ElementNode, Data: "div"}
		n.AppendChild(c)
		n = c
	}
	count := 0
	for range All(root) {
		count++
	}
	if count != 200001 {
		t.Errorf("visited %d nodes, want 200001", count)
	}
}
