package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
)

type demoState struct {
	Tracks     int
	DemoTracks int
	Job        *struct {
		Status, Error, StartedAt string
		Read, Total, Added       int
	}
}

func (e *env) demoState(t *testing.T, method string) (int, demoState) {
	t.Helper()
	status, body := e.do(t, method, "/api/index/demo", "")
	var st demoState
	if status < 300 {
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%s /api/index/demo: %v: %s", method, err, body)
		}
	}
	return status, st
}

// TestDemoIndexLoad loads the demo tracks (a subset, by the server's
// configuration) through the function `toolport index add --demo` uses: the
// empty index is reported, a POST loads, and a second POST loads nothing.
func TestDemoIndexLoad(t *testing.T) {
	const limit = 40
	e := newEnv(t, envOptions{config: func(c *server.Config) {
		emb, err := embedding.NewDefault()
		if err != nil {
			t.Fatal(err)
		}
		svc := music.New(c.Store.(music.Store), emb, nil)
		c.DemoIndex = music.DemoIndex{Service: svc, Limit: limit}
	}})
	if status, st := e.demoState(t, "GET"); status != 200 || st.Tracks != 0 || st.DemoTracks != limit || st.Job != nil {
		t.Fatalf("before: %d %+v, want an empty index, %d demo tracks and no job", status, st, limit)
	}
	status, st := e.demoState(t, "POST")
	if status != 202 || st.Job == nil || st.Job.Total != limit {
		t.Fatalf("POST = %d %+v, want 202 with the job", status, st)
	}
	first := st.Job.StartedAt
	e.waitDemoLoad(t)
	_, st = e.demoState(t, "GET")
	if st.Job.Status != "succeeded" || st.Job.Added != limit || st.Job.Read != limit || st.Tracks != limit {
		t.Fatalf("after: %+v, want %d tracks added and in the index", st, limit)
	}
	// Idempotent: the load done is reported, not run again.
	status, st = e.demoState(t, "POST")
	if status != 200 || st.Job.StartedAt != first || st.Job.Status != "succeeded" || st.Tracks != limit {
		t.Fatalf("second POST = %d %+v, want 200 with the same finished job", status, st)
	}
	// The tracks are searchable: they are in the store the tools read.
	res, err := e.db.IndexStatus(context.Background())
	if err != nil || res.Total != limit || res.Embedded != limit {
		t.Fatalf("index status %+v, %v; want %d embedded records", res, err, limit)
	}
}

// gatedDemo is a DemoIndex whose loads wait for release.
type gatedDemo struct {
	mu      sync.Mutex
	loads   int
	tracks  int
	fail    error
	started chan struct{}
	release chan struct{}
}

func (g *gatedDemo) Tracks(context.Context) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tracks, nil
}
func (g *gatedDemo) Demo() int { return 10 }
func (g *gatedDemo) Load(ctx context.Context, progress func(int)) (int, error) {
	g.mu.Lock()
	g.loads++
	g.mu.Unlock()
	g.started <- struct{}{}
	progress(5)
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return 0, g.fail
	}
	g.tracks = 10
	return 10, nil
}

// TestDemoIndexOneLoad: a POST during a load joins it (one load at a time),
// a failed load says so without the store's error and may be started again.
func TestDemoIndexOneLoad(t *testing.T) {
	g := &gatedDemo{started: make(chan struct{}), release: make(chan struct{}), fail: errors.New("disk I/O error at /secret/path")}
	e := newEnv(t, envOptions{config: func(c *server.Config) { c.DemoIndex = g }})
	if status, _ := e.demoState(t, "POST"); status != 202 {
		t.Fatalf("POST = %d", status)
	}
	<-g.started
	status, st := e.demoState(t, "POST")
	if status != 202 || st.Job == nil || st.Job.Status != "running" || st.Job.Read != 5 {
		t.Fatalf("POST during the load = %d %+v, want 202 with the running job and its progress", status, st)
	}
	g.release <- struct{}{}
	e.waitDemoLoad(t)
	_, st = e.demoState(t, "GET")
	if st.Job.Status != "failed" || st.Job.Error == "" || st.Tracks != 0 {
		t.Fatalf("after a failure: %+v", st)
	}
	if b, _ := json.Marshal(st); strings.Contains(string(b), "/secret/path") {
		t.Errorf("the store's error reached the client: %s", b)
	}
	g.mu.Lock()
	g.fail = nil
	g.mu.Unlock()
	if status, _ := e.demoState(t, "POST"); status != 202 {
		t.Fatalf("POST after a failure = %d, want a new load", status)
	}
	<-g.started
	g.release <- struct{}{}
	e.waitDemoLoad(t)
	_, st = e.demoState(t, "GET")
	g.mu.Lock()
	defer g.mu.Unlock()
	if st.Job.Status != "succeeded" || st.Tracks != 10 || g.loads != 2 {
		t.Fatalf("after the second load: %+v, %d loads; want success and two loads in all", st, g.loads)
	}
}

// TestDemoIndexGuarded: the endpoint is guarded like every route (token,
// Host, cross-origin), and a server without an index answers 503.
func TestDemoIndexGuarded(t *testing.T) {
	g := &gatedDemo{started: make(chan struct{}, 1), release: make(chan struct{})}
	e := newEnv(t, envOptions{token: "s3cret", config: func(c *server.Config) { c.DemoIndex = g }})
	cases := []struct {
		name    string
		method  string
		headers map[string]string
		token   string
		code    string
		status  int
	}{
		{"no token", "POST", nil, "", "UNAUTHORIZED", 401},
		{"foreign Host", "POST", map[string]string{"Host": "evil.example"}, "s3cret", "FORBIDDEN_HOST", 403},
		{"cross-site POST", "POST", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, "s3cret", "CROSS_ORIGIN", 403},
		{"foreign Origin", "POST", map[string]string{"Origin": "https://evil.example"}, "s3cret", "CROSS_ORIGIN", 403},
		{"no token, GET", "GET", nil, "", "UNAUTHORIZED", 401},
	}
	for _, c := range cases {
		e.token = c.token
		status, code, body := e.send(t, c.method, "/api/index/demo", "", c.headers)
		if status != c.status || code != c.code {
			t.Errorf("%s: %d %s (%s), want %d %s", c.name, status, code, body, c.status, c.code)
		}
	}
	if g.loads != 0 {
		t.Errorf("a refused request started %d loads", g.loads)
	}
	plain := newEnv(t, envOptions{dsn: filepath.Join(t.TempDir(), "other.db")})
	if status, code, _ := plain.send(t, "POST", "/api/index/demo", "", nil); status != 503 || code != "NOT_CONFIGURED" {
		t.Errorf("without an index: %d %s, want 503 NOT_CONFIGURED", status, code)
	}
}
