package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/tool"
)

// CodeDeclined is the error_code of the result of a call the person declined
// to confirm: not a failure of the tool, which never ran.
const CodeDeclined = "USER_DECLINED"

// maxConfirmArgs bounds the arguments quoted in a confirmation request.
const maxConfirmArgs = 600

// needsConfirmation reports whether a call of the tool must be confirmed by
// the person first: the policy says so, or, for a tool it does not name,
// the tool changes something on the user's behalf outside Toolport (their
// account with an outside service, or whatever an attached MCP server's
// write tool touches).
func needsConfirmation(spec tool.Spec, policy map[string]bool) bool {
	if ask, ok := policy[spec.Name]; ok {
		return ask
	}
	return spec.Annotations.UserAccount && !spec.Annotations.ReadOnly
}

// confirmSchema is the form a client shows: one required boolean.
var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{
			"type": "boolean", "title": "Confirm",
			"description": "Yes to let Toolport run it",
			"default":     false,
		},
	},
	"required": []string{"confirm"},
}

// confirmKey names the confirmation among a call's input requests.
const confirmKey = "toolport-confirm"

// confirm asks the person, through the client, whether the call may run. It
// returns nil to go on, or the result to answer with instead: the request
// for confirmation, or the refusal.
//
// The question is asked as a multi-round-trip input request (SEP-2322): a
// client on the 2026-07-28 protocol answers it and calls again with the
// answer; for older clients the SDK sends elicitation/create itself and calls
// this handler again with the answer, so both arrive here as InputResponses.
//
// A client that did not declare elicitation (or only URL elicitation, which
// cannot show the form) is not asked: the call runs as it would without
// this server's help, the tool's own description telling the model to call
// it only when the user asks.
func (h *handler) confirm(req *mcp.CallToolRequest, spec tool.Spec) *mcp.CallToolResult {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		return nil
	}
	if answer, ok := req.Params.InputResponses[confirmKey]; ok {
		er, ok := answer.(*mcp.ElicitResult)
		if ok && er.Action == "accept" && er.Content["confirm"] == true {
			return nil
		}
		action := "no answer"
		if ok {
			action = er.Action
		}
		return h.notDone(fmt.Sprintf("Not done: the user declined %s (%s). Nothing was changed; "+
			"this is the user's decision, not a failure: do not call it again unless the user asks.", spec.Name, action))
	}
	what := spec.Title
	if what == "" {
		what = spec.Name
	}
	effect := "which may change data"
	if spec.Annotations.UserAccount {
		effect = "which acts on your behalf outside Toolport (your account with an outside service, or what an attached MCP server can reach)"
	}
	msg := fmt.Sprintf("Toolport is about to run %q (%s), %s.", what, spec.Name, effect)
	if args := compactArgs(req.Params.Arguments); args != "" {
		msg += "\nArguments: " + args
	}
	msg += "\nAllow it?"
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		confirmKey: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: confirmSchema},
	}}
}

// notDone is the result of a call that did not run. It is an isError result
// because the tool's outputSchema describes only what it returns when it
// runs (clients check structuredContent against it), with the failure
// envelope every other non-run carries.
func (h *handler) notDone(message string) *mcp.CallToolResult {
	// The registry's failure envelope's fields; a map of plain values cannot
	// fail to encode.
	env, _ := json.Marshal(map[string]any{
		"success": false, "error": message, "error_code": CodeDeclined, "retryable": false, "wasRetried": false, "durationMs": 0,
	})
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: message}, &mcp.TextContent{Text: string(env)}},
	}
}

// compactArgs renders a call's arguments on one line, bounded.
func compactArgs(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return ""
	}
	s := buf.String()
	if s == "" || s == "null" || s == "{}" {
		return ""
	}
	if len(s) > maxConfirmArgs {
		cut := maxConfirmArgs
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
