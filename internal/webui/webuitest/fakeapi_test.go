package webuitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/webui"
)

// fakeAPI is a small in-memory implementation of the chat API of
// docs/api.md whose "model" plays scripted turns chosen by the prompt.
type fakeAPI struct {
	token           string
	modelConfigured bool
	artBase         string // https base URL for artwork

	mu       sync.Mutex
	seq      int
	convs    map[string]*fakeConv
	canceled int // turns whose request was aborted by the client
	// toolCalls are the direct tool calls answered, in order.
	toolCalls []toolCall
	// doctorRuns are the quota flags of the /api/doctor runs answered.
	doctorRuns []bool
	// decisions are the bodies' decisions of the approvals answered, in order.
	decisions [][]decision
	// notOffered, when set, maps more tools to why the model is not offered
	// them, as on a first run with no keys.
	notOffered map[string]string
}

type fakeConv struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
	Messages  []*fakeMessage `json:"messages"`
	updated   int
	// pending are the approval_required events of the calls that wait.
	pending []map[string]any
}

type fakeMessage struct {
	ID         string           `json:"id"`
	Role       string           `json:"role"`
	Content    []map[string]any `json:"content"`
	CreatedAt  string           `json:"createdAt"`
	Incomplete bool             `json:"incomplete"`
	Error      map[string]any   `json:"error,omitempty"`
	Usage      map[string]any   `json:"usage,omitempty"`
}

// failBeforeOutput is a prompt whose turn fails before any output.
const failBeforeOutput = "Fail before answering"

// fakeEpoch is the fake clock's start: timestamps are deterministic.
func fakeEpoch() time.Time { return time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC) }

func newFakeAPI(token string, modelConfigured bool, artBase string) *fakeAPI {
	return &fakeAPI{token: token, modelConfigured: modelConfigured, artBase: artBase, convs: map[string]*fakeConv{}}
}

// server serves the page and the fake API on a 127.0.0.1 httptest server.
func (f *fakeAPI) server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", f.info)
	mux.HandleFunc("POST /api/conversations", f.create)
	mux.HandleFunc("GET /api/conversations", f.list)
	mux.HandleFunc("GET /api/conversations/{id}", f.get)
	mux.HandleFunc("DELETE /api/conversations/{id}", f.delete)
	mux.HandleFunc("POST /api/conversations/{id}/messages", f.messages)
	mux.HandleFunc("GET /api/conversations/{id}/approvals", f.pendingApprovals)
	mux.HandleFunc("POST /api/conversations/{id}/approvals", f.approve)
	mux.HandleFunc("GET /api/tools", f.listTools)
	mux.HandleFunc("POST /api/tools/{name}", f.callTool)
	mux.HandleFunc("GET /api/doctor", f.doctor)
	mux.HandleFunc("POST /api/doctor", f.doctor)
	mux.Handle("/", webui.Handler())
	srv := httptest.NewServer(webui.SecurityHeaders(f.auth(mux)))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeAPI) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.token != "" && strings.HasPrefix(r.URL.Path, "/api/") && r.Header.Get("Authorization") != "Bearer "+f.token {
			apiError(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // test server
}

func (f *fakeAPI) info(w http.ResponseWriter, r *http.Request) {
	var model any = "scripted:fake"
	help := ""
	if !f.modelConfigured {
		model = nil
		help = "Set ANTHROPIC_API_KEY (or OPENAI_API_KEY) and TOOLPORT_MODEL, then restart `toolport serve`."
	}
	defs := f.toolDefinitions()
	offered := []string{}
	for _, d := range defs {
		if d["offered"] == true {
			offered = append(offered, d["name"].(string))
		}
	}
	writeJSON(w, 200, map[string]any{"version": "0.0.0-test", "model": model, "modelConfigured": f.modelConfigured, "modelHelp": help,
		"tools": len(defs), "offeredTools": offered})
}

// newConv adds a conversation; f.mu must be held.
func (f *fakeAPI) newConv(title string) *fakeConv {
	f.seq++
	at := fakeEpoch().Add(time.Duration(f.seq) * time.Minute).Format(time.RFC3339)
	c := &fakeConv{ID: fmt.Sprintf("conv-%04d", f.seq), Title: title, CreatedAt: at, UpdatedAt: at, Messages: []*fakeMessage{}, updated: f.seq}
	f.convs[c.ID] = c
	return c
}

func (f *fakeAPI) touch(c *fakeConv) {
	f.seq++
	c.updated = f.seq
	c.UpdatedAt = fakeEpoch().Add(time.Duration(f.seq) * time.Minute).Format(time.RFC3339)
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Title string `json:"title"`
	}
	json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body) //nolint:errcheck // the body is optional
	f.mu.Lock()
	c := f.newConv(body.Title)
	f.mu.Unlock()
	writeJSON(w, 201, map[string]string{"id": c.ID, "title": c.Title, "createdAt": c.CreatedAt})
}

