package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// On PostgreSQL one group of claims is one statement in which each claim
// is answered on its own: a claim on a conversation with a running turn is
// busy, one on a missing conversation not found, the others start their
// turns. When the statement fails as a whole (here a constraint refuses
// one claim), each claim is retried alone, so that only that one fails.
func TestClaimGroupAnswersEachClaim(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()
	conv := func() string { return newConversation(t, db) }
	free, busy, other := conv(), conv(), conv()
	if _, err := db.StartTurn(ctx, store.Turn{ID: "running", ConversationID: busy, Owner: "r1", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	req := func(id, conv, owner string) *claimReq {
		now := normTime(time.Now())
		return &claimReq{call: newCall(ctx), t: store.Turn{ID: id, ConversationID: conv, Owner: owner,
			LeaseUntil: now.Add(time.Minute), StartedAt: now}}
	}
	check := func(batch []*claimReq, want []error) {
		t.Helper()
		for i, r := range batch {
			err := <-r.err
			if (want[i] == nil) != (err == nil) || (want[i] != nil && !errors.Is(err, want[i])) {
				t.Errorf("claim %s: %v, want %v", r.t.ID, err, want[i])
			}
		}
	}
	batch := []*claimReq{req("t-free", free, "r2"), req("t-busy", busy, "r2"), req("t-missing", "no-such-conversation", "r2"), req("t-other", other, "r2")}
	before := db.claims.commits.Load()
	db.claims.commit(batch)
	if got := db.claims.commits.Load() - before; got != 1 {
		t.Errorf("the batch took %d statements, want 1", got)
	}
	check(batch, []error{nil, store.ErrBusy, store.ErrNotFound, nil})
	for conv, want := range map[string]string{free: "t-free", busy: "running", other: "t-other"} {
		got, err := db.RunningTurn(ctx, conv)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want || got.Generation != 1 || got.State != store.TurnRunning {
			t.Errorf("running turn of %s = %+v, want %s in generation 1", conv, got, want)
		}
	}

	// A statement the database refuses whole is retried one claim at a
	// time: the refused claim fails, the others start.
	if _, err := db.w.ExecContext(ctx, `ALTER TABLE turns ADD CONSTRAINT test_refuse CHECK (owner <> 'refused')`); err != nil {
		t.Fatal(err)
	}
	a, b, c := conv(), conv(), conv()
	batch = []*claimReq{req("r-1", a, "r2"), req("r-2", b, "refused"), req("r-3", c, "r2")}
	db.claims.commit(batch)
	for i, r := range batch {
		if err := <-r.err; (i == 1) != (err != nil) {
			t.Errorf("claim %s: %v", r.t.ID, err)
		}
	}
	for conv, want := range map[string]string{a: "r-1", c: "r-3"} {
		if got, err := db.RunningTurn(ctx, conv); err != nil || got.ID != want {
			t.Errorf("running turn of %s = %+v, %v; want %s", conv, got, err, want)
		}
	}
	if got, err := db.RunningTurn(ctx, b); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused claim's conversation runs %+v, %v", got, err)
	}
}

// Claims that come together all start, each conversation's once: of many
// concurrent claims on one conversation exactly one wins, and claims on
// different conversations share statements.
func TestConcurrentClaimsShareStatements(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()
	var convs []string
	for range 8 {
		c, err := db.CreateConversation(ctx, store.Conversation{})
		if err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c.ID)
	}
	const perConv = 12
	type result struct {
		conv string
		err  error
	}
	results := make(chan result, len(convs)*perConv)
	before := db.claims.commits.Load()
	for i := range len(convs) * perConv {
		conv := convs[i%len(convs)]
		go func() {
			_, err := db.StartTurn(ctx, store.Turn{ID: "t" + string(rune('a'+i%26)) + conv + string(rune('A'+i/26)), ConversationID: conv,
				Owner: "r1", LeaseUntil: time.Now().Add(time.Hour)})
			results <- result{conv, err}
		}()
	}
	won := map[string]int{}
	for range len(convs) * perConv {
		r := <-results
		switch {
		case r.err == nil:
			won[r.conv]++
		case !errors.Is(r.err, store.ErrBusy):
			t.Errorf("claim on %s: %v", r.conv, r.err)
		}
	}
	for _, c := range convs {
		if won[c] != 1 {
			t.Errorf("conversation %s: %d claims won, want 1", c, won[c])
		}
	}
	n := db.claims.commits.Load() - before
	t.Logf("%d claims in %d statements", len(convs)*perConv, n)
	if n >= int64(len(convs)*perConv) {
		t.Errorf("%d claims took %d statements: none were grouped", len(convs)*perConv, n)
	}
}
