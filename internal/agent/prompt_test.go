package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/agent/about"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/tool"
)

type attachedOut struct{ Text string }

func (o attachedOut) Summary() string { return o.Text }

// attachedTools declares n tools of an attached MCP server, named the way
// internal/mcphost names them.
func attachedTools(t *testing.T, server string, from, n int) []*tool.Tool {
	t.Helper()
	var out []*tool.Tool
	for i := from; i < from+n; i++ {
		name := fmt.Sprintf("%s__remote_tool_number_%d", server, i)
		tl, err := tool.NewRaw(tool.Spec{Name: name, Description: "A tool of " + server + ".", Pack: about.AttachedPack},
			json.RawMessage(`{"type":"object"}`), func(context.Context, json.RawMessage) (attachedOut, error) {
				return attachedOut{Text: "ok"}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl)
	}
	return out
}

// The system prompt names each attached MCP server and its tool count, not
// every tool: forty attached tools cost the prompt one short line.
func TestSystemPromptNamesAttachedServers(t *testing.T) {
	base := agent.SystemPrompt(newTools(t).reg)
	ts := newTools(t)
	if err := ts.reg.Register(append(attachedTools(t, "fs", 0, 30), attachedTools(t, "everything", 0, 10)...)...); err != nil {
		t.Fatal(err)
	}
	p := agent.SystemPrompt(ts.reg)
	for _, s := range []string{"Servers (tools): everything (10), fs (30).", "<server>__<tool>", "lookup", "calculateTip"} {
		if !strings.Contains(p, s) {
			t.Errorf("system prompt lacks %q:\n%s", s, p)
		}
	}
	if strings.Contains(p, "remote_tool_number") {
		t.Errorf("system prompt lists attached tools one by one:\n%s", p)
	}
	// One line of pack description plus ~15 bytes a server, whatever the
	// tool count.
	const maxGrowth = 300
	if grew := len(p) - len(base); grew <= 0 || grew > maxGrowth {
		t.Errorf("40 attached tools on 2 servers grew the prompt by %d bytes, want 1..%d:\n%s", grew, maxGrowth, p)
	}
	t.Logf("prompt %d bytes without attached servers, %d with 2 servers of 40 tools", len(base), len(p))
}

// A server's list_changed (tools registered or removed between turns)
// reaches the next request's system prompt with its tool definitions; a
// configured prompt stays as given.
func TestSystemPromptFollowsAttachedToolChanges(t *testing.T) {
	for _, custom := range []string{"", "You are a test."} {
		t.Run(fmt.Sprintf("System=%q", custom), func(t *testing.T) {
			ts := newTools(t)
			if err := ts.reg.Register(attachedTools(t, "tp", 0, 2)...); err != nil {
				t.Fatal(err)
			}
			db := openStore(t, storetest.SQLite)
			conv, err := db.CreateConversation(t.Context(), store.Conversation{})
			if err != nil {
				t.Fatal(err)
			}
			model := llmtest.NewScripted(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Hi.")}})
			a, err := agent.New(agent.Config{Store: db, Registry: ts.reg, Provider: model, System: custom})
			if err != nil {
				t.Fatal(err)
			}
			turn := func(msg string) {
				t.Helper()
				if err := a.Turn(t.Context(), store.Fence{}, conv.ID, msg, func(agent.Event) {}); err != nil {
					t.Fatal(err)
				}
			}
			turn("one")
			if err := ts.reg.Register(attachedTools(t, "tp", 2, 1)...); err != nil {
				t.Fatal(err)
			}
			turn("two")
			ts.reg.Unregister("tp__remote_tool_number_0", "tp__remote_tool_number_1", "tp__remote_tool_number_2")
			turn("three")

			reqs := model.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			for i, want := range []struct {
				line  string
				tools int
			}{{"tp (2)", 2}, {"tp (3)", 3}, {"", 0}} {
				attached := 0
				for _, d := range reqs[i].Tools {
					if strings.HasPrefix(d.Name, "tp__") {
						attached++
					}
				}
				if attached != want.tools {
					t.Errorf("request %d offers %d tp tools, want %d", i+1, attached, want.tools)
				}
				switch {
				case custom != "":
					if reqs[i].System != custom {
						t.Errorf("request %d system = %q, want the configured %q", i+1, reqs[i].System, custom)
					}
				case want.line == "":
					if strings.Contains(reqs[i].System, "Servers (tools)") {
						t.Errorf("request %d names attached servers with none attached:\n%s", i+1, reqs[i].System)
					}
				case !strings.Contains(reqs[i].System, "Servers (tools): "+want.line+"."):
					t.Errorf("request %d system lacks %q:\n%s", i+1, want.line, reqs[i].System)
				}
			}
		})
	}
}
