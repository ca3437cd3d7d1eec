package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDateParser guards start-up time: go-dateparser builds its locale
// tables at package init (~1.5 G instructions, 78 MB), so no command may
// link it. It arrives through go-trafilatura → go-htmldate, which go.mod
// replaces with third_party/htmldate-nodate; this fails if the replace is
// dropped or another path to it appears.
func TestNoDateParser(t *testing.T) {
	heavy := []string{"github.com/markusmobius/go-dateparser", "github.com/markusmobius/go-htmldate/internal"}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/toolport/toolport/cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 || !contains(deps, "github.com/markusmobius/go-trafilatura") {
		t.Fatalf("go list listed %d packages, without go-trafilatura: the check would prove nothing", len(deps))
	}
	for _, p := range deps {
		for _, h := range heavy {
			if strings.HasPrefix(p, h) {
				t.Errorf("a command links %s (go-dateparser's init runs at every start)", p)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
