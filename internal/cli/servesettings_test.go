package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
)

// TestServeSettingsAreCheckedFirst: flags and variables that cannot work
// stop `toolport serve` with exit 2 and one line saying why, before it
// listens or opens anything.
func TestServeSettingsAreCheckedFirst(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string // the first line of stderr
	}{
		{name: "help", args: []string{"--help"}, code: 0, stderr: "Usage: toolport serve"},
		{name: "unknown flag", args: []string{"--frobnicate"}, code: 2, stderr: "flag provided but not defined: -frobnicate"},
		{name: "positional argument", args: []string{"now"}, code: 2, stderr: "Usage: toolport serve"},
		{name: "no steps", args: []string{"--max-steps", "0"}, code: 2, stderr: "toolport serve: --max-steps must be at least 1"},
		{name: "bad turn timeout", env: map[string]string{"TOOLPORT_TURN_TIMEOUT": "soon"}, code: 2, stderr: "toolport serve: TOOLPORT_TURN_TIMEOUT"},
		{name: "lease too short", env: map[string]string{"TOOLPORT_TURN_LEASE": "1ms"}, code: 2, stderr: `toolport serve: TOOLPORT_TURN_LEASE="1ms"`},
		{name: "every interface without a token", args: []string{"--addr", "0.0.0.0:0"}, code: 2, stderr: "toolport serve: server: refusing to serve on 0.0.0.0:0 without TOOLPORT_API_TOKEN"},
		{name: "metrics off loopback without a token", args: []string{"--metrics-addr", "0.0.0.0:0"}, code: 2, stderr: "toolport serve: --metrics-addr: server: refusing"},
		{name: "no header timeout", args: []string{"--header-timeout", "0s"}, code: 2, stderr: "toolport serve: --header-timeout and --body-timeout must be positive"},
		{name: "bad replica id", env: map[string]string{"TOOLPORT_REPLICA_ID": "a b"}, code: 2, stderr: "toolport serve: TOOLPORT_REPLICA_ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.New(func(k string) string { return tt.env[k] }, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg,
				Registry: func(context.Context, *cli.Env) (*tool.Registry, func(), error) {
					t.Fatal("the registry was built before the settings were checked")
					return nil, nil, nil
				}}
			code := cli.Run(t.Context(), env, append([]string{"serve", "--addr", "127.0.0.1:0"}, tt.args...))
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if first, _, _ := strings.Cut(errb.String(), "\n"); !strings.HasPrefix(first, tt.stderr) {
				t.Errorf("stderr starts %q, want %q", first, tt.stderr)
			}
			if n := strings.Count(errb.String(), "toolport serve:"); tt.code == 2 && strings.HasPrefix(tt.stderr, "toolport serve:") && n != 1 {
				t.Errorf("the error is printed %d times:\n%s", n, errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}
