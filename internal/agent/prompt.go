package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolport/toolport/internal/agent/about"
	"github.com/toolport/toolport/tool"
)

// SystemPrompt describes the assistant and the packs of reg's tools to the
// model. The tools' own definitions travel with each request; this says what
// they are for and how to treat their results.
func SystemPrompt(reg *tool.Registry) string { return systemPrompt(reg.Tools()) }

// systemPrompt is [SystemPrompt] of tools. Attached MCP servers' tools are
// named by server and count rather than one by one: a server may bring
// dozens, and their definitions travel with each request anyway.
func systemPrompt(tools []*tool.Tool) string {
	byPack := map[string][]string{}
	var packs []string
	attached := map[string]int{}
	var servers []string
	for _, t := range tools {
		p := t.Spec().Pack
		if p == about.AttachedPack {
			server, _, _ := strings.Cut(t.Name(), "__")
			if attached[server] == 0 {
				servers = append(servers, server)
			}
			attached[server]++
			continue
		}
		if p == "" {
			p = "other"
		}
		if _, ok := byPack[p]; !ok {
			packs = append(packs, p)
		}
		byPack[p] = append(byPack[p], t.Name())
	}
	slices.Sort(packs)
	var b strings.Builder
	b.WriteString("You are Toolport's assistant. You answer by using the tools you are given when they help, " +
		"and you say plainly when they cannot.\n\n")
	if len(packs) == 0 && len(servers) == 0 {
		b.WriteString("No tools are available in this session: answer from what you know, and say so.\n")
	} else {
		b.WriteString("Your tools, by pack:\n")
		for _, p := range packs {
			fmt.Fprintf(&b, "- %s: %s. Tools: %s.\n", p, about.Pack(p), strings.Join(byPack[p], ", "))
		}
	}
	if len(servers) > 0 {
		slices.Sort(servers)
		counts := make([]string, len(servers))
		for i, s := range servers {
			counts[i] = fmt.Sprintf("%s (%d)", s, attached[s])
		}
		fmt.Fprintf(&b, "- %s: %s. Servers (tools): %s.\n", about.AttachedPack, about.Pack(about.AttachedPack), strings.Join(counts, ", "))
	}
	b.WriteString("\nGuidelines:\n" +
		"- Call several tools at once when the calls do not depend on each other.\n" +
		"- Every tool result has success, summary and durationMs. A failed call says success:false with " +
		"error, error_code and retryable; it was already retried once if that could help. Do not repeat a call " +
		"that failed with a non-retryable error; fix the arguments (VALIDATION names the field and the rule) or " +
		"tell the user what went wrong.\n" +
		"- " + about.ToolResults + "\n" +
		"- Be concise. Prefer lists with titles and links over long prose.\n")
	return b.String()
}
