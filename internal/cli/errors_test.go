package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestReportPrintsOnce: a command's error is printed once, under the name
// it belongs to, and decides the exit code.
func TestReportPrintsOnce(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{"success", nil, ExitOK, ""},
		{"failure", boom, ExitFailure, "toolport serve: boom\n"},
		{"wrapped failure", fmt.Errorf("opening: %w", boom), ExitFailure, "toolport serve: opening: boom\n"},
		{"usage", usageError(boom), ExitUsage, "toolport serve: boom\n"},
		{"already printed", exitCode(ExitUsage), ExitUsage, ""},
		{"help", exitCode(ExitOK), ExitOK, ""},
		{"subcommand", inSubcommand("playlist list", usageError(boom)), ExitUsage, "toolport playlist list: boom\n"},
		{"subcommand, already printed", inSubcommand("playlist list", exitCode(ExitFailure)), ExitFailure, ""},
		{"registry", plainError{boom}, ExitFailure, "toolport: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := report(&out, "serve", tt.err); code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if out.String() != tt.wantOut {
				t.Errorf("printed %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}
