package hermetic

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod, two levels up from here.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// goFiles lists the repository's Go files, skipping caches and corpora.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// pathLiteral evaluates an expression that names a relative path with string
// literals only: "a/b", or filepath.Join / path.Join of literals. It reports
// false for anything computed at run time.
func pathLiteral(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		// A literal prefix ("../../x/" + name) is enough to tell where it goes.
		l, ok := pathLiteral(e.X)
		if !ok {
			return "", false
		}
		if r, ok := pathLiteral(e.Y); ok {
			return l + r, true
		}
		return l, true
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Join" {
			return "", false
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || (pkg.Name != "filepath" && pkg.Name != "path") {
			return "", false
		}
		var parts []string
		for _, a := range e.Args {
			s, ok := pathLiteral(a)
			if !ok {
				// A leading literal prefix still tells where the path goes.
				break
			}
			parts = append(parts, s)
		}
		if len(parts) == 0 {
			return "", false
		}
		return filepath.Join(parts...), true
	}
	return "", false
}

// fileFuncs are the calls whose arguments name files or directories.
var fileFuncs = map[string]bool{
	"ReadFile": true, "Open": true, "OpenFile": true, "Stat": true, "Lstat": true, "ReadDir": true,
	"Glob": true, "DirFS": true, "Join": true, "WalkDir": true, "Walk": true, "Chdir": true,
	"Build": true, "Create": true, "WriteFile": true, "MkdirAll": true,
}

// Every relative path a Go file spells out for a file call, or names as a
// constant or variable, must stay inside the repository when resolved from
// that file's package directory, which is where go test runs it. This is
// what caught tests reading the hand-over folder beside the repository.
func TestNoPathLeavesTheRepository(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, file := range goFiles(t, root) {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		dir := filepath.Dir(file)
		check := func(e ast.Expr) {
			p, ok := pathLiteral(e)
			if !ok || !strings.HasPrefix(filepath.ToSlash(p), "../") {
				return
			}
			abs := filepath.Join(dir, p)
			if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Errorf("%s: %q resolves outside the repository (%s)", fset.Position(e.Pos()), p, abs)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if fileFuncs[name] {
					check(n)
					for _, a := range n.Args {
						check(a)
					}
				}
			case *ast.ValueSpec:
				for _, v := range n.Values {
					check(v)
				}
			}
			return true
		})
	}
}

// No tracked file may point at the hand-over folder that sits beside the
// repository on the developers' machines but not in a user's clone.
func TestNoFileNamesTheSharedFolder(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the path check above still ran", err)
	}
	// Built so that this file does not match itself.
	needles := []string{"../" + "shared", "TOOLPORT_" + "SHARED_DIR", "/work/" + "shared"}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree
		}
		for _, n := range needles {
			if strings.Contains(string(b), n) {
				t.Errorf("%s mentions %q: copy what it needs into testdata/ instead", name, n)
			}
		}
	}
}
