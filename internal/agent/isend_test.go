package agent

import "testing"

// TestIsEnd: message_end is recognised whether or not "type" comes first,
// and no other event is taken for it.
func TestIsEnd(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{`{"type":"message_end","messageId":"m","usage":{"inputTokens":1,"outputTokens":2},"stopReason":"end_turn"}`, true},
		{`{"messageId":"m","type":"message_end"}`, true},
		{`{ "type" : "message_end" }`, true},
		{`{"type":"message_start","messageId":"m"}`, false},
		{`{"type":"message_ending"}`, false},
		{`{"type":"tool_call_end","result":{"type":"message_end"}}`, false},
		{`{"result":{"type":"message_end"},"type":"tool_call_end"}`, false},
		{`{"type":"message_end"`, false},
		{`not json`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := IsEnd([]byte(tt.data)); got != tt.want {
			t.Errorf("IsEnd(%s) = %v, want %v", tt.data, got, tt.want)
		}
	}
}
