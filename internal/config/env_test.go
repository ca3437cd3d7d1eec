package config_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envFuncs are the functions that read the process environment.
var envFuncs = map[string][]string{
	"os":      {"Getenv", "LookupEnv", "Environ"},
	"syscall": {"Getenv", "Environ"},
}

// envReaders returns, for each non-test Go file under root that names one of
// envFuncs (called or passed as a value: handing os.Getenv on is reading the
// environment too), the functions it names, as "os.Getenv". Paths are
// slash-separated and relative to root.
func envReaders(t *testing.T, root string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		// The names the file gives the packages of envFuncs (an import may
		// rename them).
		local := map[string]string{}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := envFuncs[ip]; !ok {
				continue
			}
			name := ip
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = ip
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if ip, ok := local[id.Name]; ok && slices.Contains(envFuncs[ip], sel.Sel.Name) {
				found[rel] = append(found[rel], ip+"."+sel.Sel.Name)
			}
			return true
		})
		if f.Name.Name == "main" && len(found[rel]) > 0 {
			found[rel] = append(found[rel], "(package main)")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// mayReadEnvironment says whether the file at rel (slash-separated, from the
// module's root) may read the process environment: the command layer
// (internal/cli, the mains under cmd/ and every other package main: a
// program's main is its command layer) and test support (…test packages and
// internal/testexec, which read the TOOLPORT_TEST_* variables).
func mayReadEnvironment(rel string, names []string) bool {
	dir := path.Dir(rel)
	switch {
	case dir == "internal/cli" || strings.HasPrefix(dir, "cmd/"):
		return true
	case slices.Contains(names, "(package main)"):
		return true
	case strings.HasSuffix(path.Base(dir), "test") || dir == "internal/testexec":
		return true
	}
	return false
}

// TestNothingElseReadsTheEnvironment: settings are read in one place. A
// package that needs one is handed it (a value, or a *config.Config built
// by internal/cli from the process's environment).
func TestNothingElseReadsTheEnvironment(t *testing.T) {
	for file, names := range envReaders(t, repoRoot) {
		if !mayReadEnvironment(file, names) {
			t.Errorf("%s reads the environment (%s): take the value from internal/cli instead", file, strings.Join(names, ", "))
		}
	}
}

// TestEnvReadersFindsEveryForm: the walk above finds a read however it is
// written, and the rule lets only the command layer and test support read.
func TestEnvReadersFindsEveryForm(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"internal/pack/x/x.go":          "package x\nimport \"os\"\nfunc f() string { return os.Getenv(\"A\") }\n",
		"internal/pack/y/y.go":          "package y\nimport sys \"os\"\nvar get = sys.LookupEnv\n",
		"internal/pack/z/z.go":          "package z\nimport \"syscall\"\nfunc f() []string { return syscall.Environ() }\n",
		"internal/pack/x/x_test.go":     "package x\nimport \"os\"\nvar _ = os.Getenv(\"A\")\n",
		"internal/pack/w/w.go":          "package w\nimport \"os\"\nfunc f() string { h, _ := os.UserHomeDir(); return h }\n",
		"internal/cli/cli.go":           "package cli\nimport \"os\"\nvar _ = os.Getenv\n",
		"cmd/tool/main.go":              "package main\nimport \"os\"\nvar _ = os.Environ()\n",
		"internal/store/storetest/s.go": "package storetest\nimport \"os\"\nvar _ = os.Getenv(\"TOOLPORT_TEST_DATABASE_URL\")\n",
		"scripts/bench/main.go":         "package main\nimport \"os\"\nvar _ = os.Getenv(\"PATH\")\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var refused []string
	for file, names := range envReaders(t, root) {
		if !mayReadEnvironment(file, names) {
			refused = append(refused, file+": "+strings.Join(names, ","))
		}
	}
	slices.Sort(refused)
	want := []string{
		"internal/pack/x/x.go: os.Getenv",
		"internal/pack/y/y.go: os.LookupEnv",
		"internal/pack/z/z.go: syscall.Environ",
	}
	if !slices.Equal(refused, want) {
		t.Errorf("refused %q,\nwant %q", refused, want)
	}
}
