package turnload_test

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/internal/testexec"
)

var build testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}

// The variables the benchmark reads.
const (
	envBin         = "TOOLPORT_BENCH_TOOLPORT_BIN" // a prebuilt toolport to run instead of building ./cmd/toolport
	envTurns       = "TOOLPORT_BENCH_TURNS"        // turns started at once (default 500)
	envProvider    = "TOOLPORT_BENCH_PROVIDER"     // "openai" (default) or "anthropic"
	envDatabaseURL = "TOOLPORT_TEST_DATABASE_URL"  // PostgreSQL for the store=postgres case
	envPerf        = "TOOLPORT_BENCH_PERF_DIR"     // when set, `perf record` the server over each burst into this directory
	envPerfAll     = "TOOLPORT_BENCH_PERF_ALL"     // "1": record every process (the database's and the client's too), not only the server
	envPerfFor     = "TOOLPORT_BENCH_PERF_FOR"     // with PERF_ALL, record only this long from the burst's start (e.g. 600ms: the starts)
	envServerEnv   = "TOOLPORT_BENCH_SERVER_ENV"   // more of the server's environment, "K=V K=V" (e.g. GOGC=300)
	envWarmup      = "TOOLPORT_BENCH_WARMUP"       // turns of the warm-up burst (default: as many as the measured burst)
	envModelDelay  = "TOOLPORT_BENCH_MODEL_DELAY"  // hold each turn's first model answer this long (e.g. 4s): the burst measures starts alone
	envPerfFreq    = "TOOLPORT_BENCH_PERF_FREQ"    // perf's sampling rate in Hz (default 499; a burst of starts is ~0.1 s of CPU)
	envServerLog   = "TOOLPORT_BENCH_SERVER_LOG"   // when set, the server's whole log is written into this directory (STORE.log)
	envKeepFailed  = "TOOLPORT_BENCH_KEEP_FAILED"  // "1": failed turns are counted (failed/turn), not a failed run: for an old build that loses turns under load
)

// defaultTurns is the load: 500 turns at once.
const defaultTurns = 500

// The warm-up burst runs before the measured one, as many turns as it by
// default, so that it measures turns, not loading the index, opening pools
// or the runtime growing its heap: a server's first burst of 500 turns
// spends about a third of its CPU in page faults on memory it has never
// used (measured with TOOLPORT_BENCH_PERF_ALL: 4.4 ms of CPU per turn after
// a warm-up of 50, 3.1 ms after one of 500). TOOLPORT_BENCH_WARMUP=50
// measures a server's first large burst.

// turnText is what each turn's user says; the script matches it.
const turnText = "bench turn: calm piano please"

// script is the model's side of every turn: text and a semanticSearch call,
// then, given the tool's result, the answer in four pieces without pauses,
// so that the benchmark measures Toolport, not the script.
var script = []servertest.Turn{
	{Match: "bench turn", Step: 0, Events: []servertest.Event{
		servertest.Text("Let me look."),
		servertest.Call("", "semanticSearch", `{"query":"melancholic piano","limit":3}`),
	}, InputTokens: 100, OutputTokens: 10},
	{Match: "bench turn", Step: 1, Events: []servertest.Event{
		servertest.Text("The calmest"), servertest.Text(" is a slow"),
		servertest.Text(" piano piece"), servertest.Text(", melancholic."),
	}, InputTokens: 150, OutputTokens: 12},
}

// BenchmarkServeTurns starts TOOLPORT_BENCH_TURNS chat turns at once (500 by
// default) against one `toolport serve` process on SQLite and on
// PostgreSQL, the MusicCaps demo index (5,521 tracks) loaded, the model a
// scripted server on loopback (OpenAI protocol by default). Each turn
// streams text and one semanticSearch call, the tool runs, and a second
// model call streams the answer. It reports:
//
//   - turns/s: turns over the wall time from the first message sent to the
//     last message_end received;
//   - ms-first-p50, ms-first-p99: from sending a message to reading its
//     first event (message_start, sent once the user message is durable);
//   - ms-cpu/turn: the server process's user+system CPU over the burst
//     (utime+stime of all its threads in /proc/PID/stat, the counters
//     getrusage reports), divided by the turns;
//   - faults/turn: the server's minor page faults over the burst, divided
//     by the turns (memory it touched for the first time: on a VM each
//     costs a trap to the hypervisor);
//   - failed/turn: the share of turns that failed. A failed turn fails the
//     run, unless TOOLPORT_BENCH_KEEP_FAILED=1 (scripts/bench sets it for
//     the baseline, a build that loses answers under load): then turns/s
//     counts the turns that ended well and the latencies are theirs.
//
// The client and the scripted model run in the benchmark's process, on the
// same cores as the server; their CPU is not counted.
func BenchmarkServeTurns(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run("store="+store, func(b *testing.B) { benchTurns(b, store) })
	}
}