func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 100 {
		limit = 20
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	f.mu.Lock()
	defer f.mu.Unlock()
	all := make([]*fakeConv, 0, len(f.convs))
	for _, c := range f.convs {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].updated > all[j].updated })
	out := []map[string]string{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		c := all[i]
		out = append(out, map[string]string{"id": c.ID, "title": c.Title, "createdAt": c.CreatedAt, "updatedAt": c.UpdatedAt})
	}
	var next any
	if offset+limit < len(all) {
		next = strconv.Itoa(offset + limit)
	}
	writeJSON(w, 200, map[string]any{"conversations": out, "nextCursor": next})
}

// lockConv locks f and returns the conversation r's path names; when there
// is none, it answers 404 and leaves f unlocked.
func (f *fakeAPI) lockConv(w http.ResponseWriter, r *http.Request) (*fakeConv, bool) {
	f.mu.Lock()
	c, ok := f.convs[r.PathValue("id")]
	if !ok {
		f.mu.Unlock()
		apiError(w, 404, "NOT_FOUND", "no such conversation")
	}
	return c, ok
}

func (f *fakeAPI) get(w http.ResponseWriter, r *http.Request) {
	c, ok := f.lockConv(w, r)
	if !ok {
		return
	}
	defer f.mu.Unlock()
	writeJSON(w, 200, c)
}

