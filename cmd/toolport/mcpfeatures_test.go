package main_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/playlist"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// TestMCPPromptsAndResourcesOverStdio runs `toolport mcp` as a host would and
// checks what it shows besides tools: icons and titles on every real tool,
// the packs' prompts, completions from the configured portal, and a stored
// playlist as resources.
func TestMCPPromptsAndResourcesOverStdio(t *testing.T) {
	ckanSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/3/action/organization_list" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"success":true,"result":["ministry-of-health","ministry-of-transport","tel-aviv"]}`))
	}))
	t.Cleanup(ckanSrv.Close)
	dsn := filepath.Join(t.TempDir(), "toolport.db")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreatePlaylist(ctx, store.Playlist{Title: "Rainy day", Items: []store.PlaylistItem{
		{TidalID: "251380837", ISRC: "USRC17607839", Title: "Hunter", Artist: "Björk", Duration: 255}}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CKAN_BASE_URL": ckanSrv.URL, "TOOLPORT_DATABASE_URL": dsn, "TOOLPORT_FETCH_ALLOW_PRIVATE": "1"}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport-e2e", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(t, env)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Title == "" || len(tl.Icons) == 0 || !strings.HasPrefix(tl.Icons[0].Source, "data:image/svg+xml;base64,") {
			t.Errorf("%s: title %q, icons %v; hosts show both", tl.Name, tl.Title, tl.Icons)
		}
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"discover_music", "explore_open_data", "web_research"}) {
		t.Errorf("prompts %v", names)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "explore_open_data"},
		Argument: mcp.CompleteParamsArgument{Name: "organization", Value: "ministry"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.Completion.Values; !slices.Equal(got, []string{"ministry-of-health", "ministry-of-transport"}) {
		t.Errorf("organization completions %v", got)
	}
	comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "discover_music"},
		Argument: mcp.CompleteParamsArgument{Name: "mood", Value: "melan"}})
	if err != nil || !slices.Contains(comp.Completion.Values, "melancholic") {
		t.Errorf("mood completions %v, %v", comp, err)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uri := "toolport://playlist/" + p.ID + ".m3u8"
	if !slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == uri && r.Title == "Rainy day (M3U8)" }) {
		t.Errorf("resources %v lack %s", res.Resources, uri)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if want := string(playlist.M3U8(p)); len(read.Contents) != 1 || read.Contents[0].Text != want {
		t.Errorf("read %s: %+v, want\n%s", uri, read.Contents, want)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ckan://evil.example.com/dataset/x"}); err == nil ||
		!strings.Contains(err.Error(), "not configured") {
		t.Errorf("a portal that is not configured: %v", err)
	}
}