func benchTurns(b *testing.B, store string) {
	n := defaultTurns
	if v := os.Getenv(envTurns); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number", envTurns, v)
		}
	}
	provider := os.Getenv(envProvider)
	if provider == "" {
		provider = "openai"
	}
	var dsn string
	switch store {
	case "sqlite":
		dsn = filepath.Join(b.TempDir(), "toolport.db")
	case "postgres":
		if os.Getenv(envDatabaseURL) == "" {
			b.Skipf("%s not set", envDatabaseURL)
		}
		dsn = storetest.Database(b)
	}
	bin := os.Getenv(envBin)
	if bin == "" {
		bin = build.Build(b, "../../../cmd/toolport")
	}

	sc := script
	if v := os.Getenv(envModelDelay); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration", envModelDelay, v)
		}
		sc = slices.Clone(script)
		sc[0].Events = slices.Clone(sc[0].Events)
		sc[0].Events[0].Delay = d
	}
	model := servertest.NewModelServer(b, sc...)
	env := map[string]string{"TOOLPORT_DATABASE_URL": dsn}
	for _, kv := range strings.Fields(os.Getenv(envServerEnv)) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			b.Fatalf("%s: %q is not K=V", envServerEnv, kv)
		}
		env[k] = v
	}
	for _, kv := range model.Env(provider) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if res := testexec.Run(b, bin, env, "", "index", "add", "--quiet", "--demo"); res.Code != 0 {
		b.Fatalf("index add --demo: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	srv := startServer(b, bin, env)
	if dir := os.Getenv(envServerLog); dir != "" {
		b.Cleanup(func() {
			if err := os.WriteFile(filepath.Join(dir, store+".log"), []byte(srv.log.String()), 0o644); err != nil {
				b.Errorf("writing the server's log: %v", err)
			}
		})
	}
	c := &client{base: srv.url, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4 * n, MaxIdleConnsPerHost: 4 * n, IdleConnTimeout: time.Minute,
	}}}

	warmup := n
	if v := os.Getenv(envWarmup); v != "" {
		var err error
		if warmup, err = strconv.Atoi(v); err != nil || warmup < 1 {
			b.Fatalf("%s=%q: want a positive number", envWarmup, v)
		}
	}
	keepFailed := os.Getenv(envKeepFailed) == "1"
	if res, err := c.burst(warmup); err != nil {
		if !keepFailed || len(res.failed) == 0 {
			b.Fatalf("warm-up: %v\n%s", err, res.serverLog(srv.log.String()))
		}
		b.Logf("warm-up: %v", err)
	}

	var turns, failed int
	var wall, cpu time.Duration
	var faults int64
	var firsts []time.Duration
	for b.Loop() {
		b.StopTimer()
		convs, err := c.conversations(n)
		if err != nil {
			b.Fatal(err)
		}
		cpu0, faults0, err := srv.usage()
		if err != nil {
			b.Fatal(err)
		}
		stopPerf := srv.perf(b, store)
		b.StartTimer()
		start := time.Now()
		res := c.run(convs)
		wall += time.Since(start)
		b.StopTimer()
		stopPerf()
		cpu1, err := srv.settledCPU()
		if err != nil {
			b.Fatal(err)
		}
		_, faults1, err := srv.usage()
		if err != nil {
			b.Fatal(err)
		}
		faults += faults1 - faults0
		b.StartTimer()
		if err := res.err(); err != nil {
			if !keepFailed {
				b.Fatalf("%v\n%s", err, res.serverLog(srv.log.String()))
			}
			b.Logf("%v", err)
		}
		cpu += cpu1 - cpu0
		turns += n
		failed += len(res.failed)
		firsts = append(firsts, res.firsts...)
	}
	slices.Sort(firsts)
	// Turns that failed are not throughput; their CPU is still the
	// server's (per turn started), and their share is shown.
	b.ReportMetric(float64(turns-failed)/wall.Seconds(), "turns/s")
	b.ReportMetric(float64(failed)/float64(turns), "failed/turn")
	b.ReportMetric(ms(percentile(firsts, 0.50)), "ms-first-p50")
	b.ReportMetric(ms(percentile(firsts, 0.99)), "ms-first-p99")
	b.ReportMetric(ms(cpu)/float64(turns), "ms-cpu/turn")
	b.ReportMetric(float64(faults)/float64(turns), "faults/turn")
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the p-th quantile of sorted ds (nearest rank).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*p+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// server is a running `toolport serve`.
type server struct {
	url  string
	cmd  *exec.Cmd
	log  *testexec.Buffer
	done chan struct{}
}

