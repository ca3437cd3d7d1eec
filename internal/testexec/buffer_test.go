package testexec

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Await wakes on the write that completes what it waits for, and not
// before; it gives up when its context does.
func TestBufferAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b Buffer
		got := make(chan string, 1)
		go func() {
			s, err := b.Await(context.Background(), func(s string) bool { return strings.Contains(s, "serving on") })
			if err != nil {
				t.Error(err)
			}
			got <- s
		}()
		b.Write([]byte("starting\nserving "))
		synctest.Wait()
		select {
		case s := <-got:
			t.Fatalf("woke on a partial line: %q", s)
		default:
		}
		b.Write([]byte("on http://x\n"))
		if s := <-got; s != "starting\nserving on http://x\n" {
			t.Fatalf("Await = %q", s)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if s, err := b.Await(ctx, func(s string) bool { return strings.Contains(s, "never") }); !errors.Is(err, context.DeadlineExceeded) || s == "" {
			t.Fatalf("Await past its deadline = %q, %v", s, err)
		}
	})
}
