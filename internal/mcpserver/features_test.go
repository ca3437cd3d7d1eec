package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/agent/about"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/playlist"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// packFixture is a registry with a tool in each of Toolport's packs and the
// backends the prompts, completions and resources use, all in memory.
type packFixture struct {
	reg       *tool.Registry
	playlists *fakePlaylists
	convs     *fakeConversations
	ckan      *fakeCatalog
	changes   *mcpserver.Changes
	saved     atomic.Int32 // calls of the account-writing tool that ran
}

type nameIn struct {
	Name string `json:"name" schema:"minLength=1,maxLength=100"`
}

type nameOut struct {
	Name string `json:"name"`
}

func (o nameOut) Summary() string { return o.Name }

func newPackFixture(t testing.TB) *packFixture {
	t.Helper()
	f := &packFixture{
		playlists: &fakePlaylists{byID: map[string]store.Playlist{}},
		convs:     &fakeConversations{md: map[string]string{"c1": "# Rainy day\n\n**You:** something calm\n", "untitled": "# New\n"}},
		ckan: &fakeCatalog{
			portals: []string{"data.gov.il", "open.example.org", "127.0.0.1:5000"},
			orgs: map[string][]string{
				"":                 {"ministry-of-health", "ministry-of-transport", "central-bureau-of-statistics"},
				"data.gov.il":      {"ministry-of-health", "ministry-of-transport", "central-bureau-of-statistics"},
				"open.example.org": {"city-of-example"},
			},
			groups: map[string][]string{"": {"public-health", "health", "transport"}},
		},
		changes: &mcpserver.Changes{},
	}
	f.playlists.put(store.Playlist{ID: "p1", Title: "Rainy day", Description: "2 tracks", Items: []store.PlaylistItem{
		{TidalID: "251380837", ISRC: "USRC17607839", Title: "Hunter", Artist: "Björk", Album: "Homogenic", Duration: 255.4},
		{TidalID: "77", Title: "Second", Artist: "Someone", Duration: 100},
	}})
	f.reg = tool.NewRegistry(tool.WithRetryDelay(0))
	err := f.reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "semanticSearch", Title: "Semantic track search", Description: "Searches tracks.", Pack: "music",
			Annotations: tool.Annotations{ReadOnly: true}},
			func(ctx context.Context, in nameIn) (nameOut, error) { return nameOut(in), nil })),
		tool.Must(tool.New(tool.Spec{Name: "suggestPlaylist", Title: "Suggest a playlist", Description: "Stores a playlist.", Pack: "music",
			Annotations: tool.Annotations{OpenWorld: true}},
			func(ctx context.Context, in nameIn) (nameOut, error) {
				f.playlists.put(store.Playlist{ID: "new-" + in.Name, Title: in.Name})
				return nameOut(in), nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "savePlaylistToTidal", Title: "Save a playlist to Tidal", Description: "Writes to the account.", Pack: "music",
			Annotations: tool.Annotations{OpenWorld: true, Idempotent: true, UserAccount: true}},
			func(ctx context.Context, in nameIn) (nameOut, error) {
				f.saved.Add(1)
				return nameOut(in), nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "searchDatasets", Title: "Search open datasets (CKAN)", Description: "Finds datasets.", Pack: "ckan",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true}},
			func(ctx context.Context, in nameIn) (nameOut, error) { return nameOut(in), nil })),
		tool.Must(tool.New(tool.Spec{Name: "web_fetch", Title: "Web fetch", Description: "Fetches a page.", Pack: "web",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true}},
			func(ctx context.Context, in nameIn) (nameOut, error) { return nameOut(in), nil })),
	)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// options are the server options with every backend.
func (f *packFixture) options() mcpserver.Options {
	return mcpserver.Options{Playlists: f.playlists, Conversations: f.convs, CKAN: f.ckan,
		Moods: []string{"calm", "melancholic", "melancholy", "mellow", "sad"}, Changes: f.changes}
}

// inMemory connects a client to a new server over the SDK's in-memory
// transports, asking for protocol version (the SDK's newest when "").
func (f *packFixture) inMemory(t testing.TB, opts mcpserver.Options, version string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(f.reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "features-test", Version: "v0"}, copts).
		Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// versions are the protocol eras that deliver notifications and elicitation