// startServer starts `toolport serve` on a free loopback port and returns
// once it answers.
func startServer(tb testing.TB, bin string, env map[string]string) *server {
	tb.Helper()
	s := &server{log: &testexec.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	s.cmd.Env = testexec.Env(tb, env)
	s.cmd.Stderr = s.log
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "toolport: serving on "); ok {
				addr <- strings.TrimSuffix(u, "/")
			}
		}
	}()
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	tb.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
	select {
	case s.url = <-addr:
	case <-s.done:
		tb.Fatalf("toolport serve exited while starting:\n%s", s.log.String())
	case <-time.After(2 * time.Minute):
		tb.Fatalf("toolport serve did not start in 2 minutes:\n%s", s.log.String())
	}
	return s
}

// perf starts `perf record` on the server when TOOLPORT_BENCH_PERF_DIR is
// set (call graphs by frame pointers, which Go keeps) and returns what
// stops it; `perf report -i DIR/STORE.perf` reads the profile.
func (s *server) perf(tb testing.TB, name string) (stop func()) {
	dir := os.Getenv(envPerf)
	if dir == "" {
		return func() {}
	}
	out := filepath.Join(dir, name+".perf")
	target := []string{"-p", strconv.Itoa(s.cmd.Process.Pid)}
	if os.Getenv(envPerfAll) == "1" {
		target = []string{"-a"}
		if v := os.Getenv(envPerfFor); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				tb.Fatalf("%s=%q: want a positive duration", envPerfFor, v)
			}
			target = append(target, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
		}
	}
	freq := "499"
	if v := os.Getenv(envPerfFreq); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n <= 0 {
			tb.Fatalf("%s=%q: want a positive number of samples a second", envPerfFreq, v)
		}
		freq = v
	}
	cmd := exec.Command("perf", append([]string{"record", "-F", freq, "-g", "-o", out}, target...)...)
	var log testexec.Buffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		tb.Fatalf("perf record: %v", err)
	}
	// A readiness wait for an external program: perf record says nothing
	// once its counters are attached, so the profile starts after a pause.
	time.Sleep(200 * time.Millisecond)
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			tb.Logf("perf record: %v\n%s", err, log.String())
		}
	}
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// usage is the server's user+system CPU so far, all threads, and its minor
// page faults (memory touched for the first time, or again after the
// runtime gave it back).
func (s *server) usage() (cpu time.Duration, faults int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the server's CPU time: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// minflt, utime and stime are fields 10, 14 and 15: the 8th, 12th and
	// 13th after it.
	i := bytes.LastIndexByte(raw, ')')
	f := strings.Fields(string(raw[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, 0, fmt.Errorf("unexpected /proc/PID/stat: %q", raw)
	}
	minflt, err0 := strconv.ParseInt(f[7], 10, 64)
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("unexpected /proc/PID/stat: %q", raw)
	}
	return time.Duration(utime+stime) * clockTick, minflt, nil
}

// cpu is the server's user+system CPU so far.
func (s *server) cpu() (time.Duration, error) {
	cpu, _, err := s.usage()
	return cpu, err
}

// settledCPU waits until the server has spent no CPU for 300 ms (work a
// turn does after its last event, such as titling the conversation, is
// part of the turn's cost), at most 10 s, and returns its CPU so far.
func (s *server) settledCPU() (time.Duration, error) {
	last, err := s.cpu()
	if err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		now, err := s.cpu()
		if err != nil {
			return 0, err
		}
		if now == last {
			break
		}
		last = now
	}
	return last, nil
}

