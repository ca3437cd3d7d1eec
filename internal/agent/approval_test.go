package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/tool"
)

// approvalTools adds to the test tools one that acts on the user's account
// (like savePlaylistToTidal) and one that writes only Toolport's own data
// (like suggestPlaylist), counting their runs.
func approvalTools(t *testing.T) (*tools, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	ts := newTools(t)
	var saves, publishes atomic.Int32
	err := ts.reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "saveToAccount", Title: "Save to your account",
			Description: "Saves the list to the user's account. Only when asked.", Pack: "test",
			Annotations: tool.Annotations{OpenWorld: true, UserAccount: true}},
			func(ctx context.Context, in queryIn) (nameOut, error) {
				saves.Add(1)
				return nameOut{Name: "saved " + in.Query}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "publish", Description: "Stores a note.", Pack: "test"},
			func(ctx context.Context, in queryIn) (nameOut, error) {
				publishes.Add(1)
				return nameOut{Name: "published " + in.Query}, nil
			})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return ts, &saves, &publishes
}

// approvalSetup is a conversation whose first turn stopped for approval of
// call "c1" (saveToAccount), while "c2" (lookup) ran.
type approvalSetup struct {
	db     *sqlstore.DB
	convID string
	ts     *tools
	saves  *atomic.Int32
	model  *llmtest.Scripted
	cfg    agent.Config
	first  *recorder
}

