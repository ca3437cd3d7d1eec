package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/ingest/ingesttest"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
)

type buildJob struct {
	ID     string
	Status string
	Error  string
	Report ingest.Report
}

type buildEvent struct {
	Type string
	Job  buildJob
}

// buildEnv is a server whose index builds run against local upstreams with
// the given latency, over a library of the recorded tracks.
func buildEnv(t *testing.T, token string, latency time.Duration, dsn string) (*env, *ingesttest.Upstreams) {
	t.Helper()
	up := ingesttest.New(t, latency)
	e := newEnv(t, envOptions{token: token, dsn: dsn, config: func(c *server.Config) {
		db := c.Store.(ingest.Store)
		lc, _ := lrclib.NewClient(nil, lrclib.WithBaseURL(up.LRCLIB.URL))
		rc, _ := reccobeats.NewClient(nil, reccobeats.WithBaseURL(up.ReccoBeats.URL))
		emb, err := embedding.NewDefault()
		if err != nil {
			t.Fatal(err)
		}
		b, err := ingest.New(ingest.Config{Store: db, Embedder: emb, Lyrics: lc, Features: rc, RecordHash: music.RecordHash, Workers: 2,
			Retry: ingest.Retry{BaseDelay: time.Millisecond, DisableJitter: true}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddTracks(context.Background(), ingesttest.Library()); err != nil {
			t.Fatal(err)
		}
		c.IndexBuild = b
	}})
	return e, up
}

// events reads the build's event stream to its end.
func (e *env) buildEvents(t *testing.T) []buildEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/index/build/events", nil)
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []buildEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev buildEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

func TestIndexBuildJob(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { testIndexBuildJob(t, storetest.DSN(t, engine)) })
	}
}

func testIndexBuildJob(t *testing.T, dsn string) {
	e, up := buildEnv(t, "secret-token", 30*time.Millisecond, dsn)

	if code, _ := e.do(t, "GET", "/api/index/build", ""); code != http.StatusNotFound {
		t.Errorf("status before any build: %d", code)
	}
	if code, body := e.do(t, "POST", "/api/index/build", `{"isrcs":["nope"]}`); code != http.StatusBadRequest || !strings.Contains(string(body), "not an ISRC") {
		t.Errorf("bad isrc: %d %s", code, body)
	}
	code, body := e.do(t, "POST", "/api/index/build", "")
	var job buildJob
	if err := json.Unmarshal(body, &job); code != http.StatusAccepted || err != nil || job.Status != "running" || job.ID == "" {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, body := e.do(t, "POST", "/api/index/build", `{}`); code != http.StatusConflict || !strings.Contains(string(body), `"CONFLICT"`) {
		t.Errorf("second start while running: %d %s", code, body)
	}

	events := e.buildEvents(t)
	if len(events) < 2 {
		t.Fatalf("events: %+v", events)
	}
	last := events[len(events)-1]
	if last.Type != "done" || last.Job.Status != "succeeded" || last.Job.ID != job.ID || last.Job.Report.Indexed != 4 || last.Job.Report.Processed != 4 {
		t.Fatalf("last event: %+v", last)
	}
	sawProgress := false
	for _, ev := range events[:len(events)-1] {
		if ev.Type != "progress" || ev.Job.Status != "running" {
			t.Errorf("event before done: %+v", ev)
		}
		if ev.Job.Report.Stages[ingest.StageLyrics] != nil && ev.Job.Report.Processed < 4 && ev.Job.Report.Total == 4 {
			sawProgress = true
		}
	}
	if !sawProgress {
		t.Error("no progress event showed a build in progress with per-stage counts")
	}
	code, body = e.do(t, "GET", "/api/index/build", "")
	if err := json.Unmarshal(body, &job); code != 200 || err != nil || job.Status != "succeeded" || job.Report.NoLyrics != 3 {
		t.Errorf("status after: %d %s", code, body)
	}
	// A second build is allowed once the first is done, and finds nothing to do.
	before := up.Total()
	if code, _ := e.do(t, "POST", "/api/index/build", `{"dryRun":true}`); code != http.StatusAccepted {
		t.Fatalf("second build: %d", code)
	}
	events = e.buildEvents(t)
	if last := events[len(events)-1]; last.Job.Status != "succeeded" || last.Job.Report.Unchanged != 4 || up.Total() != before {
		t.Errorf("dry run after a build: %+v (%d upstream calls)", last.Job, up.Total()-before)
	}
	if code, _ := e.do(t, "DELETE", "/api/index/build", ""); code != http.StatusConflict {
		t.Errorf("cancel with nothing running: %d", code)
	}

	// The token guards the endpoints.
	for _, m := range []string{"POST", "GET", "DELETE"} {
		req, _ := http.NewRequest(m, e.url+"/api/index/build", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", m, res.StatusCode)
		}
	}
}

func TestIndexBuildJobCancel(t *testing.T) {
	e, up := buildEnv(t, "", 0, "")
	up.Fail(ingesttest.LRCLIBGet, ingesttest.Fault{Stall: 20 * time.Second}, ingesttest.Fault{Stall: 20 * time.Second})
	if code, body := e.do(t, "POST", "/api/index/build", ""); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, body := e.do(t, "DELETE", "/api/index/build", ""); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, body)
	}
	events := e.buildEvents(t)
	last := events[len(events)-1]
	if last.Type != "done" || last.Job.Status != "canceled" || !strings.Contains(last.Job.Error, "resumes") {
		t.Errorf("after cancel: %+v", last)
	}
}

func TestIndexBuildNotConfigured(t *testing.T) {
	e := newEnv(t, envOptions{})
	if code, body := e.do(t, "POST", "/api/index/build", ""); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "NOT_CONFIGURED") {
		t.Errorf("no builder: %d %s", code, body)
	}
}
