package tooltest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modulePath is the module whose root fixture paths are relative to; a
// go.mod of another module (a nested one) does not count.
const modulePath = "github.com/toolport/toolport"

// Root returns the directory holding the module's go.mod, found by walking
// up from the working directory, which go test sets to the package under
// test. It fails the test when there is none.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("tooltest: %v", err)
	}
	root, err := findRoot(dir)
	if err != nil {
		t.Fatalf("tooltest: %v", err)
	}
	return root
}

// findRoot walks up from dir to the directory whose go.mod declares
// modulePath.
func findRoot(dir string) (string, error) {
	for start := dir; ; {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(b, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod for %s in %s or above", modulePath, start)
		}
		dir = parent
	}
}

// declares reports whether a go.mod declares module path.
func declares(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}
