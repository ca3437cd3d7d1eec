// Package turn runs chat turns across the `toolport serve` replicas sharing
// one store: the claim on a conversation (a lease), fencing, each turn's
// event log, lost-turn repair and the start gate. [Manager] is the API:
// [Manager.Start] claims a conversation and runs a turn, [Manager.Follow]
// streams any replica's turn from its log, [Manager.Stop] stops it wherever it
// runs, [Manager.Repair] closes turns whose replica stopped. The HTTP server
// speaks HTTP and SSE over it; the agent writes the conversation's messages,
// this package only the turns' rows and logs.
//
// # Turns across replicas
//
// A turn runs in a goroutine of the replica that accepted it, detached from the request (bounded by
// the turn timeout and shutdown). Three things make it work across `toolport serve` replicas
// sharing one store (this package, `internal/store/sqlstore/turns.go`):
//
//   - **The claim is a lease row**, not a PostgreSQL advisory lock: `turns` has one row per turn with
//     `owner` and `lease_until`, and a partial unique index allows one `running` turn per
//     conversation, so claiming is one conditional `INSERT … ON CONFLICT DO NOTHING` (409 on any
//     replica when it inserts nothing). The owner renews its leases in one `UPDATE` every third of
//     `TOOLPORT_TURN_LEASE`; a dead replica's turns lapse, and whoever takes them over with
//     `UPDATE … RETURNING` (the sweeper of any replica, or the next turn started there; the lease
//     moves to it, [Manager.Repair]) ends the log with a `TURN_LOST` error, has the agent save the answer as incomplete (rebuilt from the log when that
//     holds more than the last save: text streamed since, finished tool calls), and only
//     then ends the turn, so the conversation takes no new question before the lost answer. An advisory lock would die with its
//     session at once, but costs a pinned connection per running turn (the pool is 20), breaks behind
//     transaction-pooling proxies, and does not exist on SQLite; the row works on both engines with
//     the same SQL and also records who runs the turn, which the stop endpoint needs.
//   - **Events go through a log in the store, woken by PostgreSQL LISTEN/NOTIFY.** Each event is
//     appended to `turn_events` (seq per turn) before any client sees it, with `pg_notify` in the
//     same statement (delivered at commit, never before the row is visible); each replica keeps one
//     LISTEN connection and wakes its streams, which read the log. Streams on the owner read from
//     memory. Chosen over Redis streams and NATS JetStream because PostgreSQL is already the one
//     engine every replica must have: no new engine to run, and the log commits with the rest of the
//     data; a notification lost while the LISTEN connection reconnects costs only latency (streams
//     re-read on a resync note and every 2 s). Event rows are written with `synchronous_commit=off`:
//     the log is a replay buffer (the answer itself is saved as a message, durably), and a WAL flush
//     per text delta would cost more than the event. On SQLite (one process) the notes go in memory.
//     Ended turns and their events are deleted after `TOOLPORT_TURN_EVENTS_RETENTION`.
//   - **SSE ids are `<turnId>:<seq>`**, so a client resumes with `Last-Event-ID` on any replica, and
//     stop requests reach the owner as a flag on the row plus a NOTIFY (the lease renewal sees the
//     flag too, should the note be missed).
//
// Within one replica, turns that are starting go before turns that are running
// (gate.go): from before its claim to its first logged event a turn counts as
// starting (not while it waits for a busy conversation), and a running turn waits while any turn is starting (at most 200 ms a time): after its
// first event, before its model call, and again before each later event. Without it a burst of messages shares the CPU with every running turn alike, and
// the last message's first event waits about as long as the whole burst.
//
// A replica whose renewals fail (its database connection is down) gives a turn up at the last
// heartbeat before the turn's lease would lapse, so it stops before another replica may close it
// (the next try is counted from when the failed one started: a renewal that ran out of time under
// load is tried again at once, not taken for the last). A replica never takes over the turns it
// runs itself: a renewal that came late under load made its own sweeper close live turns as lost.
// A replica that stalls longer than its lease (a long GC pause, SIGSTOP, a partition) is **fenced**:
// each turn row has a `generation`, 1 at the claim and one more at every take-over, and every write
// the turn makes after its claim (event appends, the answer's saves, its end) is made under that
// generation: through [store.Turns.Fenced], the fence a parameter of the writer, not a value
// carried in a context ([Func] hands it to the agent), and checked in the write's own transaction.
// On PostgreSQL
// the check locks the turn row `FOR SHARE` until the write commits, so a take-over cannot commit
// between check and write, and it costs no round trip of its own: an event append or an answer save
// is one statement whose CTE `f` selects the turn row under its generation (`… FOR SHARE`) and whose
// insert or update takes its rows from `f` (no row: fenced; the statement's answer tells a fenced
// write from a missing message), as the end's `UPDATE … AND generation = $g` already was. Lease renewals and
// take-overs lock the turn rows they update in the same id order (a `MATERIALIZED` CTE `… ORDER BY
// id FOR NO KEY UPDATE`), and the other writes lock one turn row, or lock it first (a conversation's
// delete locks its turns in id order before the conversation, whose cascade would lock them after),
// so no cycle of waits can form: checking each append's fence in its batch's conversation order deadlocked against
// renewals (`TestTurnLocksNeverDeadlock` hits 40P01 within seconds without the order). Once
// another replica has taken the turn over, the stalled one's writes fail with [store.FencedError]
// and nothing lands; its event logger cancels the turn, and the conversation keeps the taker's
// closing. The taker's closing writes are fenced by its own generation in turn. The conversation's
// title (set on its first turn) and an edit's truncation of the later messages, both written at the
// turn's start, are fenced too, each in a transaction that checks the fence first (a stalled edit
// would otherwise delete what the conversation gained since the take-over). Lease times come from
// each replica's clock ([Config].Clock, which also paces renewal and the sweeper: tests move a turntest.Clock by hand), so clocks must agree to well within the lease (15 s by
// default).
//
// On PostgreSQL the writes and the read that start a turn are shared by concurrent turns, one
// statement per batch (`internal/store/sqlstore/batcher.go`: calls that arrive while a worker's
// statement runs go into its next one): claims (`claimcommit.go`: one `INSERT … SELECT FROM
// unnest(…) ON CONFLICT DO NOTHING` in conversation order, each claim answered started, busy or not
// found), message appends (`messagecommit.go`: the fences' turn rows locked `ORDER BY id FOR SHARE`,
// then the conversations' rows `ORDER BY id FOR NO KEY UPDATE`, the messages inserted from arrays
// and their conversations touched, each append answered fenced, not found, conflict or stored),
// conversation reads (`conversationreads.go`: one `WHERE id = ANY(…)`), and fenced event appends of
// different turns (`eventcommit.go`: the turns' ids, generations, notes and events as arrays, the
// turn rows locked `ORDER BY id FOR SHARE`, only the rows of turns running under their generation
// inserted, each of them notified). Each call is still answered on its own and returns only after
// its statement committed (one WAL flush for the batch); a statement that fails whole (a constraint,
// a duplicate seq) is retried call by call, so the error stays its caller's. Under a burst of 500
// messages this took a turn's start from a claim, a read transaction of four round trips and a share
// of a transaction with three round trips per message to a share of four statements (see
// BENCHMARKS.md, "Chat turns"). On SQLite (one writer, in process) the writes go through one
// group-committed transaction per batch instead (`groupcommit.go`), fences checked with a plain
// `SELECT` in the batch's transaction. A batch runs first without savepoints; only when a write
// fails is it rolled back and run again with each write in a savepoint, so the failure stays that
// write's. A message's full-text entry (`message_fts`) is written by the statements that insert or
// update it, not by a trigger (migration 0012): SQLite opens a statement savepoint for any statement
// that writes two tables, FTS5 flushes its pending terms to a new segment at every savepoint, and a
// batch of messages made as many segments as messages; now it makes one. Titles keep their triggers
// (renames are rare); each conversation's title entry has the rowid of its key in
// `conversation_search_keys` (migration 0013), so a rename or delete finds it by that key, not by a
// scan of every title.
package turn