// differently: the newest (subscriptions/listen, input requests) and the
// last before it (session notifications, elicitation/create).
var versions = []string{"", "2025-11-25"}

func TestPromptsFollowExposedPacks(t *testing.T) {
	f := newPackFixture(t)
	cases := []struct {
		packs []string
		want  []string
	}{
		{nil, []string{"discover_music", "explore_open_data", "web_research"}},
		{[]string{"web"}, []string{"web_research"}},
		{[]string{"music", "ckan"}, []string{"discover_music", "explore_open_data"}},
	}
	for _, c := range cases {
		cs := f.inMemory(t, mcpserver.Options{Packs: c.packs}, "", nil)
		res, err := cs.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range res.Prompts {
			names = append(names, p.Name)
			if p.Title == "" || p.Description == "" || len(p.Icons) == 0 {
				t.Errorf("prompt %s lacks a title, description or icon: %+v", p.Name, p)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, c.want) {
			t.Errorf("packs %v: prompts %v, want %v", c.packs, names, c.want)
		}
	}
}

func TestGetPromptUsesTheChatsInstructions(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, mcpserver.Options{}, "", nil)
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "discover_music",
		Arguments: map[string]string{"request": "songs for a rainy Sunday", "mood": "melancholic"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages %+v, want one user message", res.Messages)
	}
	text := res.Messages[0].Content.(*mcp.TextContent).Text
	for _, want := range []string{about.Pack("music"), "songs for a rainy Sunday", "Mood: melancholic",
		"semanticSearch, suggestPlaylist, savePlaylistToTidal", about.ToolResults} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt text lacks %q:\n%s", want, text)
		}
	}
	// Only the exposed tools are named.
	cs = f.inMemory(t, mcpserver.Options{Tools: []string{"searchDatasets"}}, "", nil)
	res, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "explore_open_data",
		Arguments: map[string]string{"question": "hospital beds per city", "organization": "ministry-of-health"}})
	if err != nil {
		t.Fatal(err)
	}
	text = res.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, "Use only these tools: searchDatasets.") || !strings.Contains(text, "ministry-of-health") ||
		!strings.Contains(text, about.Pack("ckan")) {
		t.Errorf("explore_open_data text:\n%s", text)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "explore_open_data",
		Arguments: map[string]string{"question": "  "}}); err == nil || !strings.Contains(err.Error(), "question") {
		t.Errorf("a blank required argument: err = %v, want one naming it", err)
	}
}

func TestCompletions(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, f.options(), "", nil)
	if init := cs.InitializeResult(); init.Capabilities.Completions == nil {
		t.Errorf("completions capability not announced")
	}
	complete := func(ref *mcp.CompleteReference, arg, value string, ctxArgs map[string]string) mcp.CompletionResultDetails {
		t.Helper()
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if ctxArgs != nil {
			p.Context = &mcp.CompleteContext{Arguments: ctxArgs}
		}
		res, err := cs.Complete(context.Background(), p)
		if err != nil {
			t.Fatalf("complete %s/%s: %v", ref.Name, arg, err)
		}
		return res.Completion
	}
	music := &mcp.CompleteReference{Type: "ref/prompt", Name: "discover_music"}
	data := &mcp.CompleteReference{Type: "ref/prompt", Name: "explore_open_data"}
	if got := complete(music, "mood", "MEL", nil).Values; !slices.Equal(got, []string{"melancholic", "melancholy", "mellow"}) {
		t.Errorf("mood MEL: %v", got)
	}
	if got := complete(music, "request", "mel", nil).Values; len(got) != 0 {
		t.Errorf("free text got completions %v", got)
	}
	// Prefix matches come before matches inside a name.
	if got := complete(data, "organization", "TRANS", nil).Values; !slices.Equal(got, []string{"ministry-of-transport"}) {
		t.Errorf("organization TRANS: %v", got)
	}
	if got := complete(data, "group", "he", nil).Values; !slices.Equal(got, []string{"health", "public-health"}) {
		t.Errorf("group he: %v, want the prefix match first", got)
	}
	// The portal chosen earlier in the form selects the portal asked.
	if got := complete(data, "organization", "", map[string]string{"portal": "open.example.org"}).Values; !slices.Equal(got, []string{"city-of-example"}) {
		t.Errorf("organization on open.example.org: %v", got)
	}
	if got := f.ckan.asked(); !slices.Contains(got, "orgs@open.example.org") {
		t.Errorf("catalog calls %v, want one for open.example.org", got)
	}
	tmpl := &mcp.CompleteReference{Type: "ref/resource", URI: "ckan://{+portal}/dataset/{name}"}
	if got := complete(tmpl, "portal", "open", nil).Values; !slices.Equal(got, []string{"open.example.org"}) {
		t.Errorf("template portal open: %v", got)
	}
	// A portal that fails costs its suggestions, not an error.
	f.ckan.fail.Store(true)
	if got := complete(data, "group", "", nil); len(got.Values) != 0 {
		t.Errorf("failing catalog: %v", got.Values)
	}
}

