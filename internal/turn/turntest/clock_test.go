package turntest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/turn"
	"github.com/toolport/toolport/internal/turn/turntest"
)

var _ turn.Clock = (*turntest.Clock)(nil)

// Advance runs each registered call at its due time, earliest first (the
// first registered first on a tie), with the clock standing at that time,
// and a stopped call no more.
func TestClockRunsDueCallsInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := turntest.NewClock(start)
	var got []string
	record := func(name string) func() {
		return func() { got = append(got, fmt.Sprintf("%s@%v", name, c.Now().Sub(start))) }
	}
	c.Every(2*time.Second, record("a"))
	stopB := c.Every(3*time.Second, record("b"))

	c.Advance(time.Second)
	if len(got) != 0 || !c.Now().Equal(start.Add(time.Second)) {
		t.Fatalf("after 1s: calls %v, now %v", got, c.Now())
	}
	c.Advance(5 * time.Second)
	if want := []string{"a@2s", "b@3s", "a@4s", "a@6s", "b@6s"}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	got = nil
	stopB()
	c.Advance(3 * time.Second)
	if want := []string{"a@8s"}; !slices.Equal(got, want) || !c.Now().Equal(start.Add(9*time.Second)) {
		t.Errorf("after stopping b: calls %v, now %v; want %v at 9s", got, c.Now(), want)
	}
}
