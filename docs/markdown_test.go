// Package docs holds the project's documents; its test renders each Markdown
// file of the repository as GitHub does (CommonMark with tables) and fails on
// what a reader would meet broken: a relative link to nothing, a table that
// renders as a paragraph, a paragraph swallowed into a table.
package docs_test

import (
	"bytes"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

const repoRoot = ".."

// markdownFiles lists the repository's Markdown files, without recorded
// upstream data (testdata) and tools' caches.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != repoRoot && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files from %s", len(files), repoRoot)
	}
	return files
}

func TestMarkdownRendersWhole(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	for _, path := range markdownFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := md.Parser().Parse(text.NewReader(src))
		rel, _ := filepath.Rel(repoRoot, path)
		lineOf := func(offset int) int { return bytes.Count(src[:offset], []byte("\n")) + 1 }
		err = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.Paragraph:
				for i := range n.Lines().Len() {
					seg := n.Lines().At(i)
					if strings.HasPrefix(strings.TrimSpace(string(seg.Value(src))), "|") {
						t.Errorf("%s:%d: a table row renders as text (a blank line missing before the table, or a malformed header?)", rel, lineOf(seg.Start))
						break
					}
				}
			case *east.TableRow, *east.TableHeader:
				if cell := n.FirstChild(); cell != nil && cell.Lines().Len() > 0 {
					start := cell.Lines().At(0).Start
					lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
					if !strings.HasPrefix(strings.TrimSpace(string(src[lineStart:start+1])), "|") {
						t.Errorf("%s:%d: a line is swallowed into the table above it (a blank line missing after the table?)", rel, lineOf(start))
					}
				}
			case *ast.Link:
				checkLink(t, rel, path, string(n.Destination))
			case *ast.Image:
				checkLink(t, rel, path, string(n.Destination))
			}
			return ast.WalkContinue, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkLink fails a relative link whose file does not exist.
func checkLink(t *testing.T, rel, path, dest string) {
	t.Helper()
	u, err := url.Parse(dest)
	if err != nil {
		t.Errorf("%s: link %q does not parse", rel, dest)
		return
	}
	if u.Scheme != "" || u.Host != "" || u.Path == "" {
		return // a web address, a mail address, or an anchor in the same file
	}
	target := filepath.Join(filepath.Dir(path), filepath.FromSlash(u.Path))
	if _, err := os.Stat(target); err != nil {
		t.Errorf("%s: link to %s: no such file", rel, u.Path)
	}
}
