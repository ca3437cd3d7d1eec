package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
)

type echoIn struct {
	Text  string `json:"text" schema:"minLength=1"`
	Fail  bool   `json:"fail,omitempty"`
	Times int    `json:"times,omitempty" schema:"minimum=1,maximum=3,default=1"`
}

type echoOut struct {
	Text string `json:"text"`
}

func (o echoOut) Summary() string { return "echoed " + o.Text }

func testRegistry(context.Context, *cli.Env) (*tool.Registry, func(), error) {
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "echo", Description: "Echoes text. Nothing more.", Pack: "test"},
			func(_ context.Context, in echoIn) (echoOut, error) {
				if in.Fail {
					return echoOut{}, &tool.Error{Code: tool.CodeAuthMissing, Message: "no key", Event: &tool.Event{Kind: "config_required", Content: "Set ECHO_KEY."}}
				}
				return echoOut{Text: strings.Repeat(in.Text, in.Times)}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "other", Description: "Another tool.", Pack: "misc"},
			func(_ context.Context, in echoIn) (echoOut, error) { return echoOut{Text: in.Text}, nil })),
	)
	return reg, nil, nil
}

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cfg, err := config.New(func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Config: cfg, Registry: testRegistry}
	code = cli.Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // substring of stdout
		stderr string // substring of stderr
	}{
		{name: "no arguments prints usage", code: 0, stdout: "Usage:"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{name: "list", args: []string{"list"}, code: 0, stdout: "echo   test   Echoes text."},
		{name: "list by pack", args: []string{"list", "--pack", "misc"}, code: 0, stdout: "other"},
		{name: "list unknown pack", args: []string{"list", "--pack", "nope"}, code: 2, stderr: `unknown pack "nope"`},
		{name: "list help", args: []string{"list", "--help"}, code: 0, stderr: "Usage: toolport list"},
		{name: "help COMMAND", args: []string{"help", "call"}, code: 0, stderr: "Usage: toolport call"},
		{name: "schema of one tool", args: []string{"schema", "echo"}, code: 0, stdout: `"parameters": {`},
		{name: "schema anthropic", args: []string{"schema", "echo", "--format", "anthropic"}, code: 0, stdout: `"input_schema": {`},
		{name: "schema openai, all tools", args: []string{"schema", "--format", "openai"}, code: 0, stdout: `"type": "function"`},
		{name: "schema mcp", args: []string{"schema", "--format=mcp"}, code: 0, stdout: `"outputSchema": {`},
		{name: "schema bad format", args: []string{"schema", "--format", "yaml"}, code: 2, stderr: `unknown format "yaml"`},
		{name: "schema unknown tool", args: []string{"schema", "nope"}, code: 2, stderr: `no tool named "nope"`},
		{name: "call with argument", args: []string{"call", "echo", `{"text":"hi","times":2}`}, code: 0, stdout: `"text":"hihi"`},
		{name: "call with stdin", stdin: `{"text":"yo"}`, args: []string{"call", "echo"}, code: 0, stdout: `"summary":"echoed yo"`},
		{name: "call flag after name", args: []string{"call", "echo", `{"text":"hi"}`, "--pretty"}, code: 0, stdout: "\n  \"success\": true"},
		{name: "call invalid arguments", args: []string{"call", "echo", `{"text":"hi","times":9}`}, code: 1, stdout: "times: must be <= 3, got 9"},
		{name: "call failure shows event", args: []string{"call", "echo", `{"text":"x","fail":true}`}, code: 1, stdout: `"error_code":"AUTH_MISSING"`, stderr: "Set ECHO_KEY."},
		{name: "call unknown tool", args: []string{"call", "nope", `{}`}, code: 2, stderr: `no tool named "nope"`},
		{name: "call without name", args: []string{"call"}, code: 2, stderr: "Usage: toolport call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
		})
	}
}

func TestSchemaOutputIsValidJSON(t *testing.T) {
	for _, f := range []string{"json", "anthropic", "openai", "mcp"} {
		_, stdout, _ := run(t, "", "schema", "--format", f)
		var defs []map[string]any
		if err := json.Unmarshal([]byte(stdout), &defs); err != nil || len(defs) != 2 {
			t.Errorf("%s: %v %s", f, err, stdout)
		}
	}
	_, stdout, _ := run(t, "", "call", "echo", `{"text":"<b>&</b>"}`)
	if !strings.Contains(stdout, `"text":"<b>&</b>"`) {
		t.Errorf("result JSON escapes HTML: %s", stdout)
	}

}