func (f *fakeAPI) delete(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.lockConv(w, r); !ok {
		return
	}
	defer f.mu.Unlock()
	delete(f.convs, r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

// step is one move of a scripted turn: an event to send, or a pause.
type step struct {
	ev    map[string]any
	pause time.Duration
}

func ev(kv ...any) step {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return step{ev: m}
}

func pause(d time.Duration) step { return step{pause: d} }

// words streams text as deltas of a few words with a pause between.
func words(text string, gap time.Duration) []step {
	var out []step
	parts := strings.SplitAfter(text, " ")
	for i := 0; i < len(parts); i += 3 {
		out = append(out, ev("type", "text_delta", "content", strings.Join(parts[i:min(i+3, len(parts))], "")), pause(gap))
	}
	return out
}

// matched adds semantic search's "why it matched" line to a track.
func matched(track map[string]any, line string) map[string]any {
	track["matched"] = line
	return track
}

// withFeatures adds the audio features semantic search weighed against a
// mood word ("melancholic": valence) to a track; the third track has none.
func withFeatures(track map[string]any, features string) map[string]any {
	track["matchedFeatures"] = features
	return track
}

func (f *fakeAPI) track(n int, title, artist, album string, dur int, score float64, inLib, indexed bool) map[string]any {
	return map[string]any{
		"isrc": fmt.Sprintf("GBUM7110%04d", n), "title": title, "artist": artist, "album": album,
		"artworkUrl": fmt.Sprintf("%s/art/%d.svg", f.artBase, n), "duration": dur, "score": score,
		"inLibrary": inLib, "isIndexed": indexed,
	}
}

func (f *fakeAPI) script(prompt string) []step {
	var s []step
	switch prompt {
	case DefaultPrompts().Tool:
		s = append(s, words("Let me look through the catalogue for melancholic love songs.", 40*time.Millisecond)...)
		s = append(s, ev("type", "tool_call_start", "toolCallId", "toolu_01", "toolName", "semanticSearch",
			"input", map[string]any{"query": "melancholic love songs", "limit": 3}), pause(900*time.Millisecond))
		result := map[string]any{
			"success": true, "summary": "Found 3 tracks matching 'melancholic love songs'", "durationMs": 842,
			"tracks": []any{
				withFeatures(matched(f.track(1, XSSTitle, "The Escapes", "<b>Onerror</b>", 245, 0.912, true, true), "A <i>markup</i> title over melancholic strings."), "valence 0.12"),
				withFeatures(matched(f.track(2, "Someone Like You", "Adele", "21", 285, 0.874, true, true), "A bittersweet piano ballad about a lost love."), "valence 0.28"),
				matched(f.track(3, "Everybody Hurts", "R.E.M.", "Automatic for the People", 320, 0.831, false, true), "A slow, consoling song about despair."),
			},
		}
		s = append(s, ev("type", "tool_call_end", "toolCallId", "toolu_01", "summary", result["summary"], "resultCount", 3, "durationMs", 842, "result", result))
		s = append(s, words("Here are three songs with that **bittersweet** feel:\n\n"+
			"1. **Someone Like You** by Adele, from *21*\n"+
			"2. **Everybody Hurts** by R.E.M.\n"+
			"3. A track whose title looks like markup: `<img src=x onerror=alert(1)>`\n\n"+
			"| Track | Mood | In library |\n|---|---|:-:|\n| Someone Like You | longing | yes |\n| Everybody Hurts | solace | no |\n\n"+
			"Two are already in your library. [Open Tidal](https://tidal.com/browse) · [not a link](javascript:alert(2)) · <script>alert(3)</script>", 30*time.Millisecond)...)
	case DefaultPrompts().Failing:
		s = append(s, words("I'll search the web for that.", 40*time.Millisecond)...)
		s = append(s, ev("type", "tool_call_start", "toolCallId", "toolu_02", "toolName", "web_search_brave",
			"input", map[string]any{"query": "flaky servers", "count": 5}), pause(400*time.Millisecond),
			ev("type", "tool_call_error", "toolCallId", "toolu_02", "error", "Brave Search rate limit exceeded; try again in a minute.",
				"errorCode", "RATE_LIMIT", "retryable", true, "wasRetried", true, "durationMs", 2013))
		s = append(s, words("The web search failed twice (rate limited), so I can't answer from the web right now.", 30*time.Millisecond)...)
	case DefaultPrompts().Slow:
		s = append(s, words(strings.Repeat("Once upon a time there was a very long story that went on and on. ", 40), 150*time.Millisecond)...)
	case approvalPrompt:
		s = append(s, words("I'll save it to your TIDAL account.", 20*time.Millisecond)...)
		// The last words come with the approval and the end, not after a
		// pause: the frame rendering them is still to come when the page
		// moves the keyboard to the card, which must keep it.
		s = s[:len(s)-1]
		s = append(s, approvalEvent())
		return append(s, ev("type", "message_end", "usage", map[string]int{"inputTokens": 300, "outputTokens": 40}, "stopReason", "approval_required"))
	case twoApprovalsPrompt:
		second := approvalEvent()
		second.ev["toolUseId"] = "toolu_ap2"
		second.ev["arguments"] = map[string]any{"playlistId": "pl-sunny-days"}
		s = append(s, approvalEvent(), second)
		return append(s, ev("type", "message_end", "stopReason", "approval_required"))
	case genericPrompt:
		s = append(s, words("Let me list the files.", 20*time.Millisecond)...)
		s = append(s, ev("type", "tool_call_start", "toolCallId", "toolu_mcp1", "toolName", "files__list_directory",
			"input", map[string]any{"path": "/data"}), pause(100*time.Millisecond))
		s = append(s, ev("type", "tool_call_end", "toolCallId", "toolu_mcp1", "summary", genericResult()["summary"], "durationMs", 12, "result", genericResult()))
		s = append(s, words("There are three files.", 20*time.Millisecond)...)
	case failBeforeOutput:
		s = append(s, ev("type", "error", "code", "MODEL_ERROR", "message", "the model server failed (HTTP 500)", "retryable", true))
		s = append(s, ev("type", "message_end", "stopReason", "error"))
		return s
	case DefaultPrompts().Error:
		s = append(s, words("Let me think about that.", 40*time.Millisecond)...)
		s = append(s, ev("type", "error", "code", "MODEL_ERROR", "message", "The model provider is overloaded (HTTP 529). Try again in a moment.", "retryable", true))
		s = append(s, ev("type", "message_end", "stopReason", "error"))
		return s
	default:
		s = append(s, words("You said: "+prompt, 20*time.Millisecond)...)
	}
	return append(s, ev("type", "message_end", "usage", map[string]int{"inputTokens": 500, "outputTokens": 120}, "stopReason", "end_turn"))
}

// eventStream starts w's answer as an event stream and returns what sends
// one event on it at once.
func eventStream(w http.ResponseWriter) func(map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl := w.(http.Flusher)
	return func(m map[string]any) {
		b, _ := json.Marshal(m)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
}

// messages plays a scripted turn as an event stream and stores the blocks,
// as the real server does (incomplete when the client aborts).
func (f *fakeAPI) messages(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content string `json:"content"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil || body.Content == "" {
		apiError(w, 400, "BAD_REQUEST", "content is required")
		return
	}
	c, ok := f.lockConv(w, r)
	if !ok {
		return
	}
	f.seq++
	userID := fmt.Sprintf("msg-%d", f.seq)
	c.Messages = append(c.Messages, &fakeMessage{ID: userID, Role: "user", CreatedAt: c.UpdatedAt,
		Content: []map[string]any{{"type": "text", "text": body.Content}}})
	if c.Title == "" {
		c.Title = body.Content
	}
	f.seq++
	msg := &fakeMessage{ID: fmt.Sprintf("msg-%d", f.seq), Role: "assistant", CreatedAt: c.UpdatedAt, Content: []map[string]any{}}
	c.Messages = append(c.Messages, msg)
	f.touch(c)
	convID := c.ID
	f.mu.Unlock()

	send := eventStream(w)
	send(map[string]any{"type": "message_start", "messageId": msg.ID, "conversationId": convID, "userMessageId": userID})
	fmt.Fprint(w, ": ping\n\n")
	steps := f.script(body.Content)
	if !f.modelConfigured {
		steps = []step{ev("type", "error", "code", "MODEL_NOT_CONFIGURED", "message", "No model is configured.", "retryable", false),
			ev("type", "message_end", "stopReason", "error")}
	}
	for _, st := range steps {
		if st.pause > 0 {
			select {
			case <-r.Context().Done():
				f.mu.Lock()
				msg.Incomplete = true
				f.canceled++
				f.mu.Unlock()
				return
			case <-time.After(st.pause):
			}
			continue
		}
		f.store(msg, st.ev)
		if st.ev["type"] == "approval_required" {
			f.mu.Lock()
			c.pending = append(c.pending, st.ev)
			f.mu.Unlock()
		}
		send(st.ev)
	}
}

// store records an event in the assistant message's blocks.
func (f *fakeAPI) store(msg *fakeMessage, e map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch e["type"] {
	case "text_delta":
		if n := len(msg.Content); n > 0 && msg.Content[n-1]["type"] == "text" {
			msg.Content[n-1]["text"] = msg.Content[n-1]["text"].(string) + e["content"].(string)
		} else {
			msg.Content = append(msg.Content, map[string]any{"type": "text", "text": e["content"]})
		}
	case "approval_required":
		// The real server stores the waiting call's tool_use block.
		msg.Content = append(msg.Content, map[string]any{"type": "tool_use", "id": e["toolUseId"], "name": e["tool"], "input": e["arguments"]})
	case "tool_call_start":
		for _, b := range msg.Content {
			if b["type"] == "tool_use" && b["id"] == e["toolCallId"] {
				return // a resumed call's block is stored already
			}
		}
		msg.Content = append(msg.Content, map[string]any{"type": "tool_use", "id": e["toolCallId"], "name": e["toolName"], "input": e["input"]})
	case "tool_call_end":
		msg.Content = append(msg.Content, map[string]any{"type": "tool_result", "tool_use_id": e["toolCallId"], "content": e["result"]})
	case "tool_call_error":
		msg.Content = append(msg.Content, map[string]any{"type": "tool_result", "tool_use_id": e["toolCallId"], "is_error": true,
			"content": map[string]any{"success": false, "error": e["error"], "error_code": e["errorCode"], "retryable": e["retryable"],
				"wasRetried": e["wasRetried"], "durationMs": e["durationMs"]}})
	case "error":
		// The real server stores a failed turn's error with the message.
		msg.Error = map[string]any{"code": e["code"], "message": e["message"]}
	case "message_end":
		if u, ok := e["usage"].(map[string]int); ok {
			msg.Usage = map[string]any{"inputTokens": u["inputTokens"], "outputTokens": u["outputTokens"]}
		}
		if e["stopReason"] == "error" || e["stopReason"] == "canceled" {
			msg.Incomplete = true
		}
	}
}
