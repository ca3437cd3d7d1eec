package testexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// RequireToolsEnv names the variable that turns a missing external program
// into a failure. scripts/test (and so CI) sets it to 1: there every program a
// test needs has been installed, and a skip would hide a broken install.
const RequireToolsEnv = "TOOLPORT_TEST_REQUIRE_TOOLS"

// InspectorEnv overrides the MCP Inspector program that NPM.Inspector runs
// (default: the one pinned in testdata/npm).
const InspectorEnv = "TOOLPORT_MCP_INSPECTOR"

// NPMDirEnv overrides where the npm packages of testdata/npm are installed
// (default: .cache/npm at the module's root, where scripts/test puts them).
const NPMDirEnv = "TOOLPORT_NPM_DIR"

// installHint is how to get every npm-installed program at once.
const installHint = "./scripts/test installs it (npm ci of testdata/npm into .cache/npm; it needs npm: apt-get install npm)"

// MinNode is the oldest Node.js the npm tools run on: Inspector 2.12 declares
// "node": ">=22.19.0".
var MinNode = [2]int{22, 19}

// Missing ends a test that cannot find an external program it needs. It
// skips, naming the program and how to get it, unless
// TOOLPORT_TEST_REQUIRE_TOOLS=1, in which case the test fails.
func Missing(t testing.TB, program, how string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s: unavailable (%v); %s", program, err, how)
	if os.Getenv(RequireToolsEnv) == "1" {
		t.Fatalf("%s (%s=1: every external program must be present)", msg, RequireToolsEnv)
	}
	t.Skip(msg)
}

// NPM is the set of test tools installed from testdata/npm: Node.js itself
// (so that a machine whose Node is older still runs them) and the packages.
type NPM struct {
	// Dir holds node_modules.
	Dir string
	// Node is a node binary of at least MinNode.
	Node string
}

var (
	npmOnce sync.Once
	npmTool NPM
	npmErr  error
)

// NPMTools finds the installed tools and a Node.js of at least MinNode (the
// one installed with them, else the first on PATH), or ends the test through
// Missing.
func NPMTools(t testing.TB) *NPM {
	t.Helper()
	npmOnce.Do(func() { npmTool, npmErr = findNPM() })
	if npmErr != nil {
		Missing(t, fmt.Sprintf("Node.js %d.%d+ with the npm test tools", MinNode[0], MinNode[1]), installHint, npmErr)
	}
	n := npmTool
	return &n
}

// npmDir is where the packages are installed.
func npmDir() (string, error) {
	dir := os.Getenv(NPMDirEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, ".cache", "npm")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		return "", fmt.Errorf("no npm packages installed: %w", err)
	}
	return dir, nil
}

// NPMFile returns the path of rel inside the installed node_modules, for a
// file used without Node (axe-core's script, run in the browser), or ends the
// test through Missing.
func NPMFile(t testing.TB, rel string) string {
	t.Helper()
	dir, err := npmDir()
	if err != nil {
		Missing(t, rel, installHint, err)
	}
	n := NPM{Dir: dir}
	return n.File(t, rel)
}

func findNPM() (NPM, error) {
	dir, err := npmDir()
	if err != nil {
		return NPM{}, err
	}
	var tried []string
	for _, cand := range []string{filepath.Join(dir, "node_modules", ".bin", "node"), "node"} {
		p, err := exec.LookPath(cand)
		if err != nil {
			continue
		}
		// .bin/node is a link; its target's directory holds node alone, so
		// Env puts no other program of the packages first on PATH.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		v, err := nodeVersion(p)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if v[0] > MinNode[0] || v[0] == MinNode[0] && v[1] >= MinNode[1] {
			return NPM{Dir: dir, Node: p}, nil
		}
		tried = append(tried, fmt.Sprintf("%s is %d.%d", p, v[0], v[1]))
	}
	return NPM{}, fmt.Errorf("no node %d.%d or newer (%s)", MinNode[0], MinNode[1], strings.Join(tried, "; "))
}

func nodeVersion(node string) ([2]int, error) {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return [2]int{}, fmt.Errorf("node --version: %w", err)
	}
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, fmt.Errorf("node --version printed %q", out)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err := errors.Join(err1, err2); err != nil {
		return [2]int{}, fmt.Errorf("node --version printed %q: %w", out, err)
	}
	return [2]int{major, minor}, nil
}

// moduleRoot is the nearest directory above the working directory (a test's
// package) holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// File returns the path of rel inside node_modules, or ends the test through
// Missing when it is absent.
func (n *NPM) File(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(n.Dir, "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		Missing(t, rel, installHint, err)
	}
	return p
}

// Env is os.Environ with the chosen node's directory first on PATH, so that
// the packages' "#!/usr/bin/env node" scripts run on it, and the entries of
// extra ("K=V") after it.
func (n *NPM) Env(extra ...string) []string {
	nodeDir := filepath.Dir(n.Node)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return append(env, extra...)
}

// Command runs one of the packages' programs (node_modules/.bin/name) on the
// chosen node, with HOME in a fresh temporary directory so that nothing a
// tool remembers between runs (the Inspector's catalogue, npm's cache) is
// read or written outside the test.
func (n *NPM) Command(ctx context.Context, t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin := n.File(t, filepath.Join(".bin", name))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = n.Env("HOME=" + t.TempDir())
	return cmd
}

// Script runs the ES module script (a path) on the chosen node so that its
// imports resolve to the installed packages: the script is copied into a
// temporary directory beside a node_modules link, since Node resolves an ES
// module's imports from where the module lies, not from NODE_PATH.
func (n *NPM) Script(ctx context.Context, t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(n.Dir, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, filepath.Base(script))
	if err := os.WriteFile(copied, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, n.Node, append([]string{copied}, args...)...)
	cmd.Env = n.Env("HOME=" + t.TempDir())
	return cmd
}

// Inspector runs the MCP Inspector with args (e.g. "--cli", "--method",
// "tools/list", "--strict", "--", server...) on the chosen node, as Command
// does: $TOOLPORT_MCP_INSPECTOR if set, else the pinned package's.
func (n *NPM) Inspector(ctx context.Context, t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	if p := os.Getenv(InspectorEnv); p != "" {
		cmd := exec.CommandContext(ctx, p, args...)
		cmd.Env = n.Env("HOME=" + t.TempDir())
		return cmd
	}
	return n.Command(ctx, t, "mcp-inspector", args...)
}
