package mcpserver_test

import (
	"encoding/json"
	"fmt"
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

// TestProcessAnswersEverythingReadBeforeTheEnd pipes a whole session into
// `toolport mcp` at once, as `printf … | toolport mcp` does: every request
// is answered on stdout before the process exits with 0.
func TestProcessAnswersEverythingReadBeforeTheEnd(t *testing.T) {
	in := []string{
		initialize("2025-11-25"),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`,
	}
	const calls = 5
	for i := range calls {
		// Arguments the registry refuses: an answer without reaching any upstream.
		in = append(in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"web_fetch","arguments":{"url":%d}}}`, i, i))
	}
	res := testexec.Run(t, bins.Build(t, "../../cmd/toolport"), nil, strings.Join(in, "\n")+"\n", "mcp", "--packs", "web")
	if res.Code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", res.Code, res.Stderr)
	}
	got := parseAnswers(t, res.Stdout)
	if r := got[`"init"`]; r.Error != nil || len(r.Result) == 0 {
		t.Errorf("initialize: %+v", r)
	}
	if r := got[`"list"`]; r.Error != nil || !strings.Contains(string(r.Result), `"web_fetch"`) {
		t.Errorf("tools/list: %+v %.200s", r.Error, r.Result)
	}
	for i := range calls {
		var res struct {
			IsError bool `json:"isError"`
		}
		r, ok := got[fmt.Sprint(i)]
		if !ok || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || !res.IsError {
			t.Errorf("call %d: present %v, %+v %.200s, want a tool error result", i, ok, r.Error, r.Result)
		}
	}
	if len(got) != calls+2 {
		t.Errorf("%d answers, want %d; stdout:\n%s", len(got), calls+2, res.Stdout)
	}
}
