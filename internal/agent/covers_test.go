package agent

import (
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// The log's answer replaces the saved one only when it went further: more
// text or tool results, and less of neither.
func TestCoversPrefersTheLongerAnswer(t *testing.T) {
	round := []llm.Block{llm.Text("Let me look. "), llm.ToolUse("c1", "lookup", nil), llm.ToolResult("c1", nil, false)}
	more := append(append([]llm.Block{}, round...), llm.Text("Found it"))
	for _, tc := range []struct {
		name          string
		logged, saved []llm.Block
		want          bool
	}{
		{"nothing saved", more, nil, true},
		{"text after the saved round", more, round, true},
		{"the same", round, round, false},
		{"the log lost events the save has", round, more, false},
		{"an empty log", nil, round, false},
		{"more results but less text", []llm.Block{llm.ToolUse("c1", "lookup", nil), llm.ToolResult("c1", nil, false)}, []llm.Block{llm.Text("Let me look. ")}, false},
	} {
		if got := covers(tc.logged, tc.saved); got != tc.want {
			t.Errorf("%s: covers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
