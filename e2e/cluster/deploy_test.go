package cluster_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/toolport/toolport/internal/store/storetest"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/testexec"
)

var build testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}

// The engines the deployment needs, named by the variables .ci/run sets.
const (
	envDatabase = "TOOLPORT_TEST_DATABASE_URL"
	envRedis    = "TOOLPORT_TEST_REDIS_URL"
	envWeaviate = weaviatetest.EnvBinary
)

// requireEngines skips tb unless every engine is configured. With all of
// them set the test must run: a missing engine then fails it.
func requireEngines(tb testing.TB) {
	tb.Helper()
	var missing []string
	for _, v := range []string{envDatabase, envRedis, envWeaviate} {
		if os.Getenv(v) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		tb.Skipf("the cluster test needs PostgreSQL, Redis and a weaviate-server binary: %s not set (.ci/run sets them)",
			strings.Join(missing, ", "))
	}
}

// turnLease is the replicas' turn lease: short, so that a killed replica's
// turns are closed within seconds, yet three heartbeats long, so that a
// loaded machine does not lose live ones.
const turnLease = 5 * time.Second

// searchQuery finds pianoISRC first among the tracks the test indexes.
const (
	searchQuery = "melancholic piano"
	pianoISRC   = "AUNMG2400013"
)

// tracks is the index the replicas search: one calm piano track among
// others that share none of the query's words.
const tracks = `{"isrc":"AUNMG2400013","title":"BLADE WALKER","artist":"Air Max '97","interpretation":"Calm ambient piano, melancholic and slow"}
{"isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","interpretation":"A restless late-night club track, dark and driving"}
{"isrc":"AUNMG2400012","title":"Sunfall","artist":"Coastlines","interpretation":"Bright surf guitar with handclaps, a summer party"}
{"isrc":"AUNMG2400014","title":"Grit","artist":"Low Engine","interpretation":"Distorted rock riffs over heavy drums, angry and loud"}
{"isrc":"AUNMG2400015","title":"Lanterns","artist":"Mira Vale","interpretation":"Folk song with banjo and choir, hopeful and warm"}
{"isrc":"AUNMG2400016","title":"Orbit","artist":"Halcyon Drive","interpretation":"Synthwave with arpeggiated bass, nostalgic night drive"}
`

// deployment is the running system: engines, replicas, a scripted model
// and a local web page that web_fetch reads through the shared cache.
type deployment struct {
	bin      string
	env      map[string]string
	dbURL    string
	weaviate *weaviatetest.Cluster
	model    *servertest.ModelServer
	pageURL  string
	hits     atomic.Int64 // requests for the page: upstream calls
	cut      atomic.Int64 // of those, calls whose caller went away before the answer (a killed replica's)
	fetchMu  sync.Mutex
	fetches  []time.Time // when each request for the page came
	replicas []*replica
}

// fetchTimes returns when each request for the page came, in order.
func (d *deployment) fetchTimes() []time.Time {
	d.fetchMu.Lock()
	defer d.fetchMu.Unlock()
	return slices.Clone(d.fetches)
}

// replica is one `toolport serve` process.
type replica struct {
	name string
	url  string
	cmd  *exec.Cmd
	log  *testexec.Buffer
	dead atomic.Bool
	done chan struct{}
}

