package server_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/tool"
)

type storedOut struct {
	ID string `json:"id"`
}

func (o storedOut) Summary() string { return "stored " + o.ID }

// TestMCPResourcesOfTheChatServer checks /mcp's resources: the server's
// conversations as their Markdown export and the stored playlists, and that a
// playlist a chat turn stores is announced to MCP clients.
func TestMCPResourcesOfTheChatServer(t *testing.T) {
	var db *sqlstore.DB
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "storePlaylist", Title: "Store", Description: "Stores a playlist.", Pack: "music"},
		func(ctx context.Context, in queryIn) (storedOut, error) {
			p, err := db.CreatePlaylist(ctx, store.Playlist{Title: in.Query})
			return storedOut{ID: p.ID}, err
		})))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{token: "tok-123456", reg: reg, turns: []servertest.Turn{
		{Match: "playlist", Events: []servertest.Event{servertest.Call("call_1", "storePlaylist", `{"query":"Rainy day"}`)}},
		{Match: "playlist", Step: 1, Events: []servertest.Event{servertest.Text("Stored.")}},
	}, config: func(c *server.Config) { c.Playlists = c.Store.(*sqlstore.DB) }})
	db = e.db

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "server-test", Version: "v0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{"tok-123456"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	uris := func() []string {
		t.Helper()
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	if got := uris(); len(got) != 0 {
		t.Errorf("an empty store lists %v", got)
	}

	conv := e.newConversation(t)
	if s := e.chat(t, ctx, conv, "make me a playlist", nil); s.first("message_end") == nil {
		t.Fatalf("chat stream: %v", s.types())
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/resources/list_changed after a chat turn stored a playlist")
	}
	page, err := db.ListPlaylists(ctx, store.ListOptions{})
	if err != nil || len(page.Playlists) != 1 {
		t.Fatalf("playlists %v, %v", page, err)
	}
	got := uris()
	for _, want := range []string{"toolport://playlist/" + page.Playlists[0].ID + ".json", "toolport://conversation/" + conv + ".md"} {
		if !slices.Contains(got, want) {
			t.Errorf("resources %v lack %s", got, want)
		}
	}
	code, export := e.do(t, "GET", "/api/conversations/"+conv+"/export", "")
	if code != http.StatusOK {
		t.Fatalf("export: %d", code)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolport://conversation/" + conv + ".md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 || read.Contents[0].Text != string(export) || read.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("conversation resource %+v, want the export:\n%s", read.Contents, export)
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPConversationListChanges: making, renaming or deleting a
// conversation changes /mcp's resource list, and its clients are told.
func TestMCPConversationListChanges(t *testing.T) {
	e := newEnv(t, envOptions{token: "tok-123456"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "server-test", Version: "v0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{"tok-123456"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListResources(ctx, nil); err != nil { // the session's first listing
		t.Fatal(err)
	}
	await := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no notifications/resources/list_changed after %s", what)
		}
	}
	conv := e.newConversation(t)
	await("a conversation was made")
	if code, body := e.do(t, "PATCH", "/api/conversations/"+conv, `{"title":"Renamed"}`); code != http.StatusOK {
		t.Fatalf("rename: %d %s", code, body)
	}
	await("a conversation was renamed")
	if code, body := e.do(t, "DELETE", "/api/conversations/"+conv, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, body)
	}
	await("a conversation was deleted")
}
