package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// TestServeBoundsAValidationErrorOfAMegabyte posts a tool call whose ~1 MB
// of arguments hold 95,000 unknown keys to `toolport serve`, a process: the
// answer and the log line are kilobytes, with "and K more" for the rest.
// (Before, the answer was 52 MB and the log line 23 MB.)
func TestServeBoundsAValidationErrorOfAMegabyte(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	bin := buildToolport(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TOOLPORT_DATABASE_URL=" + filepath.Join(dir, "chat.db")}
	var logs testexec.Buffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	_, base, ok := strings.Cut(strings.TrimSpace(line), "serving on ")
	if err != nil || !ok {
		t.Fatalf("serve banner %q: %v\n%s", line, err, logs.String())
	}
	go io.Copy(io.Discard, stdout)

	var args bytes.Buffer
	args.WriteString(`{"query":"trains"`)
	for i := range 95_000 {
		fmt.Fprintf(&args, `,"k%05d":1`, i)
	}
	args.WriteByte('}')
	size := args.Len()
	resp, err := http.Post(strings.TrimSuffix(base, "/")+"/api/tools/web_search_brave", "application/json", &args)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)

	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, body)
	}
	if len(body) > 8<<10 {
		t.Errorf("the answer is %d bytes for %d bytes of arguments; want a few KiB", len(body), size)
	}
	var failure struct {
		Success    bool             `json:"success"`
		Error      string           `json:"error"`
		Code       string           `json:"error_code"`
		Violations []tool.Violation `json:"violations"`
		More       int              `json:"moreViolations"`
	}
	if err := json.Unmarshal(body, &failure); err != nil {
		t.Fatalf("answer: %v: %.300s", err, body)
	}
	more := 95_000 - tool.MaxViolations
	if failure.Success || failure.Code != "VALIDATION" || len(failure.Violations) != tool.MaxViolations ||
		failure.More != more || !strings.HasSuffix(failure.Error, fmt.Sprintf("and %d more", more)) {
		t.Errorf("answer = %.600s", body)
	}
	// The warning about the call is logged, bounded. The process's stderr
	// reaches the buffer through a pipe copied by os/exec, so the line may
	// arrive just after the answer.
	wait, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard
	defer cancel()
	_, _ = logs.Await(wait, func(s string) bool { return strings.Contains(s, "tool call failed") })
	longest := 0
	for l := range strings.SplitSeq(logs.String(), "\n") {
		longest = max(longest, len(l))
	}
	if !strings.Contains(logs.String(), "tool call failed") || longest > 2<<10 {
		t.Errorf("longest log line %d bytes; logs:\n%.2000s", longest, logs.String())
	}
}
