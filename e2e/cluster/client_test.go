package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client is what a load balancer and a browser do together: it sends each
// request to a replica, moves on to the next when one refuses connections,
// and resumes a dropped stream on another replica with Last-Event-ID.
type client struct {
	replicas []*replica // the load balancer's rotation
	http     *http.Client
	acked    atomic.Int64             // messages acknowledged so far
	ackedOn  map[string]*atomic.Int64 // of them, by each replica (by name)
	open     atomic.Int64             // acknowledged turns not yet ended
	peak     atomic.Int64             // the most turns open at once
}

func newClient(replicas []*replica) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 512
	c := &client{replicas: replicas, http: &http.Client{Transport: tr}, ackedOn: map[string]*atomic.Int64{}}
	for _, r := range replicas {
		c.ackedOn[r.name] = new(atomic.Int64)
	}
	return c
}

// event is one SSE event as a client received it.
type event struct {
	ID   string
	Data string
}

func (e event) kind() string {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(e.Data), &head)
	return head.Type
}

// turn is what one chat turn looked like from the client.
type turn struct {
	n       int
	text    string
	conv    string
	turnID  string
	replica string // where the message was posted
	// acked: the replica answered the message with a turn id (the user
	// message is stored). An unacknowledged message was in flight when its
	// replica died: it may or may not be stored, but never twice.
	acked      bool
	events     []event
	streams    int // connections that carried events: 1 + resumptions
	firstEvent time.Duration
	duration   time.Duration
	err        error
}

// do sends one request, trying the replicas from the i-th (round-robin) and
// moving on when one refuses the connection: such a request did nothing.
func (c *client) do(ctx context.Context, i int, method, path string, body any, header http.Header) (*http.Response, *replica, error) {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	var last error
	for k := range len(c.replicas) {
		r := c.replicas[(i+k)%len(c.replicas)]
		if r.dead.Load() {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, method, r.url+path, bytes.NewReader(raw))
		if err != nil {
			return nil, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.http.Do(req)
		if err != nil && isDialError(err) {
			last = err
			continue
		}
		return resp, r, err
	}
	return nil, nil, fmt.Errorf("no replica answers: %w", last)
}

// runTurn creates a conversation on replica i's turn of the rotation, posts
// the message and follows its stream to message_end, resuming it elsewhere
// when its replica dies.
func (c *client) runTurn(ctx context.Context, i int, text string) *turn {
	t := &turn{n: i, text: text}
	start := time.Now()
	defer func() { t.duration = time.Since(start) }()
	// A conversation whose creation got no answer (its replica died) is
	// created again on the next replica: the first, if made, stays empty.
	var resp *http.Response
	var err error
	for k := range len(c.replicas) {
		if resp, _, err = c.do(ctx, i+k, http.MethodPost, "/api/conversations", map[string]string{"title": text}, nil); err == nil {
			break
		}
	}
	if err != nil {
		t.err = fmt.Errorf("creating the conversation: %w", err)
		return t
	}
	var conv struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&conv)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil {
		t.err = fmt.Errorf("creating the conversation: %s %v", resp.Status, err)
		return t
	}
	t.conv = conv.ID

	posted := time.Now()
	resp, r, err := c.do(ctx, i, http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"content": text}, nil)
	if err != nil {
		// Sent, but its replica died before answering: not acknowledged.
		return t
	}
	t.replica = r.name
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.err = fmt.Errorf("posting the message on %s: %s %s", r.name, resp.Status, b)
		return t
	}
	t.acked, t.turnID = true, resp.Header.Get("Toolport-Turn-Id")
	c.acked.Add(1)
	c.ackedOn[r.name].Add(1)
	open := c.open.Add(1)
	defer c.open.Add(-1)
	for p := c.peak.Load(); open > p && !c.peak.CompareAndSwap(p, open); p = c.peak.Load() {
	}
	if t.turnID == "" {
		t.err = errors.New("the answer to the message has no Toolport-Turn-Id")
		resp.Body.Close()
		return t
	}
	ended := c.read(resp, t, posted)
	for attempt := 0; !ended; attempt++ {
		// The stream dropped before message_end: resume on a live replica.
		// A killed replica's turn ends once its lease lapses and another
		// replica closes it, so this may take a lease or two.
		if attempt == 40 || ctx.Err() != nil {
			t.err = fmt.Errorf("the stream of turn %s did not end after %d resumptions (%v)", t.turnID, attempt, ctx.Err())
			return t
		}
		last := ""
		if len(t.events) > 0 {
			last = t.events[len(t.events)-1].ID
		}
		h := http.Header{}
		if last != "" {
			h.Set("Last-Event-ID", last)
		}
		resp, r, err = c.do(ctx, i+1+attempt, http.MethodGet, "/api/conversations/"+conv.ID+"/turns/"+t.turnID+"/events", nil, h)
		if err != nil {
			pace(200 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.err = fmt.Errorf("resuming turn %s after %q on %s: %s %s", t.turnID, last, r.name, resp.Status, b)
			return t
		}
		ended = c.read(resp, t, posted)
	}
	return t
}

