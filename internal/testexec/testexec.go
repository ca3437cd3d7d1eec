// Package testexec builds the project's commands and runs them as processes,
// for tests that check what a host or a user sees: flags, stdin, stdout,
// stderr and the exit code.
package testexec

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Builder builds each command once per test binary; declare one per test
// package and call Cleanup from TestMain.
type Builder struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// Build compiles the package at pkg (a path relative to the test's package,
// e.g. "../cmd/toolport") and returns the binary's path. A failed build fails
// the test with the compiler's output.
func (b *Builder) Build(t testing.TB, pkg string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if bin, ok := b.built[pkg]; ok {
		return bin
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "toolport-testexec")
		if err != nil {
			t.Fatal(err)
		}
		b.dir, b.built = dir, map[string]string{}
	}
	abs, err := filepath.Abs(pkg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(b.dir, filepath.Base(abs))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	b.built[pkg] = bin
	return bin
}

// Cleanup removes the binaries.
func (b *Builder) Cleanup() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Result is how a process ended.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs bin with args, stdin, and an environment made only of env, PATH and
// an empty home and data directory, so nothing configured on this machine
// (keys, a credentials file, a database) leaks into the test.
func Run(t testing.TB, bin string, env map[string]string, stdin string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = Env(t, env)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return Result{code, out.String(), errb.String()}
}

// Env is the isolated environment Run uses: env plus PATH, HOME and
// XDG_DATA_HOME pointing into a fresh temporary directory.
func Env(t testing.TB, env map[string]string) []string {
	home := t.TempDir()
	// web_search_google stays on after Google's API ends (2027-01-01) for the
	// process tests that run it against local fakes; the end itself is tested
	// with an injected clock (internal/pack/websearch, internal/doctor).
	out := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(home, "data"), "TOOLPORT_GOOGLE_SEARCH=on"}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