func TestCompletionsAreBounded(t *testing.T) {
	f := newPackFixture(t)
	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("org-%03d", i))
	}
	f.ckan.orgs[""] = many
	cs := f.inMemory(t, f.options(), "", nil)
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "explore_open_data"},
		Argument: mcp.CompleteParamsArgument{Name: "organization", Value: "org-"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Completion; len(c.Values) != 100 || c.Total != 250 || !c.HasMore || c.Values[0] != "org-000" {
		t.Errorf("completion: %d values from %q, total %d, hasMore %v; want 100 of 250 and more", len(c.Values), c.Values[0], c.Total, c.HasMore)
	}
}

func TestResources(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, f.options(), "", nil)
	ctx := context.Background()
	tr, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, rt := range tr.ResourceTemplates {
		templates = append(templates, rt.URITemplate)
	}
	slices.Sort(templates)
	want := []string{"ckan://{+portal}/dataset/{name}", "toolport://conversation/{id}.md",
		"toolport://playlist/{id}.json", "toolport://playlist/{id}.m3u8"}
	if !slices.Equal(templates, want) {
		t.Errorf("templates %v, want %v", templates, want)
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Resource{}
	for _, r := range lr.Resources {
		listed[r.URI] = r
	}
	for uri, mime := range map[string]string{
		"toolport://playlist/p1.json": "application/json", "toolport://playlist/p1.m3u8": "audio/x-mpegurl",
		"toolport://conversation/c1.md": "text/markdown",
	} {
		r, ok := listed[uri]
		if !ok {
			t.Errorf("%s not listed (listed: %v)", uri, lr.Resources)
			continue
		}
		if r.MIMEType != mime || r.Title == "" {
			t.Errorf("%s: %+v, want MIME type %s and a title", uri, r, mime)
		}
	}
	for uri, title := range map[string]string{"toolport://conversation/c1.md": "Rainy day (Markdown)",
		"toolport://conversation/untitled.md": "Untitled conversation (Markdown)", "toolport://playlist/p1.json": "Rainy day (JSON)"} {
		if r := listed[uri]; r == nil || r.Title != title {
			t.Errorf("%s: %+v, want the title %q", uri, r, title)
		}
	}
	p, _ := f.playlists.GetPlaylist(ctx, "p1")
	for _, format := range []string{playlist.FormatJSON, playlist.FormatM3U8} {
		body, err := playlist.Export(p, format)
		if err != nil {
			t.Fatal(err)
		}
		if got := readText(t, cs, "toolport://playlist/p1."+format); got != string(body) {
			t.Errorf("%s read:\n%s\nwant the export:\n%s", format, got, body)
		}
	}
	if got := readText(t, cs, "toolport://conversation/c1.md"); got != f.convs.md["c1"] {
		t.Errorf("conversation read %q", got)
	}
	if got := readText(t, cs, "ckan://data.gov.il/dataset/hospital-beds"); !strings.Contains(got, `"name":"hospital-beds"`) {
		t.Errorf("dataset read %q", got)
	}
	if got := readText(t, cs, "ckan://open.example.org/dataset/parks"); !strings.Contains(got, `"portal":"open.example.org"`) {
		t.Errorf("dataset on the second portal read %q", got)
	}
	// A portal with a port, as a local CKAN has.
	if got := readText(t, cs, "ckan://127.0.0.1:5000/dataset/parks"); !strings.Contains(got, `"portal":"127.0.0.1:5000"`) {
		t.Errorf("dataset on a portal with a port read %q", got)
	}
	// Not found is -32602 with "Resource not found" (MCP 2025-11-25); a portal
	// Toolport is not configured for is the same code saying so.
	for uri, msg := range map[string]string{
		"toolport://playlist/nope.json":        "Resource not found",
		"toolport://conversation/nope.md":      "Resource not found",
		"toolport://playlist/p1.txt":           "Resource not found",
		"ckan://data.gov.il/dataset/missing":   "Resource not found",
		"ckan://evil.example.com/dataset/x":    "portal evil.example.com is not configured",
		"ckan://data.gov.il/organization/x":    "Resource not found",
		"ckan://data.gov.il/x/dataset/y":       "Resource not found",
		"toolport://playlist/..%2Fetc%2F.json": "Resource not found",
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != msg {
			t.Errorf("read %s: err %v, want code %d and %q", uri, err, jsonrpc.CodeInvalidParams, msg)
		}
	}
}