// read appends the stream's events to t until message_end (true) or the
// stream drops (false).
func (c *client) read(resp *http.Response, t *turn, posted time.Time) bool {
	defer resp.Body.Close()
	got := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var ev event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			ev.ID = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			ev.Data = line[len("data: "):]
		case line == "" && ev.Data != "":
			if t.firstEvent == 0 {
				t.firstEvent = time.Since(posted)
			}
			if !got {
				got = true
				t.streams++
			}
			t.events = append(t.events, ev)
			if ev.kind() == "message_end" {
				return true
			}
			ev = event{}
		}
	}
	return false
}

// replay reads a turn's whole event log from a live replica.
func (c *client) replay(ctx context.Context, i int, t *turn) ([]event, error) {
	h := http.Header{"Last-Event-Id": {t.turnID + ":0"}}
	resp, _, err := c.do(ctx, i, http.MethodGet, "/api/conversations/"+t.conv+"/turns/"+t.turnID+"/events", nil, h)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("replaying turn %s: %s", t.turnID, resp.Status)
	}
	r := &turn{}
	if !c.read(resp, r, time.Now()) {
		return r.events, fmt.Errorf("the replay of turn %s has no message_end", t.turnID)
	}
	return r.events, nil
}

// message is a stored message as GET /api/conversations/{id} shows it.
type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Incomplete bool            `json:"incomplete"`
	Error      *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// messages reads a conversation's stored messages from a live replica.
func (c *client) messages(ctx context.Context, i int, conv string) ([]message, error) {
	resp, _, err := c.do(ctx, i, http.MethodGet, "/api/conversations/"+conv, nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct{ Messages []message }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading conversation %s: %s %v", conv, resp.Status, err)
	}
	return body.Messages, nil
}

// callTool calls a tool through replica r's REST API.
func (c *client) callTool(ctx context.Context, r *replica, name, args string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/api/tools/"+name, strings.NewReader(args))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var res map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s on %s: %s %v", name, r.name, resp.Status, err)
	}
	return res, nil
}

// searcher calls semanticSearch on the given replicas in turn, one call at
// a time, until stop closes, recording each call's latency and failures.
type searcher struct {
	mu        sync.Mutex
	latencies []time.Duration
	failures  []string
}

func (s *searcher) run(ctx context.Context, c *client, replicas []*replica, stop <-chan struct{}) {
	args := fmt.Sprintf(`{"query":%q,"limit":3}`, searchQuery)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		r := replicas[i%len(replicas)]
		start := time.Now()
		res, err := c.callTool(ctx, r, "semanticSearch", args)
		took := time.Since(start)
		s.mu.Lock()
		switch {
		case err != nil:
			s.failures = append(s.failures, fmt.Sprintf("%s after %v: %v", r.name, took, err))
		case res["success"] != true:
			s.failures = append(s.failures, fmt.Sprintf("%s after %v: %v: %v", r.name, took, res["error_code"], res["error"]))
		case firstISRC(res) != pianoISRC:
			s.failures = append(s.failures, fmt.Sprintf("%s: first hit %q, want %s", r.name, firstISRC(res), pianoISRC))
		default:
			s.latencies = append(s.latencies, took)
		}
		s.mu.Unlock()
		pace(20 * time.Millisecond)
	}
}

func firstISRC(res map[string]any) string {
	tracks, _ := res["tracks"].([]any)
	if len(tracks) == 0 {
		return ""
	}
	t, _ := tracks[0].(map[string]any)
	s, _ := t["isrc"].(string)
	return s
}

// percentile returns the p-th percentile (0–100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(k, len(s)-1))]
}

// ackedBy lists the messages acknowledged so far by each replica.
func (c *client) ackedBy() string {
	parts := make([]string, 0, len(c.replicas))
	for _, r := range c.replicas {
		parts = append(parts, fmt.Sprintf("%s %d", r.name, c.ackedOn[r.name].Load()))
	}
	return strings.Join(parts, ", ")
}
