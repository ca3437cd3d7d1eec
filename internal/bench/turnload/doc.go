// Package turnload measures chat turns against a real `toolport serve`
// process: many turns started at once through the HTTP API, each streaming
// its events over SSE while the server calls a scripted model on loopback
// (a tool call, then text) and runs the tool. It reports turns per second,
// the time to each turn's first event, and the server's CPU per turn read
// from the kernel's accounting of that process, not from wall time.
//
// TOOLPORT_BENCH_TOOLPORT_BIN runs a prebuilt binary instead of building
// ./cmd/toolport, so that scripts/bench can alternate builds of two commits
// in one run. The PostgreSQL case needs TOOLPORT_TEST_DATABASE_URL (a
// database of its own is created and dropped for each run).
package turnload