// Kill stops the replica at once (SIGKILL), as a crash would.
func (r *replica) Kill() {
	if r.dead.Swap(true) {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
}

// pause is the scripted model's wait between pieces of its answer, so that
// streams are open when the replica carrying them is killed.
const pause = time.Second

// modelTurns is the script: every turn asks semanticSearch and web_fetch of
// the same page, then streams its answer in pieces. "bench" turns stream
// without pauses, so that the benchmark measures Toolport, not the script.
func modelTurns(pageURL string) []servertest.Turn {
	calls := []servertest.Event{
		servertest.Text("Let me look."),
		servertest.Call("", "semanticSearch", fmt.Sprintf(`{"query":%q,"limit":3}`, searchQuery)),
		servertest.Call("", "web_fetch", fmt.Sprintf(`{"url":%q}`, pageURL)),
	}
	return []servertest.Turn{
		{Match: "cluster turn", Step: 0, Events: calls},
		{Match: "cluster turn", Step: 1, Events: []servertest.Event{
			servertest.Text("BLADE WALKER"), servertest.Pause(pause),
			servertest.Text(" is calm piano"), servertest.Pause(pause),
			servertest.Text(", and the page"), servertest.Pause(pause),
			servertest.Text(" agrees."),
		}, InputTokens: 120, OutputTokens: 12},
		{Match: "bench turn", Step: 0, Events: calls},
		{Match: "bench turn", Step: 1, Events: []servertest.Event{
			servertest.Text("BLADE WALKER"), servertest.Text(" is calm piano"),
			servertest.Text(", and the page"), servertest.Text(" agrees."),
		}, InputTokens: 120, OutputTokens: 12},
	}
}

// deploy starts everything: a database of its own on the test PostgreSQL,
// a key prefix of its own on the test Redis, a Weaviate cluster of three
// nodes with replication factor 3, the index, and n replicas.
func deploy(tb testing.TB, n int) *deployment {
	tb.Helper()
	requireEngines(tb)
	d := &deployment{bin: build.Build(tb, "../../cmd/toolport")}
	suffix := randomHex(tb)

	d.dbURL = storetest.Database(tb)
	prefix := "toolport-cluster-" + suffix + ":"
	tb.Cleanup(func() { deleteRedisKeys(tb, prefix) })

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/page":
			d.hits.Add(1)
			d.fetchMu.Lock()
			d.fetches = append(d.fetches, time.Now())
			d.fetchMu.Unlock()
			// An upstream that takes a while: concurrent identical calls
			// overlap, so only the shared lock keeps them to one.
			pace(300 * time.Millisecond)
			if r.Context().Err() != nil {
				// The replica calling died mid-call: its claim to fill the
				// cache lapses, and another replica calls again.
				d.cut.Add(1)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><title>Calm piano</title></head><body><article><h1>Calm piano</h1>`+
				`<p>BLADE WALKER by Air Max '97 is a calm ambient piano piece, melancholic and slow.</p></article></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(page.Close)
	d.pageURL = page.URL + "/page"
	d.model = servertest.NewModelServer(tb, modelTurns(d.pageURL)...)

	d.weaviate = weaviatetest.Start(tb, 3)
	d.env = map[string]string{
		"TOOLPORT_DATABASE_URL":        d.dbURL,
		"TOOLPORT_REDIS_URL":           os.Getenv(envRedis),
		"TOOLPORT_REDIS_PREFIX":        prefix,
		"TOOLPORT_FETCH_ALLOW_PRIVATE": "1", // the page is on loopback
		"TOOLPORT_TURN_LEASE":          turnLease.String(),
	}
	for k, v := range d.weaviate.ToolportEnv("ClusterTest" + suffix) {
		d.env[k] = v
	}
	for _, kv := range d.model.Env("anthropic") {
		k, v, _ := strings.Cut(kv, "=")
		d.env[k] = v
	}

	// The index goes in before the replicas start: `toolport index add`
	// also creates the schema, so the replicas do not race to migrate.
	jsonl := filepath.Join(tb.TempDir(), "tracks.jsonl")
	if err := os.WriteFile(jsonl, []byte(tracks), 0o600); err != nil {
		tb.Fatal(err)
	}
	if res := testexec.Run(tb, d.bin, d.env, "", "index", "add", jsonl); res.Code != 0 || !strings.Contains(res.Stdout, "6 added") {
		tb.Fatalf("index add: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	var wg sync.WaitGroup
	d.replicas = make([]*replica, n)
	for i := range n {
		wg.Go(func() { d.replicas[i] = d.startReplica(tb, fmt.Sprintf("replica%d", i+1)) })
	}
	wg.Wait()
	for _, r := range d.replicas {
		if r == nil {
			tb.FailNow() // startReplica reported why
		}
	}
	return d
}

// startReplica starts `toolport serve` on a free loopback port and waits
// until /readyz answers 200 (PostgreSQL and Weaviate reachable).
func (d *deployment) startReplica(tb testing.TB, name string) *replica {
	env := map[string]string{"TOOLPORT_REPLICA_ID": name}
	for k, v := range d.env {
		env[k] = v
	}
	r := &replica{name: name, log: &testexec.Buffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(d.bin, "serve", "--addr", "127.0.0.1:0")
	r.cmd.Env = testexec.Env(tb, env)
	r.cmd.Stderr = r.log
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		tb.Error(err)
		return nil
	}
	if err := r.cmd.Start(); err != nil {
		tb.Errorf("starting %s: %v", name, err)
		return nil
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
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	tb.Cleanup(func() {
		if !r.dead.Swap(true) {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if tb.Failed() {
			tb.Logf("%s log (tail):\n%s", name, tail(r.log.String(), 3000))
		}
	})
	select {
	case r.url = <-addr:
	case <-r.done:
		tb.Errorf("%s exited while starting:\n%s", name, r.log.String())
		return nil
	case <-time.After(60 * time.Second):
		tb.Errorf("%s did not start in 60s:\n%s", name, r.log.String())
		return nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(r.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			tb.Errorf("%s not ready in 60s (%v):\n%s", name, err, r.log.String())
			return nil
		}
		pollAgain(100 * time.Millisecond)
	}
}

// alive lists the replicas not killed.
func (d *deployment) alive() []*replica {
	var out []*replica
	for _, r := range d.replicas {
		if !r.dead.Load() {
			out = append(out, r)
		}
	}
	return out
}

// deleteRedisKeys deletes every key under prefix.
func deleteRedisKeys(tb testing.TB, prefix string) {
	opt, err := redis.ParseURL(os.Getenv(envRedis))
	if err != nil {
		tb.Errorf("%s: %v", envRedis, err)
		return
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 200).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("deleting %s*: %v", prefix, err)
	}
}

func randomHex(tb testing.TB) string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// isDialError reports whether err happened before the request reached a
// server (connection refused): the request certainly did nothing, so it may
// go to another replica.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
