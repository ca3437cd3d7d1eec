package config_test

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
)

var update = flag.Bool("update", false, "rewrite docs/config.md from the settings table")

// repoRoot is the module's directory: this package is internal/config.
const repoRoot = "../.."

// envName matches the variables Toolport's code names: its own prefixes,
// the upstreams', and the XDG base directories.
var envName = regexp.MustCompile(`^(TOOLPORT|BRAVE|GOOGLE|CKAN|TIDAL|ANTHROPIC|OPENAI|OTEL|LANGFUSE|MUSIXMATCH|LRCLIB|RECCOBEATS|XDG|CHROMIUM)_[A-Z0-9_]+$`)

// namedInCode returns every string literal of the module's non-test Go files
// that is exactly a variable's name: whether read directly, through a
// constant or through a helper, a variable the code reads is named this way.
func namedInCode(t *testing.T) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(v) {
				rel, _ := filepath.Rel(repoRoot, path)
				found[v] = append(found[v], rel)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestEveryVariableReadIsInTheTable(t *testing.T) {
	inTable := map[string]bool{}
	for _, g := range config.Settings() {
		for _, s := range g.Settings {
			if inTable[s.Env] {
				t.Errorf("%s is in the table twice", s.Env)
			}
			inTable[s.Env] = true
		}
	}
	inCode := namedInCode(t)
	for name, files := range inCode {
		if !inTable[name] {
			t.Errorf("%s is read (%s) but not in internal/config/settings.go", name, strings.Join(files, ", "))
		}
	}
	for name := range inTable {
		if _, ok := inCode[name]; !ok && envName.MatchString(name) {
			t.Errorf("%s is in the settings table but no code names it", name)
		}
	}
}

func TestSecretsHaveNoDefault(t *testing.T) {
	for _, g := range config.Settings() {
		for _, s := range g.Settings {
			if s.Doc == "" {
				t.Errorf("%s has no description", s.Env)
			}
			if s.Secret && s.Default != "" {
				t.Errorf("%s is a secret with a default", s.Env)
			}
		}
	}
}

// TestConfigDoc keeps docs/config.md what the table renders; -update
// rewrites it.
func TestConfigDoc(t *testing.T) {
	path := filepath.Join(repoRoot, "docs", "config.md")
	want := config.RenderMarkdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		lines := strings.Split(string(got), "\n")
		wantLines := strings.Split(want, "\n")
		i := 0
		for i < len(lines) && i < len(wantLines) && lines[i] == wantLines[i] {
			i++
		}
		t.Errorf("docs/config.md is not what internal/config/settings.go renders (first difference at line %d); run: go test ./internal/config -run TestConfigDoc -update", i+1)
	}
	if !slices.ContainsFunc(strings.Split(want, "\n"), func(l string) bool { return strings.Contains(l, "`BRAVE_API_KEY` 🔒") }) {
		t.Error("a secret is not marked")
	}
}