func pausedTurn(t *testing.T, after ...llmtest.ScriptedTurn) *approvalSetup {
	t.Helper()
	ts, saves, _ := approvalTools(t)
	db := openStore(t, storetest.SQLite)
	model := llmtest.NewScripted(append([]llmtest.ScriptedTurn{{Events: []llmtest.ScriptedEvent{
		llmtest.ScriptText("Saving it."),
		llmtest.ScriptToolCall("c1", "saveToAccount", `{"query":"jazz"}`),
		llmtest.ScriptToolCall("c2", "lookup", `{"query":"jazz"}`),
	}}}, after...)...)
	cfg := agent.Config{Store: db, Registry: ts.reg, Provider: model}
	s := &approvalSetup{db: db, convID: newConversation(t, db), ts: ts, saves: saves, model: model, cfg: cfg, first: &recorder{}}
	if err := newAgent(t, cfg).Turn(t.Context(), store.Fence{}, s.convID, "save my jazz list", s.first.emit); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestApprovalStopsTheTurnWithTheCallStored(t *testing.T) {
	s := pausedTurn(t)
	if got := strings.Join(s.first.types(), ","); got != "message_start,text_delta,tool_call_start,tool_call_end,approval_required,message_end" {
		t.Fatalf("events = %s", got)
	}
	ev := s.first.first("approval_required")
	if ev["toolUseId"] != "c1" || ev["tool"] != "saveToAccount" || ev["title"] != "Save to your account" ||
		ev["arguments"].(map[string]any)["query"] != "jazz" {
		t.Errorf("approval_required = %v", ev)
	}
	what, _ := ev["what"].(string)
	if !strings.Contains(what, "on your behalf") || !strings.Contains(what, "Saves the list to the user's account.") {
		t.Errorf("what = %q", what)
	}
	if end := s.first.first("message_end"); end["stopReason"] != agent.StopApprovalRequired {
		t.Errorf("message_end = %v", end)
	}
	if s.saves.Load() != 0 {
		t.Fatal("the call waiting for approval ran")
	}
	msgs, blocks := storedBlocks(t, s.db, s.convID)
	last := blocks[len(blocks)-1]
	if got := strings.Join(blockTypes(last), ","); got != "text,tool_use,tool_use,tool_result" || msgs[len(msgs)-1].Incomplete {
		t.Fatalf("stored answer = %s (incomplete %v)", got, msgs[len(msgs)-1].Incomplete)
	}
	// The pending call is data: any agent (another replica) finds it.
	conv, err := s.db.GetConversation(t.Context(), s.convID)
	if err != nil {
		t.Fatal(err)
	}
	pending := newAgent(t, s.cfg).Pending(conv)
	if len(pending) != 1 || pending[0].ToolUseID != "c1" || pending[0].What != what {
		t.Fatalf("Pending = %+v", pending)
	}
}

func TestApproveResumesTheTurn(t *testing.T) {
	tests := []struct {
		decision   agent.Decision
		wantSaves  int32
		wantResult string // in the stored tool result of c1
		wantEvent  string
	}{
		{agent.AllowOnce, 1, `"_approval":"allow_once"`, "tool_call_end"},
		{agent.AllowAlways, 1, `"_approval":"allow_always"`, "tool_call_end"},
		{agent.Deny, 0, `"error_code":"USER_DENIED"`, "tool_call_error"},
	}
	for _, tc := range tests {
		t.Run(string(tc.decision), func(t *testing.T) {
			s := pausedTurn(t, llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Done.")}})
			firstID := s.first.first("message_start")["messageId"]
			// A second agent, as another replica would be, resumes.
			rec := &recorder{}
			err := newAgent(t, s.cfg).Approve(t.Context(), store.Fence{}, s.convID, []agent.ToolDecision{{ToolUseID: "c1", Decision: tc.decision}}, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			want := "message_start,tool_call_start," + tc.wantEvent + ",text_delta,message_end"
			if got := strings.Join(rec.types(), ","); got != want {
				t.Fatalf("events = %s; want %s", got, want)
			}
			if rec.first("message_start")["messageId"] != firstID {
				t.Error("the resumed turn did not continue the paused message")
			}
			if rec.first("message_end")["stopReason"] != agent.StopEndTurn {
				t.Errorf("message_end = %v", rec.first("message_end"))
			}
			if got := s.saves.Load(); got != tc.wantSaves {
				t.Errorf("the tool ran %d times; want %d", got, tc.wantSaves)
			}
			msgs, blocks := storedBlocks(t, s.db, s.convID)
			if len(msgs) != 2 {
				t.Fatalf("%d messages; want the user's and one answer", len(msgs))
			}
			answer := blocks[1]
			if got := strings.Join(blockTypes(answer), ","); got != "text,tool_use,tool_use,tool_result,tool_result,text" {
				t.Fatalf("stored answer = %s", got)
			}
			c1 := answer[slices.IndexFunc(answer, func(b llm.Block) bool { return b.Type == llm.BlockToolResult && b.ToolUseID == "c1" })]
			if !strings.Contains(string(c1.Content), tc.wantResult) || c1.IsError != (tc.decision == agent.Deny) {
				t.Errorf("c1's result = %s (error %v)", c1.Content, c1.IsError)
			}
			// The model read the outcome of c1 before answering.
			reqs := s.model.Requests()
			lastReq := reqs[len(reqs)-1].Messages
			results := lastReq[len(lastReq)-1]
			if results.Role != llm.RoleUser || len(results.Content) != 2 {
				t.Fatalf("the model's last request ends with %+v", results)
			}
			if tc.decision == agent.Deny && !strings.Contains(string(results.Content[1].Content), "The user denied the call of saveToAccount") {
				t.Errorf("the model was not told of the denial: %s", results.Content[1].Content)
			}
			if err := newAgent(t, s.cfg).Approve(t.Context(), store.Fence{}, s.convID, []agent.ToolDecision{{ToolUseID: "c1", Decision: agent.AllowOnce}}, (&recorder{}).emit); !errors.Is(err, agent.ErrNoPendingApproval) {
				t.Errorf("a second decision: %v; want ErrNoPendingApproval", err)
			}
		})
	}
}

func TestAllowAlwaysHoldsForTheConversation(t *testing.T) {
	again := llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("c3", "saveToAccount", `{"query":"blues"}`)}}
	s := pausedTurn(t,
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Done.")}},
		again, llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Saved too.")}},
		again,
	)
	a := newAgent(t, s.cfg)
	if err := a.Approve(t.Context(), store.Fence{}, s.convID, []agent.ToolDecision{{ToolUseID: "c1", Decision: agent.AllowAlways}}, (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := newAgent(t, s.cfg).Turn(t.Context(), store.Fence{}, s.convID, "and my blues list", rec.emit); err != nil {
		t.Fatal(err)
	}
	if rec.first("approval_required") != nil || s.saves.Load() != 2 {
		t.Fatalf("a later call in the conversation asked again or did not run: %v, %d runs", rec.types(), s.saves.Load())
	}
	// Another conversation is asked.
	other := newConversation(t, s.db)
	rec = &recorder{}
	if err := a.Turn(t.Context(), store.Fence{}, other, "save blues", rec.emit); err != nil {
		t.Fatal(err)
	}
	if rec.first("approval_required") == nil {
		t.Fatalf("another conversation was not asked: %v", rec.types())
	}
}

func TestApprovalPolicyPerTool(t *testing.T) {
	tests := []struct {
		name   string
		policy map[string]bool
		call   string
		asks   bool
	}{
		{"a tool acting for the user asks by default", nil, "saveToAccount", true},
		{"one writing only Toolport's data does not", nil, "publish", false},
		{"a read-only one does not", nil, "lookup", false},
		{"never ask", map[string]bool{"saveToAccount": false}, "saveToAccount", false},
		{"always ask", map[string]bool{"publish": true}, "publish", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, _, _ := approvalTools(t)
			db := openStore(t, storetest.SQLite)
			model := llmtest.NewScripted(
				llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("x", tc.call, `{"query":"q"}`)}},
				llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("ok")}},
			)
			rec := &recorder{}
			a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: model, Approval: tc.policy})
			if err := a.Turn(t.Context(), store.Fence{}, newConversation(t, db), "go", rec.emit); err != nil {
				t.Fatal(err)
			}
			if asked := rec.first("approval_required") != nil; asked != tc.asks {
				t.Fatalf("asked = %v; want %v (%v)", asked, tc.asks, rec.types())
			}
		})
	}
}