func readText(t testing.TB, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0].Text
}

func TestResourcesOnlyWithBackends(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, mcpserver.Options{Packs: []string{"web"}}, "", nil)
	init := cs.InitializeResult()
	if init.Capabilities.Resources != nil || init.Capabilities.Completions != nil {
		t.Errorf("capabilities %+v announce resources or completions without backends", init.Capabilities)
	}
}

func TestListChangedOnNewPlaylist(t *testing.T) {
	for _, v := range versions {
		t.Run("version="+v, func(t *testing.T) {
			f := newPackFixture(t)
			changed := make(chan struct{}, 10)
			cs := f.inMemory(t, f.options(), v, &mcp.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
			})
			ctx := context.Background()
			waitChanged := func(what string) {
				t.Helper()
				select {
				case <-changed:
				case <-time.After(waitLimit):
					t.Fatalf("no notifications/resources/list_changed after %s", what)
				}
			}
			listed := func() []string {
				t.Helper()
				res, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				return uris
			}
			listed()
			waitChanged("the first listing") // the first listing fills the list from the stores
			// A read-only call cannot have stored anything: the stores are not
			// listed again (the store counts its listings).
			before := f.playlists.lists.Load()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "semanticSearch", Arguments: map[string]any{"name": "x"}}); err != nil {
				t.Fatal(err)
			}
			if n := f.playlists.lists.Load(); n != before {
				t.Errorf("a read-only call listed the playlists %d times", n-before)
			}
			// suggestPlaylist through MCP stores a playlist.
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "suggestPlaylist", Arguments: map[string]any{"name": "mcp"}}); err != nil || res.IsError {
				t.Fatalf("suggestPlaylist: %v %v", err, res)
			}
			waitChanged("suggestPlaylist")
			if got := listed(); !slices.Contains(got, "toolport://playlist/new-mcp.m3u8") {
				t.Errorf("after suggestPlaylist, listed %v", got)
			}
			// A playlist stored elsewhere (a chat turn) is announced on Changed.
			f.playlists.put(store.Playlist{ID: "from-chat", Title: "From the chat"})
			f.changes.Changed()
			waitChanged("Changes.Changed")
			if got := listed(); !slices.Contains(got, "toolport://playlist/from-chat.json") {
				t.Errorf("after Changed, listed %v", got)
			}
		})
	}
}

func TestIconsInListings(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, f.options(), "", nil)
	if info := cs.InitializeResult().ServerInfo; len(info.Icons) == 0 {
		t.Errorf("server info has no icon")
	} else {
		checkIcon(t, "server", info.Icons[0])
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byPack := map[string]string{}
	for _, tl := range res.Tools {
		if len(tl.Icons) != 1 || tl.Title == "" {
			t.Errorf("tool %s: icons %v, title %q", tl.Name, tl.Icons, tl.Title)
			continue
		}
		checkIcon(t, tl.Name, tl.Icons[0])
		rt, _ := f.reg.Lookup(tl.Name)
		pack := rt.Spec().Pack
		if prev, ok := byPack[pack]; ok && prev != tl.Icons[0].Source {
			t.Errorf("tools of pack %s have different icons", pack)
		}
		byPack[pack] = tl.Icons[0].Source
	}
	if byPack["music"] == byPack["web"] || byPack["web"] == byPack["ckan"] {
		t.Errorf("packs share an icon")
	}
}

