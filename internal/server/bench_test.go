package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/storetest"
)

// benchConcurrency is the number of chat turns run at once.
const benchConcurrency = 500

// benchEnv is a server whose model answers "bench" with text, a tool call,
// then text, with connection pools sized for the load.
func benchEnv(b *testing.B, extra ...servertest.Turn) (*env, *http.Client) {
	b.Helper()
	turns := append([]servertest.Turn{
		{Match: "bench", Events: []servertest.Event{servertest.Text("Looking it up."), servertest.Call("", "lookup", `{"query":"jazz"}`)}, InputTokens: 100, OutputTokens: 10},
		{Match: "bench", Step: 1, Events: []servertest.Event{servertest.Text("Found "), servertest.Text("two.")}, InputTokens: 150, OutputTokens: 5},
	}, extra...)
	ms := servertest.NewModelServer(b, turns...)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * benchConcurrency
	p, err := llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, envOptions{dsn: filepath.Join(b.TempDir(), "bench.db"), agent: agent.Config{Provider: p}})
	ctr := http.DefaultTransport.(*http.Transport).Clone()
	ctr.MaxIdleConnsPerHost = 2 * benchConcurrency
	return e, &http.Client{Transport: ctr}
}

// post starts a chat turn and returns the response (the caller reads it).
func post(ctx context.Context, c *http.Client, base, conv, content string) (*http.Response, error) {
	body, _ := json.Marshal(map[string]string{"content": content})
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/conversations/"+conv+"/messages", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// BenchmarkChatTurns500 runs 500 chat turns at once (text, a tool call, text:
// two model calls each) against the scripted model on loopback, in process,
// on SQLite. It reports turns per second and the time to the first event
// (message_start, which follows the durable save of the user message).
func BenchmarkChatTurns500(b *testing.B) {
	e, client := benchEnv(b)
	var firsts []time.Duration
	var total time.Duration
	var turns int
	for b.Loop() {
		b.StopTimer()
		convs := make([]string, benchConcurrency)
		for i := range convs {
			convs[i] = e.newConversation(b)
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, conv := range convs {
			wg.Go(func() {
				t0 := time.Now()
				res, err := post(context.Background(), client, e.url, conv, "bench please")
				if err != nil {
					b.Error(err)
					return
				}
				defer res.Body.Close()
				r := bufio.NewReader(res.Body)
				first := true
				var last string
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						break
					}
					if strings.HasPrefix(line, "data: ") {
						if first {
							mu.Lock()
							firsts = append(firsts, time.Since(t0))
							mu.Unlock()
							first = false
						}
						last = line
					}
				}
				if !strings.Contains(last, `"stopReason":"end_turn"`) {
					b.Errorf("turn did not end well: %s", last)
				}
			})
		}
		wg.Wait()
		total += time.Since(start)
		turns += benchConcurrency
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(turns)/total.Seconds(), "turns/s")
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-first-event-p50")
	b.ReportMetric(float64(firsts[len(firsts)*99/100].Microseconds())/1000, "ms-first-event-p99")
}

// BenchmarkOpenStreams500 holds 500 chat streams open at once (each waiting
// on a model that has sent its first words) and reports the memory and
// goroutines each costs the process (server, agent, SDK client and, in this
// in-process setup, the scripted model's side too).
func BenchmarkOpenStreams500(b *testing.B) {
	e, client := benchEnv(b, servertest.Turn{Match: "hold", Events: []servertest.Event{servertest.Text("Thinking"), servertest.Pause(time.Hour)}})
	var perStream, goroutines float64
	for b.Loop() {
		b.StopTimer()
		convs := make([]string, benchConcurrency)
		for i := range convs {
			convs[i] = e.newConversation(b)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		b.StartTimer()
		ctx, cancel := context.WithCancel(context.Background())
		var ready, done sync.WaitGroup
		for _, conv := range convs {
			ready.Add(1)
			done.Go(func() {
				res, err := post(ctx, client, e.url, conv, "hold on")
				if err != nil {
					ready.Done()
					b.Error(err)
					return
				}
				defer res.Body.Close()
				r := bufio.NewReader(res.Body)
				signaled := false
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						break
					}
					if !signaled && strings.Contains(line, `"text_delta"`) {
						ready.Done()
						signaled = true
					}
				}
				if !signaled {
					ready.Done()
				}
			})
		}
		ready.Wait()
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		perStream = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / benchConcurrency
		goroutines = float64(runtime.NumGoroutine()-g0) / benchConcurrency
		cancel()
		done.Wait()
		b.StartTimer()
	}
	b.ReportMetric(perStream/1024, "KiB-heap/stream")
	b.ReportMetric(goroutines, "goroutines/stream")
}

// replicaBenchTurns is the number of chat turns run at once across replicas.
const replicaBenchTurns = 200

// BenchmarkChatTurnsReplicas runs 200 chat turns at once on PostgreSQL with
// the turn event log on (every event logged and NOTIFYed, the claim a lease
// row), against one server and against two servers sharing the database
// (turns sent round-robin, each with a pool of its own, as two replicas), in
// the same run. It reports turns per second and the time to the first event.
func BenchmarkChatTurnsReplicas(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			dsn := storetest.DSN(b, storetest.Postgres)
			ms := servertest.NewModelServer(b,
				servertest.Turn{Match: "bench", Events: []servertest.Event{servertest.Text("Looking it up."), servertest.Call("", "lookup", `{"query":"jazz"}`)}, InputTokens: 100, OutputTokens: 10},
				servertest.Turn{Match: "bench", Step: 1, Events: []servertest.Event{servertest.Text("Found "), servertest.Text("two.")}, InputTokens: 150, OutputTokens: 5})
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = 2 * replicaBenchTurns
			p, err := llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.URL, HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				b.Fatal(err)
			}
			var envs []*env
			for range n {
				envs = append(envs, newEnv(b, envOptions{dsn: dsn, model: ms, agent: agent.Config{Provider: p}}))
			}
			ctr := http.DefaultTransport.(*http.Transport).Clone()
			ctr.MaxIdleConnsPerHost = 2 * replicaBenchTurns
			client := &http.Client{Transport: ctr}
			var firsts []time.Duration
			var total time.Duration
			var turns int
			for b.Loop() {
				b.StopTimer()
				convs := make([]string, replicaBenchTurns)
				for i := range convs {
					convs[i] = envs[0].newConversation(b)
				}
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				for i, conv := range convs {
					e := envs[i%n]
					wg.Go(func() {
						t0 := time.Now()
						res, err := post(context.Background(), client, e.url, conv, "bench please")
						if err != nil {
							b.Error(err)
							return
						}
						defer res.Body.Close()
						r := bufio.NewReader(res.Body)
						first := true
						var last string
						for {
							line, err := r.ReadString('\n')
							if err != nil {
								break
							}
							if strings.HasPrefix(line, "data: ") {
								if first {
									mu.Lock()
									firsts = append(firsts, time.Since(t0))
									mu.Unlock()
									first = false
								}
								last = line
							}
						}
						if !strings.Contains(last, `"stopReason":"end_turn"`) {
							b.Errorf("turn did not end well: %s", last)
						}
					})
				}
				wg.Wait()
				total += time.Since(start)
				turns += replicaBenchTurns
			}
			slices.Sort(firsts)
			b.ReportMetric(float64(turns)/total.Seconds(), "turns/s")
			b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-first-event-p50")
			b.ReportMetric(float64(firsts[len(firsts)*99/100].Microseconds())/1000, "ms-first-event-p99")
		})
	}
}
