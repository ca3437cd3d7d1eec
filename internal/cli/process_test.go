package cli_test

import (
	"os/exec"
	"testing"
	"time"
)

// awaitProcess polls cond, which reads what cmd (a toolport command the test
// started) has written to its database, until it holds, and kills cmd and
// fails the test after bound or on cond's error. That state is in another
// process: it is seen only by asking, so this is the one place these tests
// poll.
func awaitProcess(t *testing.T, cmd *exec.Cmd, what string, bound time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ok, err := cond()
		switch {
		case err != nil:
			_ = cmd.Process.Kill()
			t.Fatalf("waiting for %s: %v", what, err)
		case ok:
			return
		case time.Now().After(deadline):
			_ = cmd.Process.Kill()
			t.Fatalf("%s did not happen in %s", what, bound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
