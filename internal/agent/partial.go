package agent

import (
	"encoding/json"
	"strings"

	"github.com/toolport/toolport/internal/llm"
)

// PartialAnswer rebuilds the content blocks of an answer from its turn's
// events, in the order the agent saves them: each model response's text and
// tool_use blocks, then the tool_result blocks of its calls in the calls'
// order. It is how a replica that takes over a lost turn keeps what the turn
// streamed after its last save. A call without its result is left out, the
// tool_use too: a model must be given a result for every call it made.
func PartialAnswer(events []Event) []llm.Block {
	var (
		blocks  []llm.Block
		text    strings.Builder
		calls   []ToolCallStart
		results = map[string]llm.Block{}
	)
	flushText := func() {
		if text.Len() > 0 {
			blocks = append(blocks, llm.Text(text.String()))
			text.Reset()
		}
	}
	flushRound := func() {
		var uses, res []llm.Block
		for _, c := range calls {
			if r, ok := results[c.ToolCallID]; ok {
				uses = append(uses, llm.ToolUse(c.ToolCallID, c.ToolName, c.Input))
				res = append(res, r)
			}
		}
		blocks = append(append(blocks, uses...), res...)
		calls, results = nil, map[string]llm.Block{}
	}
	for _, ev := range events {
		switch ev := ev.(type) {
		case TextDelta:
			if len(calls) > 0 {
				flushRound() // the next model response
			}
			text.WriteString(ev.Content)
		case ToolCallStart:
			flushText()
			calls = append(calls, ev)
		case ToolCallEnd:
			results[ev.ToolCallID] = llm.ToolResult(ev.ToolCallID, ev.Result, false)
		case ToolCallError:
			results[ev.ToolCallID] = llm.ToolResult(ev.ToolCallID, errorEnvelope(ev), true)
		}
	}
	flushText()
	flushRound()
	return blocks
}

// errorEnvelope is the registry's envelope of a failed call, which the
// agent saves as its result, rebuilt from the call's event.
func errorEnvelope(ev ToolCallError) json.RawMessage {
	data, _ := json.Marshal(struct {
		Success    bool   `json:"success"`
		Error      string `json:"error"`
		ErrorCode  string `json:"error_code"`
		Retryable  bool   `json:"retryable"`
		WasRetried bool   `json:"wasRetried"`
		DurationMs int64  `json:"durationMs"`
	}{false, ev.Error, ev.ErrorCode, ev.Retryable, ev.WasRetried, ev.DurationMs})
	return data
}
