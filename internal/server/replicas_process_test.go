package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/storetest"
)

// TestServeReplicasProcesses runs two `toolport serve` processes on one
// PostgreSQL database: a stream dropped on one is resumed on the other with
// Last-Event-ID, and a process killed (SIGKILL) mid-turn releases its
// conversation once its lease lapses, its turn closed with TURN_LOST.
func TestServeReplicasProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	dsn := storetest.DSN(t, storetest.Postgres)
	bin := buildToolport(t)
	var count []servertest.Event
	for range 10 {
		count = append(count, servertest.Text("tick "), servertest.Pause(20*time.Millisecond))
	}
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "quick", Events: []servertest.Event{servertest.Text("Done.")}},
		servertest.Turn{Match: "count", Events: count},
		servertest.Turn{Match: "slow", Events: []servertest.Event{servertest.Text("Working"), servertest.Pause(time.Hour)}})
	dir := t.TempDir()
	environ := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"TOOLPORT_DATABASE_URL=" + dsn, "TOOLPORT_TURN_LEASE=1s",
	}, ms.Env("anthropic")...)
	cmdA, urlA := startServe(t, bin, append(environ, "TOOLPORT_REPLICA_ID=a"))
	_, urlB := startServe(t, bin, append(environ, "TOOLPORT_REPLICA_ID=b"))
	a, b := &env{url: urlA}, &env{url: urlB}

	// Resume on the other process.
	conv := a.newConversation(t)
	n := 0
	first := a.chat(t, context.Background(), conv, "count please", func(map[string]any) bool { n++; return n < 3 })
	if len(first.ids) != 3 {
		t.Fatalf("first stream = %d %s", first.status, first.raw)
	}
	rest := b.resume(t, "/api/conversations/"+conv+"/stream", first.ids[2])
	ids := append(first.ids, rest.ids...)
	for i, id := range ids {
		if want := first.turnID + ":" + itoa(i+1); id != want {
			t.Fatalf("event %d has id %q, want %q (ids %v)", i, id, want, ids)
		}
	}
	if got := strings.Count(first.raw+rest.raw, `"content":"tick "`); got != 10 {
		t.Errorf("the joined streams carry %d ticks, want 10", got)
	}
	if end := rest.first("message_end"); end == nil || end["stopReason"] != "end_turn" {
		t.Errorf("resumed stream = %s", rest.raw)
	}

	// Kill the process running a turn.
	conv2 := a.newConversation(t)
	a.chat(t, context.Background(), conv2, "slow one", func(ev map[string]any) bool {
		if ev["type"] == "text_delta" {
			if err := cmdA.Process.Signal(syscall.SIGKILL); err != nil {
				t.Errorf("kill: %v", err)
			}
			return false
		}
		return true
	})
	var s *stream
	waitForProcess(t, "the killed process's lease to lapse", func() bool {
		s = b.chat(t, context.Background(), conv2, "quick one", nil)
		if s.status != http.StatusOK && s.status != http.StatusConflict {
			t.Fatalf("turn on the surviving process = %d %s", s.status, s.raw)
		}
		return s.status == http.StatusOK
	})
	if end := s.first("message_end"); end == nil || end["stopReason"] != "end_turn" {
		t.Errorf("turn after the kill = %s", s.raw)
	}
	status, body := b.do(t, "GET", "/api/conversations/"+conv2, "")
	if status != http.StatusOK || !strings.Contains(string(body), `"TURN_LOST"`) || !strings.Contains(string(body), `"incomplete":true`) {
		t.Errorf("conversation after the kill = %d %s", status, body)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
