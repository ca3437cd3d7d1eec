package agent

import (
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
)

// History converts stored messages to what a model reads.
//
// An assistant message is stored as one list of blocks in the order they
// happened (text, tool_use, tool_result, text, …), but the model APIs want the
// tool results in a user turn of their own, directly after the assistant turn
// that asked for them. So each stored assistant message is split at its
// tool_result blocks into alternating assistant [text, tool_use…] and user
// [tool_result…] messages, and consecutive messages of one role (a user
// message whose turn failed before any answer, say) are merged, since the
// APIs expect the roles to alternate. The llm providers then put this in each
// API's native form; they also leave out tool calls that never got a result
// (a turn cut short), which the APIs would reject.
//
// Messages whose content cannot be decoded are skipped rather than failing
// the conversation for good; skipped counts them.
func History(msgs []store.Message) (out []llm.Message, skipped int) {
	add := func(role llm.Role, blocks []llm.Block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, llm.Message{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		blocks, err := llm.DecodeBlocks(m.Content)
		if err != nil {
			skipped++
			continue
		}
		if m.Role != store.RoleAssistant {
			add(llm.RoleUser, blocks)
			continue
		}
		splitAssistant(blocks, add)
	}
	return out, skipped
}

// splitAssistant cuts an assistant message's blocks into runs of model output
// (text, tool_use) and runs of tool results, passing each run to add.
func splitAssistant(blocks []llm.Block, add func(llm.Role, []llm.Block)) {
	start := 0
	for start < len(blocks) {
		results := blocks[start].Type == llm.BlockToolResult
		end := start
		for end < len(blocks) && (blocks[end].Type == llm.BlockToolResult) == results {
			end++
		}
		role := llm.RoleAssistant
		if results {
			role = llm.RoleUser
		}
		add(role, append([]llm.Block(nil), blocks[start:end]...))
		start = end
	}
}
