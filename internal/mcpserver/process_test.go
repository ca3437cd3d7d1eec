package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/testexec"
)

// bins holds the toolport binary of the process-level tests.
var bins testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Cleanup()
	os.Exit(code)
}

// TestProcessSurvivesMalformedLines drives `toolport mcp` as a host does,
// over its stdin and stdout: every malformed line gets its JSON-RPC error,
// initialize and tools/list are answered, and the process is still running.
func TestProcessSurvivesMalformedLines(t *testing.T) {
	cmd := exec.Command(bins.Build(t, "../../cmd/toolport"), "mcp", "--packs", "web")
	cmd.Env = testexec.Env(t, nil)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(waitLimit):
			cmd.Process.Kill()
			t.Error("toolport mcp did not exit when its stdin closed")
		}
	}()
	s := &stdioSession{t: t, in: stdin, lines: readLines(stdout)}

	// The garbage follows initialize at once: the SDK answers initialize
	// concurrently, so the answers come in any order; they are matched by id
	// and by the order of the errors.
	s.send(initialize("2025-11-25"))
	bad := garbageLines(mcpserver.DefaultMaxLineBytes)
	for _, g := range bad {
		s.send(g.line)
	}
	var initialized bool
	var errs []response
	for len(errs) < len(bad) || !initialized {
		r := s.nextResponse()
		if string(r.ID) == `"init"` {
			initialized = r.Error == nil && strings.Contains(string(r.Result), `"protocolVersion"`)
			if !initialized {
				t.Fatalf("initialize failed: %+v", r)
			}
			continue
		}
		errs = append(errs, r)
	}
	for i, g := range bad {
		expectError(t, g, errs[i])
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	r := s.nextResponse()
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if string(r.ID) != `"list"` || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list: %s %+v %.200s", r.ID, r.Error, r.Result)
	}
	select {
	case err := <-exited:
		t.Fatalf("toolport mcp exited (%v); stderr:\n%s", err, stderr.String())
	default:
	}
}