func checkIcon(t *testing.T, what string, ic mcp.Icon) {
	t.Helper()
	data, ok := strings.CutPrefix(ic.Source, "data:image/svg+xml;base64,")
	if !ok || ic.MIMEType != "image/svg+xml" || !slices.Equal(ic.Sizes, []string{"any"}) {
		t.Errorf("%s: icon %+v, want an SVG data: URI of any size", what, ic)
		return
	}
	svg, err := base64.StdEncoding.DecodeString(data)
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "</svg>") {
		t.Errorf("%s: icon is not an SVG document (%v): %.80q", what, err, svg)
	}
}

func TestElicitationBeforeAccountWrites(t *testing.T) {
	type answer struct {
		action  string
		confirm any
	}
	cases := []struct {
		name    string
		answer  *answer // nil: the client has no elicitation capability
		wantRun bool
	}{
		{"accept", &answer{"accept", true}, true},
		{"accept-unchecked", &answer{"accept", false}, false},
		{"decline", &answer{"decline", nil}, false},
		{"cancel", &answer{"cancel", nil}, false},
		{"unsupported", nil, true},
	}
	for _, v := range versions {
		for _, c := range cases {
			t.Run(c.name+"/version="+v, func(t *testing.T) {
				f := newPackFixture(t)
				var asked atomic.Int32
				var message string
				copts := &mcp.ClientOptions{}
				if c.answer != nil {
					copts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						message = req.Params.Message
						res := &mcp.ElicitResult{Action: c.answer.action}
						if c.answer.action == "accept" {
							res.Content = map[string]any{"confirm": c.answer.confirm}
						}
						return res, nil
					}
				}
				cs := f.inMemory(t, mcpserver.Options{}, v, copts)
				ctx := context.Background()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "savePlaylistToTidal", Arguments: map[string]any{"name": "p1"}})
				if err != nil {
					t.Fatal(err)
				}
				if ran := f.saved.Load() == 1; ran != c.wantRun {
					t.Errorf("tool ran: %v, want %v (result %v)", ran, c.wantRun, texts(res))
				}
				if wantAsked := c.answer != nil; (asked.Load() == 1) != wantAsked {
					t.Errorf("asked %d times, want asked: %v", asked.Load(), wantAsked)
				}
				if c.answer != nil && (!strings.Contains(message, "savePlaylistToTidal") || !strings.Contains(message, `"name":"p1"`)) {
					t.Errorf("the question does not say what will run: %q", message)
				}
				if c.wantRun {
					if res.IsError {
						t.Errorf("result is an error: %v", texts(res))
					}
					return
				}
				var env struct {
					Success   bool   `json:"success"`
					Code      string `json:"error_code"`
					Retryable bool   `json:"retryable"`
				}
				tx := texts(res)
				if !res.IsError || res.StructuredContent != nil || len(tx) != 2 || json.Unmarshal([]byte(tx[1]), &env) != nil ||
					env.Success || env.Code != mcpserver.CodeDeclined || env.Retryable || !strings.Contains(tx[0], "user declined") {
					t.Errorf("declined result %+v %v, want a USER_DECLINED envelope saying so", res, tx)
				}
				// Read-only tools are never confirmed.
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "semanticSearch", Arguments: map[string]any{"name": "x"}}); err != nil {
					t.Fatal(err)
				}
				if asked.Load() > 1 {
					t.Errorf("a read-only tool asked for confirmation")
				}
			})
		}
	}
}

// ---- fakes

type fakePlaylists struct {
	fail  atomic.Bool // ListPlaylists fails
	mu    sync.Mutex
	byID  map[string]store.Playlist
	order []string // oldest first
	lists atomic.Int32
}

func (s *fakePlaylists) put(p store.Playlist) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[p.ID] = p
	s.order = append(s.order, p.ID)
}

func (s *fakePlaylists) GetPlaylist(_ context.Context, id string) (store.Playlist, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byID[id]
	if !ok {
		return store.Playlist{}, store.ErrNotFound
	}
	return p, nil
}

