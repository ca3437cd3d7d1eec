package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// defaultTurns is the test's load when TOOLPORT_CLUSTER_TURNS is unset: the
// issue's 300, all under way at once. On the shared two-core machine the
// whole test (engines started, turns, checks) takes 20–50 s; set a smaller
// figure where that is too much.
const defaultTurns = 300

// spread is the time over which the turns are started, so that turns begin
// before, during and after the kills; it is shorter than an answer, so all
// of them are under way at once.
const spread = time.Second

func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 10000 {
		tb.Fatalf("%s: want a whole number from 1 to 10000, got %q", name, v)
	}
	return n
}

// TestClusterSurvivesAReplicaAndAWeaviateNodeDying is the proof on
// real engines: concurrent turns round-robin across three replicas, one
// replica and one Weaviate node killed mid-load, dropped streams resumed on
// the survivors. It checks that every acknowledged message is stored once
// (and an unacknowledged one at most once), that every turn completed or is
// stored incomplete and no conversation stays held, that every stream
// (resumed or not) holds its turn's logged events exactly once, that no
// tool call of any turn failed and semanticSearch answered all along, that
// one upstream fetch served every replica, that a track another process
// adds during the outage is in every survivor's next search, and that
// /readyz requires Weaviate.
func TestClusterSurvivesAReplicaAndAWeaviateNodeDying(t *testing.T) {
	requireEngines(t)
	n := envInt(t, "TOOLPORT_CLUSTER_TURNS", defaultTurns)
	d := deploy(t, 3)
	c := newClient(d.replicas)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	victim, victimNode := d.replicas[2], d.weaviate.Nodes[0]

	// semanticSearch, all along, on the replicas that stay up.
	var search searcher
	stopSearch := make(chan struct{})
	var searchWG sync.WaitGroup
	searchWG.Go(func() { search.run(ctx, c, d.replicas[:2], stopSearch) })

	// The kills: once half the victim's messages are acknowledged, while
	// their answers stream (each takes three seconds of pauses) and the
	// other half are still to be sent. (Counted over all replicas, the
	// kill once came before the victim, slower under load than the
	// others, had acknowledged any: no stream was there to resume.)
	killed := make(chan time.Time, 1)
	var ackedAtKill string
	go func() {
		for c.ackedOn[victim.name].Load() < int64(n/len(d.replicas)/2) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		ackedAtKill = c.ackedBy()
		victim.Kill()
		victimNode.Kill()
		killed <- time.Now()
	}()

	start := time.Now()
	turns := make([]*turn, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			pace(time.Duration(i) * spread / time.Duration(n))
			turns[i] = c.runTurn(ctx, i, fmt.Sprintf("cluster turn #%04d", i))
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var killedAt time.Time
	select {
	case killedAt = <-killed:
	default:
		t.Fatalf("the kills never happened: %d of %d messages acknowledged (%s)", c.acked.Load(), n, c.ackedBy())
	}

	// Every turn: acknowledged and ended, its events exactly once.
	survivors := d.alive()
	var firstEvents []time.Duration
	var completed, incomplete, resumed, unacked, unackedStored int
	cachedOn := map[string]int{}
	for _, tr := range turns {
		if tr.err != nil {
			t.Errorf("turn %d (%s, conversation %s, turn %s): %v", tr.n, tr.replica, tr.conv, tr.turnID, tr.err)
			continue
		}
		stored, err := c.messages(ctx, tr.n, tr.conv)
		if err != nil {
			t.Errorf("turn %d: %v", tr.n, err)
			continue
		}
		users := 0
		for _, m := range stored {
			if m.Role == "user" && strings.Contains(string(m.Content), tr.text) {
				users++
			}
		}
		// No conversation is left held by a turn of the dead replica.
		if status, err := streamAfterEnd(ctx, c, tr.n, tr.conv); err != nil {
			t.Errorf("turn %d: %v", tr.n, err)
		} else if status != http.StatusNoContent {
			t.Errorf("turn %d: GET …/stream = %d after every turn ended, want 204 (no turn running)", tr.n, status)
		}
		if !tr.acked {
			// In flight when its replica died: stored at most once.
			unacked++
			unackedStored += users
			if users > 1 {
				t.Errorf("turn %d: an unacknowledged message stored %d times", tr.n, users)
			}
			continue
		}
		if users != 1 {
			t.Errorf("turn %d: the acknowledged message is stored %d times, want once", tr.n, users)
		}
		firstEvents = append(firstEvents, tr.firstEvent)
		if tr.streams > 1 {
			resumed++
		}
		checkEvents(t, tr)
		replay, err := c.replay(ctx, tr.n, tr)
		if err != nil {
			t.Errorf("turn %d: %v", tr.n, err)
		} else if !eventsEqual(replay, tr.events) {
			t.Errorf("turn %d (%d streams): the client received %d events, the log holds %d: not the same events",
				tr.n, tr.streams, len(tr.events), len(replay))
		}

		// Completed, or stored as incomplete.
		msgID, stop := endOf(tr.events)
		var answer *message
		for i := range stored {
			if stored[i].ID == msgID {
				answer = &stored[i]
			}
		}
		switch {
		case answer == nil:
			t.Errorf("turn %d: the answer %s is not stored", tr.n, msgID)
		case stop == "end_turn" && !answer.Incomplete:
			completed++
		case stop != "end_turn" && answer.Incomplete:
			incomplete++
		default:
			t.Errorf("turn %d: the stream ended with %q but the stored answer has incomplete=%v", tr.n, stop, answer.Incomplete)
		}
		for _, ev := range tr.events {
			if ev.kind() == "tool_call_error" {
				t.Errorf("turn %d: a tool call failed: %s", tr.n, ev.Data)
			}
		}
		if webFetchCached(tr.events) {
			cachedOn[tr.replica]++
		}
	}
	if resumed == 0 {
		t.Errorf("no stream was dropped and resumed: the kill at %v proved nothing", killedAt.Sub(start))
	}

	// The upstream page was fetched once for every web_fetch of every
	// replica, and the survivors still answer from the shared cache.
	for _, r := range survivors {
		res, err := c.callTool(ctx, r, "web_fetch", fmt.Sprintf(`{"url":%q}`, d.pageURL))
		if err != nil || res["success"] != true || res["cached"] != true {
			t.Errorf("web_fetch on %s after the run: want a cached success, got %v %v", r.name, res, err)
		}
	}
	// A call the killed replica had under way when it died is not an
	// answer: its claim lapses and one survivor calls again (seen in CI on a
	// loaded machine, where the first fill ran into the kill).
	cut := d.cut.Load()
	// A replica killed while it holds the claim to fill the cache (before
	// its fetch, during it, or answered but not yet stored) leaves the
	// claim held until it expires: each survivor then waits out
	// tool.DefaultFillWait and calls the upstream itself (seen in CI under
	// load and on a fast machine). Such a fetch comes a fill wait after the
	// load began; a second one any sooner that was not cut off is a fill
	// the claim should have prevented.
	at := d.fetchTimes()
	late := lateFetches(at, start, killedAt)
	if late > len(survivors) {
		t.Errorf("%d fetches came a fill wait after the load began, more than the %d survivors", late, len(survivors))
	}
	if early := int64(len(at)-late) - cut; early > 1 || len(at) == 0 {
		var offsets []string
		for _, a := range at {
			offsets = append(offsets, a.Sub(start).Round(time.Millisecond).String())
		}
		t.Errorf("the page was fetched %d times within a fill wait for %d turns on 3 replicas (%d more cut off by the kill, %d after a killed holder's claim), want once; fetches at %v after the load began, the kill at %v",
			early, n, cut, late, offsets, killedAt.Sub(start).Round(time.Millisecond))
	}
	// The survivors that did not call the upstream themselves served the
	// page from the shared cache within turns. A survivor that did (the
	// first fill's, or one after a fill the kill cut short or a killed
	// holder's claim) may have had every one of its calls join its own
	// fill: all turns are under way at once, and the fill takes 300 ms
	// (seen on a fast machine as often as not). A fetch cut off by the kill
	// was the killed replica's. The killed replica is not held to it: on a
	// loaded machine it can die before any of its turns reaches the tool.
	fromCache := 0
	for _, r := range survivors {
		if cachedOn[r.name] > 0 {
			fromCache++
		}
	}
	if want := max(0, len(survivors)-int(d.hits.Load()-cut)); fromCache < want {
		t.Errorf("%d replicas' turns got the cached page, want %d (cached results by replica: %v; fetches %d, cut off by the kill %d)", fromCache, want, cachedOn, d.hits.Load(), cut)
	}

	close(stopSearch)
	searchWG.Wait()
	for _, f := range search.failures {
		t.Errorf("semanticSearch failed: %s", f)
	}
	if len(search.latencies) < 10 {
		t.Errorf("only %d searches answered during the run", len(search.latencies))
	}

	// An index change made by another process (`toolport index add`, with
	// one Weaviate node still down) is in every survivor's next search.
	jsonl := filepath.Join(t.TempDir(), "more.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"isrc":"AUNMG2400017","title":"Elegy","artist":"Nadia Stern","interpretation":"Solo cello lament, mournful bowed strings"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := testexec.Run(t, d.bin, d.env, "", "index", "add", jsonl); res.Code != 0 {
		t.Errorf("index add during the outage: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, r := range survivors {
		res, err := c.callTool(ctx, r, "semanticSearch", `{"query":"mournful cello","limit":3}`)
		if err != nil || firstISRC(res) != "AUNMG2400017" {
			t.Errorf("semanticSearch on %s right after index add: %v %v", r.name, res, err)
		}
	}

	// /healthz names every engine; /readyz requires Weaviate, so it fails
	// once no node answers, while Redis is reported and not required.
	checks := health(t, c, survivors[0], "/healthz", http.StatusOK)
	if checks["weaviate"] != "up required" || checks["redis"] != "up optional" || checks["store"] != "up required" {
		t.Errorf("/healthz on %s = %v, want store and weaviate up and required, redis up and optional", survivors[0].name, checks)
	}
	for _, node := range d.weaviate.Nodes {
		node.Kill()
	}
	for _, r := range survivors {
		if checks := health(t, c, r, "/readyz", http.StatusServiceUnavailable); checks["weaviate"] != "down required" {
			t.Errorf("/readyz on %s with every Weaviate node down = %v", r.name, checks)
		}
	}

	t.Logf("%d turns in %v (%.1f turns/s) on 3 replicas; %s and Weaviate %s killed at %v, messages acknowledged then %s",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), victim.name, victimNode.Name, killedAt.Sub(start).Round(time.Millisecond), ackedAtKill)
	t.Logf("%d completed, %d stored incomplete, %d unacknowledged (%d of them stored); %d streams resumed on another replica; at most %d turns under way at once",
		completed, incomplete, unacked, unackedStored, resumed, c.peak.Load())
	t.Logf("first event p50 %v p99 %v; semanticSearch %d calls, p50 %v p99 %v, %d failures; cached web_fetch by replica %v",
		percentile(firstEvents, 50).Round(time.Millisecond), percentile(firstEvents, 99).Round(time.Millisecond),
		len(search.latencies), percentile(search.latencies, 50).Round(time.Millisecond),
		percentile(search.latencies, 99).Round(time.Millisecond), len(search.failures), cachedOn)
}

// checkEvents checks a turn's received events: message_start first,
// message_end last, ids of this turn with sequence numbers rising by one.
func checkEvents(t *testing.T, tr *turn) {
	t.Helper()
	evs := tr.events
	if len(evs) < 2 || evs[0].kind() != "message_start" || evs[len(evs)-1].kind() != "message_end" {
		t.Errorf("turn %d: want message_start … message_end, got %d events", tr.n, len(evs))
		return
	}
	var prev int64
	for i, ev := range evs {
		id, seq, ok := strings.Cut(ev.ID, ":")
		n, err := strconv.ParseInt(seq, 10, 64)
		if !ok || id != tr.turnID || err != nil {
			t.Errorf("turn %d: event %d has id %q, want %s:<seq>", tr.n, i, ev.ID, tr.turnID)
			return
		}
		if i > 0 && n != prev+1 {
			t.Errorf("turn %d: event %d has seq %d after %d: an event missing or repeated", tr.n, i, n, prev)
			return
		}
		prev = n
	}
}

func eventsEqual(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// endOf returns the answer's message id and the turn's stop reason.
func endOf(evs []event) (msgID, stop string) {
	for _, ev := range evs {
		var e struct {
			Type       string `json:"type"`
			MessageID  string `json:"messageId"`
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &e)
		switch e.Type {
		case "message_start":
			msgID = e.MessageID
		case "message_end":
			stop = e.StopReason
		}
	}
	return msgID, stop
}

// lateFetches counts the fetches that came about tool.DefaultFillWait or
// more after the load began, and after the kill: survivors that waited out
// the claim of a killed replica. A tenth of the wait is allowed for (the
// wait runs from a survivor's first try, a little after the load began). A
// fill the claim failed to prevent comes within a fetch's time, 300 ms.
func lateFetches(at []time.Time, start, killedAt time.Time) int {
	if killedAt.IsZero() {
		return 0
	}
	late := 0
	for _, t := range at {
		if t.Sub(start) >= tool.DefaultFillWait*9/10 && t.After(killedAt) {
			late++
		}
	}
	return late
}

// webFetchCached reports whether the turn's web_fetch answered from the cache.
func webFetchCached(evs []event) bool {
	fetches := map[string]bool{}
	for _, ev := range evs {
		var e struct {
			Type       string `json:"type"`
			ToolCallID string `json:"toolCallId"`
			ToolName   string `json:"toolName"`
			Result     struct {
				Cached bool `json:"cached"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &e)
		switch {
		case e.Type == "tool_call_start" && e.ToolName == "web_fetch":
			fetches[e.ToolCallID] = true
		case e.Type == "tool_call_end" && fetches[e.ToolCallID] && e.Result.Cached:
			return true
		}
	}
	return false
}

// streamAfterEnd asks for conversation conv's running turn after its turn
// ended (its stream closed), until the answer is 204 or two seconds have
// passed, and returns the last status. A lost turn is closed in two writes,
// its closing events and then its row (turn.Manager.Repair): a client that
// read the closing events can ask in between and be streamed them again.
// That lasts one write; a row left running (its end refused or lost)
// stays so until the lease of the replica that closed it lapses, 5 s on.
func streamAfterEnd(ctx context.Context, c *client, n int, conv string) (int, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		resp, _, err := c.do(ctx, n, http.MethodGet, "/api/conversations/"+conv+"/stream", nil, nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent || time.Now().After(deadline) {
			return resp.StatusCode, nil
		}
		pollAgain(20 * time.Millisecond)
	}
}

// health reads /healthz or /readyz, waiting up to 20 s for the status want,
// and returns each check as "<status> required|optional".
func health(t *testing.T, c *client, r *replica, path string, want int) map[string]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.http.Get(r.url + path)
		if err != nil {
			t.Errorf("%s on %s: %v", path, r.name, err)
			return nil
		}
		var body struct {
			Checks []struct {
				Name, Status string
				Required     bool
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Errorf("%s on %s: %v", path, r.name, err)
			return nil
		}
		if resp.StatusCode == want || time.Now().After(deadline) {
			if resp.StatusCode != want {
				t.Errorf("%s on %s = %d, want %d", path, r.name, resp.StatusCode, want)
			}
			out := map[string]string{}
			for _, ch := range body.Checks {
				out[ch.Name] = ch.Status + map[bool]string{true: " required", false: " optional"}[ch.Required]
			}
			return out
		}
		pollAgain(200 * time.Millisecond)
	}
}
