package testexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingSkipsOrFails runs a test that lacks a program in a child
// process, once as a developer's go test and once as scripts/test does.
func TestMissingSkipsOrFails(t *testing.T) {
	if os.Getenv("TESTEXEC_CHILD") == "1" {
		Missing(t, "frobnicator", "apt-get install frobnicator", errors.New("not found"))
		t.Log("reached after Missing")
		return
	}
	for _, tc := range []struct {
		require string
		want    string
		code    int
	}{
		{"", "--- SKIP: TestMissingSkipsOrFails", 0},
		{"0", "--- SKIP: TestMissingSkipsOrFails", 0},
		{"1", "--- FAIL: TestMissingSkipsOrFails", 1},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingSkipsOrFails$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTEXEC_CHILD=1", RequireToolsEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if code != tc.code || !strings.Contains(s, tc.want) || strings.Contains(s, "reached after Missing") ||
			!strings.Contains(s, "frobnicator: unavailable (not found); apt-get install frobnicator") {
			t.Errorf("%s=%q: exit %d\n%s", RequireToolsEnv, tc.require, code, s)
		}
	}
}

// fakeNode writes a node that prints version into dir/node_modules/.bin.
func fakeNode(t *testing.T, dir, version string) {
	t.Helper()
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFindNPM(t *testing.T) {
	// PATH holds no node, so only the installed one can be chosen.
	t.Setenv("PATH", t.TempDir())

	empty := t.TempDir()
	t.Setenv(NPMDirEnv, empty)
	if _, err := findNPM(); err == nil || !strings.Contains(err.Error(), "no npm packages installed") {
		t.Errorf("empty dir: %v", err)
	}

	old := t.TempDir()
	fakeNode(t, old, "v20.20.2")
	t.Setenv(NPMDirEnv, old)
	if _, err := findNPM(); err == nil || !strings.Contains(err.Error(), "is 20.20") {
		t.Errorf("node 20: %v", err)
	}

	tooOld := t.TempDir()
	fakeNode(t, tooOld, "v22.18.0")
	t.Setenv(NPMDirEnv, tooOld)
	if _, err := findNPM(); err == nil || !strings.Contains(err.Error(), "is 22.18") {
		t.Errorf("node 22.18: %v", err)
	}

	good := t.TempDir()
	fakeNode(t, good, "v22.23.3")
	t.Setenv(NPMDirEnv, good)
	n, err := findNPM()
	if err != nil || n.Dir != good || n.Node != filepath.Join(good, "node_modules", ".bin", "node") {
		t.Fatalf("node 22.23: %+v, %v", n, err)
	}
	var path string
	for _, kv := range n.Env("X=1") {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	if !strings.HasPrefix(path, filepath.Join(good, "node_modules", ".bin")+string(os.PathListSeparator)) {
		t.Errorf("Env's PATH = %q, want the node's directory first", path)
	}
}
