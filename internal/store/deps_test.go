package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages that use a store depend on this package's types and
// interfaces, never on a database driver: only sqlstore imports those.
func TestConsumersImportNoDriver(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	drivers := []string{"modernc.org/sqlite", "github.com/jackc/pgx"}
	for _, pkg := range []string{
		"github.com/toolport/toolport/internal/store",
		"github.com/toolport/toolport/internal/agent",
		"github.com/toolport/toolport/internal/server",
		"github.com/toolport/toolport/internal/pack/music",
	} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for dep := range strings.Lines(string(out)) {
			dep = strings.TrimSpace(dep)
			for _, d := range drivers {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					t.Errorf("%s depends on the driver package %s", pkg, dep)
				}
			}
		}
	}
	// The check itself: sqlstore does import them.
	out, err := exec.Command(goBin, "list", "-deps", "github.com/toolport/toolport/internal/store/sqlstore").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "modernc.org/sqlite\n") || !strings.Contains(string(out), "github.com/jackc/pgx/v5/stdlib\n") {
		t.Errorf("go list -deps sqlstore does not list both drivers (%v): the check above proves nothing", err)
	}
}