func (s *fakePlaylists) ListPlaylists(_ context.Context, opt store.ListOptions) (store.PlaylistPage, error) {
	s.lists.Add(1)
	if s.fail.Load() {
		return store.PlaylistPage{}, errors.New("database restarting")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	limit, _ := opt.Bounds()
	var page store.PlaylistPage
	for i := len(s.order) - 1; i >= 0 && len(page.Playlists) < limit; i-- {
		page.Playlists = append(page.Playlists, s.byID[s.order[i]])
	}
	page.Total = len(s.order)
	return page, nil
}

type fakeConversations struct{ md map[string]string }

func (c *fakeConversations) RecentConversations(_ context.Context, limit int) ([]mcpserver.ConversationInfo, error) {
	var out []mcpserver.ConversationInfo
	for id := range c.md {
		title := "Rainy day"
		if id == "untitled" {
			title = ""
		}
		out = append(out, mcpserver.ConversationInfo{ID: id, Title: title})
	}
	return out[:min(limit, len(out))], nil
}

func (c *fakeConversations) ExportMarkdown(_ context.Context, id string) (string, error) {
	md, ok := c.md[id]
	if !ok {
		return "", store.ErrNotFound
	}
	return md, nil
}

type fakeCatalog struct {
	portals []string
	orgs    map[string][]string
	groups  map[string][]string
	fail    atomic.Bool

	mu    sync.Mutex
	calls []string
}

func (c *fakeCatalog) asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

func (c *fakeCatalog) Portals() []string { return c.portals }

func (c *fakeCatalog) names(kind, portal string, m map[string][]string) ([]string, error) {
	c.mu.Lock()
	c.calls = append(c.calls, kind+"@"+portal)
	c.mu.Unlock()
	if c.fail.Load() {
		return nil, errors.New("portal down")
	}
	return m[portal], nil
}

func (c *fakeCatalog) Organizations(_ context.Context, portal string) ([]string, error) {
	return c.names("orgs", portal, c.orgs)
}

func (c *fakeCatalog) Groups(_ context.Context, portal string) ([]string, error) {
	return c.names("groups", portal, c.groups)
}

func (c *fakeCatalog) Dataset(_ context.Context, portal, name string) ([]byte, string, error) {
	if !slices.Contains(c.portals, portal) {
		return nil, "", &tool.Error{Code: tool.CodeBlocked, Message: "portal " + portal + " is not configured"}
	}
	if name == "missing" {
		return nil, "", &tool.Error{Code: tool.CodeNotFound, Message: "no dataset " + name}
	}
	b, err := json.Marshal(map[string]string{"name": name, "portal": portal})
	return b, name, err
}

// The confirmation and the change notification also work over the
// transports Toolport serves (stdio, streamable HTTP in both eras).
func TestElicitationAndListChangedOverTransports(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newPackFixture(t)
			srv, err := mcpserver.New(f.reg, f.options())
			if err != nil {
				t.Fatal(err)
			}
			changed := make(chan struct{}, 10)
			cs := connect(t, tr, srv, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				},
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
			})
			ctx := context.Background()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "savePlaylistToTidal", Arguments: map[string]any{"name": "p1"}})
			if err != nil || res.IsError || f.saved.Load() != 1 {
				t.Fatalf("confirmed call: %v %v, ran %d times", err, res, f.saved.Load())
			}
			wait := func(what string) {
				t.Helper()
				select {
				case <-changed:
				case <-time.After(waitLimit):
					t.Fatalf("no notifications/resources/list_changed after %s", what)
				}
			}
			wait("the first writing call") // it listed the stores for the first time
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "suggestPlaylist", Arguments: map[string]any{"name": "t"}}); err != nil || res.IsError {
				t.Fatalf("suggestPlaylist: %v %v", err, res)
			}
			wait("suggestPlaylist")
			lr, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(lr.Resources, func(r *mcp.Resource) bool { return r.URI == "toolport://playlist/new-t.json" }) {
				t.Errorf("the new playlist is not listed: %v", lr.Resources)
			}
		})
	}
}

// A store that fails leaves its resources listed as they were.
func TestResourcesSurviveAFailingStore(t *testing.T) {
	f := newPackFixture(t)
	cs := f.inMemory(t, f.options(), "", nil)
	list := func() []string {
		t.Helper()
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		return uris
	}
	before := list()
	if !slices.Contains(before, "toolport://playlist/p1.json") {
		t.Fatalf("listed %v", before)
	}
	f.playlists.fail.Store(true)
	if after := list(); !slices.Equal(after, before) {
		t.Errorf("with the store failing, listed %v, want %v", after, before)
	}
}
