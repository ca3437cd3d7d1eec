package mcphost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// The reference servers pinned in testdata/npm, attached over stdio as a
// user's credentials file would attach them (a command and its arguments).

func TestEverythingServerOverStdio(t *testing.T) {
	n := testexec.NPMTools(t)
	script := n.File(t, "@modelcontextprotocol/server-everything/dist/index.js")
	// The shell records its pid and then becomes the server (exec), so that
	// the test can kill the server it started.
	pidFile := filepath.Join(t.TempDir(), "pid")
	changed := make(chan string, 8)
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	h := attach(t, reg, []mcphost.Server{{
		Name:    "everything",
		Command: "/bin/sh",
		Args:    []string{"-c", `echo $$ > "$0"; exec "$1" "$2" stdio`, pidFile, n.Node, script},
		Env:     map[string]string{"HOME": t.TempDir()},
	}}, mcphost.Options{Getenv: os.Getenv, OnChange: func(s string) { changed <- s }})
	if st := h.Status()[0]; !st.Connected {
		t.Fatalf("not connected: %+v", st)
	}
	<-changed // the first listing

	sum, ok := reg.Lookup("everything__get-sum")
	if !ok {
		t.Fatalf("get-sum is not registered; tools: %v", h.Status()[0].Tools)
	}
	if a := sum.Spec().Annotations; !a.ReadOnly || !a.Idempotent || a.OpenWorld || a.UserAccount {
		t.Errorf("get-sum's annotations = %+v", a)
	}
	res := reg.Call(t.Context(), "everything__get-sum", json.RawMessage(`{"a":2,"b":40}`))
	if !res.OK() || !strings.Contains(res.Summary, "42") {
		t.Fatalf("get-sum: %s", res.JSON)
	}
	res = reg.Call(t.Context(), "everything__echo", json.RawMessage(`{"message":"שלום"}`))
	if !res.OK() || !strings.Contains(res.Summary, "שלום") {
		t.Fatalf("echo: %s", res.JSON)
	}
	// The server registers the tools that depend on the client's
	// capabilities after initialisation, and says so with list_changed
	// (the Go SDK's client declares roots).
	for !registered(reg, "everything__get-roots-list") {
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no list_changed brought get-roots-list; tools: %v", h.Status()[0].Tools)
		}
	}

	// Killing the server mid-call fails that call alone.
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *tool.Result)
	underway := make(chan struct{}, 64)
	ctx := tool.WithProgress(context.Background(), func(tool.Progress) { underway <- struct{}{} })
	go func() {
		done <- reg.Call(ctx, "everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":30}`))
	}()
	// The server's first progress notification says the call is under way.
	<-underway
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if res.OK() || res.Err.Code != tool.CodeNetwork || res.Retried {
		t.Fatalf("the call whose server was killed: %s", res.JSON)
	}
	// The next call starts the server again.
	if res := reg.Call(t.Context(), "everything__get-sum", json.RawMessage(`{"a":1,"b":1}`)); !res.OK() {
		t.Fatalf("after the server was killed: %s", res.JSON)
	}
}

func registered(reg *tool.Registry, name string) bool {
	_, ok := reg.Lookup(name)
	return ok
}

func TestFilesystemServerOverStdio(t *testing.T) {
	n := testexec.NPMTools(t)
	script := n.File(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	attach(t, reg, []mcphost.Server{{Name: "fs", Command: n.Node, Args: []string{script, dir}}}, mcphost.Options{Getenv: os.Getenv})

	read, ok := reg.Lookup("fs__read_text_file")
	if !ok {
		t.Fatal("read_text_file is not registered")
	}
	if a := read.Spec().Annotations; !a.ReadOnly || a.UserAccount {
		t.Errorf("read_text_file's annotations = %+v", a)
	}
	write, _ := reg.Lookup("fs__write_file")
	if a := write.Spec().Annotations; a.ReadOnly || !a.UserAccount {
		t.Errorf("write_file's annotations = %+v; a tool that writes must ask first", a)
	}
	args, _ := json.Marshal(map[string]any{"path": filepath.Join(dir, "notes.txt"), "head": 1})
	res := reg.Call(t.Context(), "fs__read_text_file", args)
	if !res.OK() || !strings.Contains(string(res.JSON), "line one") || strings.Contains(string(res.JSON), "line two") {
		t.Fatalf("read_text_file: %s", res.JSON)
	}
	// Outside its allowed directory the server refuses: a tool error.
	args, _ = json.Marshal(map[string]any{"path": "/etc/hostname"})
	res = reg.Call(t.Context(), "fs__read_text_file", args)
	if res.OK() || res.Err.Code != tool.CodeAPI || !strings.Contains(res.Err.Message, `"fs"`) {
		t.Fatalf("read outside the allowed directory: %s", res.JSON)
	}
}