func TestApproveRefusesDecisionsThatDoNotFit(t *testing.T) {
	s := pausedTurn(t)
	tests := []struct {
		name string
		ds   []agent.ToolDecision
	}{
		{"none", nil},
		{"another call", []agent.ToolDecision{{ToolUseID: "c2", Decision: agent.AllowOnce}}},
		{"an extra call", []agent.ToolDecision{{ToolUseID: "c1", Decision: agent.AllowOnce}, {ToolUseID: "zz", Decision: agent.Deny}}},
		{"twice", []agent.ToolDecision{{ToolUseID: "c1", Decision: agent.AllowOnce}, {ToolUseID: "c1", Decision: agent.Deny}}},
		{"unknown decision", []agent.ToolDecision{{ToolUseID: "c1", Decision: "maybe"}}},
	}
	a := newAgent(t, s.cfg)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			if err := a.Approve(t.Context(), store.Fence{}, s.convID, tc.ds, rec.emit); !errors.Is(err, agent.ErrBadDecision) {
				t.Fatalf("err = %v; want ErrBadDecision", err)
			}
			if len(rec.types()) != 0 || s.saves.Load() != 0 {
				t.Fatalf("a refused decision emitted %v, ran %d", rec.types(), s.saves.Load())
			}
		})
	}
	// A new message instead of a decision leaves the call behind.
	model := llmtest.NewScripted(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Not saving.")}})
	cfg := s.cfg
	cfg.Provider = model
	if err := newAgent(t, cfg).Turn(t.Context(), store.Fence{}, s.convID, "never mind", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	if err := a.Approve(t.Context(), store.Fence{}, s.convID, []agent.ToolDecision{{ToolUseID: "c1", Decision: agent.AllowOnce}}, (&recorder{}).emit); !errors.Is(err, agent.ErrNoPendingApproval) {
		t.Fatalf("after a new message: %v; want ErrNoPendingApproval", err)
	}
}

func TestApprovalRequiredEventRoundTrips(t *testing.T) {
	ev := agent.ApprovalRequired{ToolUseID: "c1", Tool: "fs__write_file", Title: "fs: Write File",
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`), What: "The model asks to run it."}
	raw, err := agent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	back, err := agent.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := back.(agent.ApprovalRequired)
	if got.ToolUseID != ev.ToolUseID || got.Tool != ev.Tool || got.Title != ev.Title || string(got.Arguments) != string(ev.Arguments) || got.What != ev.What {
		t.Fatalf("round trip: %s → %+v", raw, got)
	}
}

func TestToolsAddedToTheRegistryAreOfferedNextTurn(t *testing.T) {
	ts := newTools(t)
	db := openStore(t, storetest.SQLite)
	model := llmtest.NewScripted(
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("one")}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("two")}},
	)
	a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: model})
	conv := newConversation(t, db)
	if err := a.Turn(t.Context(), store.Fence{}, conv, "first", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	// As an attached MCP server's list_changed does.
	ts.reg.Unregister("flaky")
	if err := ts.reg.Register(tool.Must(tool.New(tool.Spec{Name: "fresh", Description: "New.", Pack: "test"},
		func(context.Context, queryIn) (itemsOut, error) { return itemsOut{}, nil }))); err != nil {
		t.Fatal(err)
	}
	if err := a.Turn(t.Context(), store.Fence{}, conv, "second", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	names := func(req llm.Request) []string {
		var out []string
		for _, d := range req.Tools {
			out = append(out, d.Name)
		}
		return out
	}
	reqs := model.Requests()
	before, after := names(reqs[0]), names(reqs[1])
	if !slices.Contains(before, "flaky") || slices.Contains(before, "fresh") || slices.Contains(after, "flaky") || !slices.Contains(after, "fresh") {
		t.Fatalf("tools offered: before %v, after %v", before, after)
	}
}
