// Package proc holds what the measurement programs under internal/bench/cmd
// share: starting `toolport serve` on a loopback port of its own, and
// reading a process's memory figures from /proc (Linux only).
package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Status returns one field of /proc/PID/status, such as "VmHWM" (the peak
// resident set size), as the kernel writes it ("12345 kB"), or "?" when it
// cannot be read.
func Status(pid int, key string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	v, ok := field(string(b), key)
	if !ok {
		return "?"
	}
	return v
}

// StatusBytes is [Status] for a field in kB, in bytes; 0 when it cannot be
// read.
func StatusBytes(pid int, key string) int64 {
	kb, err := strconv.ParseInt(strings.TrimSuffix(Status(pid, key), " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// field finds "key:" at the start of a line of a status file.
func field(status, key string) (string, bool) {
	for l := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Server is a `toolport serve` started by [StartServe].
type Server struct {
	URL string // the base URL, without a trailing slash
	Pid int
	cmd *exec.Cmd
	dir string
}

// StartServe starts bin's `serve` on 127.0.0.1:0 with a HOME and a SQLite
// database of its own (a new temporary directory) and no other environment
// than PATH, so that no key or engine of the caller's changes what is
// measured. The server's log goes to stderr.
func StartServe(ctx context.Context, bin string, stderr io.Writer) (*Server, error) {
	dir, err := os.MkdirTemp("", "toolport-bench-serve")
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TOOLPORT_DATABASE_URL=" + filepath.Join(dir, "chat.db")}
	cmd.Stderr = stderr
	s := &Server{cmd: cmd, dir: dir}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("serve: %w", err)
	}
	s.Pid = cmd.Process.Pid
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("reading the server's address: %w", err)
	}
	if s.URL, err = address(line); err != nil {
		_ = s.Close()
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, out) }() // a full pipe would block the server
	return s, nil
}

// address reads the base URL from the server's first line, "… serving on URL".
func address(line string) (string, error) {
	_, base, ok := strings.Cut(strings.TrimSpace(line), "serving on ")
	if !ok || !strings.HasPrefix(base, "http://") {
		return "", fmt.Errorf("unexpected first line %q", line)
	}
	return strings.TrimSuffix(base, "/"), nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait() // killed: its error says so
	return errors.Join(os.RemoveAll(s.dir))
}
