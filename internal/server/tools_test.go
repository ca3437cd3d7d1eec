package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/tool"
)

// GET /api/tools names each tool's pack beside its MCP definition, so that
// the page can group the tools by pack.
func TestToolListNamesPacks(t *testing.T) {
	reg := tool.NewRegistry()
	echo := func(ctx context.Context, in queryIn) (itemsOut, error) {
		return itemsOut{Items: []string{in.Query}}, nil
	}
	if err := reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "songs", Title: "Songs", Description: "Finds songs.", Pack: "music"}, echo)),
		tool.Must(tool.New(tool.Spec{Name: "pages", Description: "Finds pages.", Pack: "web"}, echo)),
		tool.Must(tool.New(tool.Spec{Name: "loose", Description: "Belongs to no pack."}, echo)),
	); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{reg: reg, noModel: true})
	status, body := e.do(t, "GET", "/api/tools", "")
	if status != 200 {
		t.Fatalf("GET /api/tools: %d %s", status, body)
	}
	var got struct {
		Tools []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Pack        *string         `json:"pack"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	want := []struct{ name, pack string }{{"songs", "music"}, {"pages", "web"}, {"loose", ""}}
	if len(got.Tools) != len(want) {
		t.Fatalf("%d tools, want %d:\n%s", len(got.Tools), len(want), body)
	}
	for i, w := range want {
		g := got.Tools[i]
		if g.Name != w.name || g.Pack == nil || *g.Pack != w.pack {
			t.Errorf("tool %d = %s in pack %v, want %s in pack %q", i, g.Name, g.Pack, w.name, w.pack)
		}
		if len(g.InputSchema) == 0 {
			t.Errorf("tool %s has no inputSchema", g.Name)
		}
	}
	if got.Tools[0].Title != "Songs" {
		t.Errorf("the MCP definition's title was lost: %q", got.Tools[0].Title)
	}
}
