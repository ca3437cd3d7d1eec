package mcphost_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// TestDetachOneServer: one server of a host leaves (its tools, its status,
// Refresh no longer connects it) while the other stays connected and callable.
func TestDetachOneServer(t *testing.T) {
	a, b := newSDKServer(t), newSDKServer(t)
	reg := tool.NewRegistry()
	h := attach(t, reg, []mcphost.Server{{Name: "a", URL: a.ts.URL}, {Name: "b", URL: b.ts.URL}}, mcphost.Options{})
	if n := len(reg.Tools()); n != 6 {
		t.Fatalf("%d tools registered; want 6", n)
	}
	if err := h.Detach("a"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range reg.Tools() {
		names = append(names, tl.Name())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"b__fails", "b__hang", "b__ok"}) {
		t.Errorf("tools after Detach = %q; want b's alone", names)
	}
	if st := h.Status(); len(st) != 1 || st[0].Name != "b" || !st[0].Connected {
		t.Errorf("status after Detach = %+v; want b alone, connected", st)
	}
	h.Refresh(t.Context()) // a detached server is not connected again
	if n := len(reg.Tools()); n != 3 {
		t.Errorf("Refresh after Detach: %d tools; want 3", n)
	}
	if res := reg.Call(t.Context(), "b__ok", nil); !res.OK() {
		t.Errorf("the server that stayed fails: %s", res.JSON)
	}
	if err := h.Detach("a"); !errors.Is(err, mcphost.ErrNotAttached) {
		t.Errorf("detaching a twice: %v; want ErrNotAttached", err)
	}
}

// TestDetachStdioServer: server-everything, which does not exit when its
// input closes, is stopped by Detach without an error to report (its exit
// status after the terminate signal is the stop asked for), and its tools go.
func TestDetachStdioServer(t *testing.T) {
	n := testexec.NPMTools(t)
	script := n.File(t, "@modelcontextprotocol/server-everything/dist/index.js")
	reg := tool.NewRegistry()
	h := attach(t, reg, []mcphost.Server{{Name: "everything", Command: n.Node, Args: []string{script, "stdio"},
		Env: map[string]string{"HOME": t.TempDir()}}}, mcphost.Options{})
	if _, ok := reg.Lookup("everything__echo"); !ok {
		t.Fatalf("not attached: %+v", h.Status())
	}
	if err := h.Detach("everything"); err != nil {
		t.Errorf("Detach: %v; want no error for a server stopped as asked", err)
	}
	if n := len(reg.Tools()); n != 0 {
		t.Errorf("%d tools after Detach", n)
	}
}