// client drives turns through the chat API.
type client struct {
	base string
	http *http.Client
}

// conversations creates n conversations.
func (c *client) conversations(n int) ([]string, error) {
	ids := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			resp, err := c.http.Post(c.base+"/api/conversations", "application/json", strings.NewReader(`{"title":"bench"}`))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var conv struct{ ID string }
			if err := json.NewDecoder(resp.Body).Decode(&conv); err != nil || resp.StatusCode != http.StatusCreated || conv.ID == "" {
				errs <- fmt.Errorf("creating a conversation: %s %v", resp.Status, err)
				return
			}
			ids[i] = conv.ID
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return ids, nil
}

// burst creates n conversations and runs a turn in each, all at once.
func (c *client) burst(n int) (*result, error) {
	convs, err := c.conversations(n)
	if err != nil {
		return &result{}, err
	}
	res := c.run(convs)
	return res, res.err()
}

// result is what a burst of turns measured.
type result struct {
	firsts []time.Duration
	failed []error
	// failedConvs are the conversations of the failed turns, in the
	// order of failed.
	failedConvs []string
}

// serverLog is what of the server's log explains the first failed turn:
// its lines naming that turn's conversation (the store's error for a save
// that failed), then the log's tail. The tail alone is mostly other
// turns' warnings under load.
func (r *result) serverLog(log string) string {
	var named []string
	if len(r.failedConvs) > 0 && r.failedConvs[0] != "" {
		for line := range strings.Lines(log) {
			if strings.Contains(line, r.failedConvs[0]) && len(named) < 20 {
				named = append(named, line)
			}
		}
	}
	return fmt.Sprintf("the server's log on the first failed turn's conversation:\n%s\nthe log's tail:\n%s",
		strings.Join(named, ""), tail(log, 3000))
}

// err sums up the failed turns.
func (r *result) err() error {
	if len(r.failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d turns failed, the first: %w", len(r.failed), len(r.failed)+len(r.firsts), r.failed[0])
}

// run posts a message to every conversation at once and reads each stream
// to its end.
func (c *client) run(convs []string) *result {
	var mu sync.Mutex
	res := &result{}
	var wg sync.WaitGroup
	for _, conv := range convs {
		wg.Go(func() {
			first, err := c.turn(conv)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.failed = append(res.failed, err)
				res.failedConvs = append(res.failedConvs, conv)
				return
			}
			res.firsts = append(res.firsts, first)
		})
	}
	wg.Wait()
	return res
}

// turn posts the message and reads the stream; the turn counts only if the
// tool call succeeded and the answer ended normally.
func (c *client) turn(conv string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"content": turnText})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/conversations/"+conv+"/messages", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	sent := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("posting a message: %s %s", resp.Status, b)
	}
	var first time.Duration
	toolOK := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if first == 0 {
			first = time.Since(sent)
		}
		var ev struct {
			Type       string `json:"type"`
			StopReason string `json:"stopReason"`
			Error      string `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return 0, fmt.Errorf("event %q: %w", data, err)
		}
		switch ev.Type {
		case "tool_call_end":
			toolOK = true
		case "tool_call_error", "error":
			return 0, fmt.Errorf("turn in %s: %s", conv, data)
		case "message_end":
			if ev.StopReason != "end_turn" || !toolOK {
				return 0, fmt.Errorf("turn in %s ended with %s (tool call ended: %v)", conv, data, toolOK)
			}
			return first, nil
		}
	}
	return 0, fmt.Errorf("the stream of the turn in %s ended without message_end (%v)", conv, sc.Err())
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
