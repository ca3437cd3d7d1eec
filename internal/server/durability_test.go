package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"

	"github.com/toolport/toolport/internal/server/servertest"
)

// buildToolport builds the toolport binary once for the test binary.
func buildToolport(t *testing.T) string {
	t.Helper()
	return bins.Build(t, "../../cmd/toolport")
}

var bins testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Cleanup()
	os.Exit(code)
}

// startServe runs `toolport serve` on a free port, with any extra flags,
// and returns its base URL.
func startServe(t *testing.T, bin string, env []string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the serve banner: %v", err)
	}
	_, url, ok := strings.Cut(strings.TrimSpace(line), "serving on ")
	if !ok {
		t.Fatalf("unexpected banner %q", line)
	}
	go io.Copy(io.Discard, stdout)
	return cmd, strings.TrimSuffix(url, "/")
}

// TestSIGKILLLosesNothingAcknowledged kills the server process in the middle
// of a chat stream and restarts it on the same database: the user message,
// acknowledged by message_start, is still there.
func TestSIGKILLLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	bin := buildToolport(t)
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "remember", Events: []servertest.Event{
		servertest.Text("I will remember"), servertest.Pause(time.Hour)}})
	dir := t.TempDir()
	environ := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"TOOLPORT_DATABASE_URL=" + filepath.Join(dir, "chat.db"),
	}, ms.Env("anthropic")...)

	cmd, base := startServe(t, bin, environ)
	c := &env{url: base}
	conv := c.newConversation(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked string
	c.chat(t, ctx, conv, "remember this: the answer is 42", func(ev map[string]any) bool {
		if ev["type"] == "message_start" {
			acked = ev["conversationId"].(string)
		}
		if ev["type"] == "text_delta" {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Errorf("kill: %v", err)
			}
			return false
		}
		return true
	})
	if acked != conv {
		t.Fatalf("no message_start for %s before the kill", conv)
	}
	cmd.Wait()

	_, base2 := startServe(t, bin, environ)
	c2 := &env{url: base2}
	status, body := c2.do(t, "GET", "/api/conversations/"+conv, "")
	if status != http.StatusOK {
		t.Fatalf("after restart: GET conversation = %d %s", status, body)
	}
	var got struct {
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	json.Unmarshal(body, &got)
	if len(got.Messages) == 0 || got.Messages[0].Role != "user" || got.Messages[0].Content[0]["text"] != "remember this: the answer is 42" {
		t.Errorf("after restart the acknowledged user message is missing: %s", body)
	}
}
