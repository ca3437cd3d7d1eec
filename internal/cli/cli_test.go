package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/testexec"
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
		{name: "schema gemini", args: []string{"schema", "echo", "--format", "gemini"}, code: 0, stdout: `"type": "OBJECT"`},
		{name: "schema openai-responses", args: []string{"schema", "echo", "--format", "openai-responses"}, code: 0, stdout: `"strict": false`},
		{name: "schema bad format", args: []string{"schema", "--format", "yaml"}, code: 2, stderr: `unknown format "yaml"`},
		{name: "schema unknown tool", args: []string{"schema", "nope"}, code: 2, stderr: `no tool named "nope"`},
		{name: "call with argument", args: []string{"call", "echo", `{"text":"hi","times":2}`}, code: 0, stdout: `"text":"hihi"`},
		{name: "call with stdin", stdin: `{"text":"yo"}`, args: []string{"call", "echo"}, code: 0, stdout: `"summary":"echoed yo"`},
		{name: "call flag after name", args: []string{"call", "echo", `{"text":"hi"}`, "--pretty"}, code: 0, stdout: "\n  \"success\": true"},
		{name: "call invalid arguments", args: []string{"call", "echo", `{"text":"hi","times":9}`}, code: 1, stdout: "times: must be <= 3, got 9"},
		{name: "call failure shows event", args: []string{"call", "echo", `{"text":"x","fail":true}`}, code: 1, stdout: `"error_code":"AUTH_MISSING"`, stderr: "Set ECHO_KEY."},
		{name: "call unknown tool", args: []string{"call", "nope", `{}`}, code: 2, stderr: `no tool named "nope"`},
		{name: "call without name", args: []string{"call"}, code: 2, stderr: "Usage: toolport call"},
		{name: "call with invalid JSON is bad usage", args: []string{"call", "echo", `{"text":"hi"`}, code: 2, stderr: "arguments are not valid JSON: unexpected end of JSON input"},
		{name: "call with invalid JSON on stdin is bad usage", stdin: "query=hi", args: []string{"call", "echo"}, code: 2, stderr: "arguments are not valid JSON: invalid character 'q'"},
		{name: "call with JSON that is not an object fails the tool", args: []string{"call", "echo", `[1]`}, code: 1, stdout: "must be a JSON object"},
		{name: "call with empty stdin means no arguments", stdin: " \n", args: []string{"call", "echo"}, code: 1, stdout: "text"},
		{name: "--version", args: []string{"--version"}, code: 0, stdout: "toolport "},
		{name: "version names the Go toolchain", args: []string{"version"}, code: 0, stdout: runtime.Version()},
		{name: "version takes no arguments", args: []string{"version", "x"}, code: 2, stderr: "Usage: toolport version"},
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
	for _, f := range []string{"json", "anthropic", "openai", "openai-responses", "mcp", "gemini"} {
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

// TestListCutsDescriptionsAtASentenceEnd checks that `toolport list` shows a
// description's first sentence, whole: never cut inside parentheses or after
// an abbreviation, and never mid-sentence however long it is.
func TestListCutsDescriptionsAtASentenceEnd(t *testing.T) {
	long := "Search the indexed track collection by mood, theme, sound or lyrics description, with filters on audio features, tempo, key and library membership, and a relevance score per track."
	tests := []struct{ description, want string }{
		{"Echoes text. Nothing more.", "Echoes text."},
		{"Search by mood (e.g. 'melancholic piano'). Returns tracks.", "Search by mood (e.g. 'melancholic piano')."},
		{"Search by mood, e.g. 'sad songs', and more. Returns tracks.", "Search by mood, e.g. 'sad songs', and more."},
		{"Reads rows (CSV. XLSX. JSON) of a table. Pages.", "Reads rows (CSV. XLSX. JSON) of a table."},
		{"Version 1.2 of the API is used! Nothing else.", "Version 1.2 of the API is used!"},
		{long + " Second sentence.", long},
		{"No sentence end at all, (e.g. a fragment", "No sentence end at all, (e.g. a fragment"},
		{"Spread\nover   lines. Second.", "Spread over lines."},
	}
	for _, tt := range tests {
		reg := func(context.Context, *cli.Env) (*tool.Registry, func(), error) {
			r := tool.NewRegistry()
			err := r.Register(tool.Must(tool.New(tool.Spec{Name: "t", Description: tt.description, Pack: "p"},
				func(context.Context, echoIn) (echoOut, error) { return echoOut{}, nil })))
			return r, nil, err
		}
		cfg, _ := config.New(func(string) string { return "" }, t.TempDir())
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: reg}
		if code := cli.Run(context.Background(), env, []string{"list"}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if got := strings.TrimSpace(strings.TrimPrefix(lines[len(lines)-1], "t     p  ")); got != tt.want {
			t.Errorf("description %q\nlisted as %q\nwant      %q", tt.description, got, tt.want)
		}
	}
}

// TestMalformedCredentialsFile checks that a broken credentials file does not
// stop the commands that need no credentials (one warning, then the output),
// and stops those that do with an error naming the file.
func TestMalformedCredentialsFile(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".config", "toolport", "credentials.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"llm": {"anthropic": {"api_key": "sk-ant-secret"`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(func(string) string { return "" }, home)
	if err != nil {
		t.Fatalf("config.New: %v", err)
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
	}{
		{args: []string{"list"}, code: 0, stdout: "echo"},
		{args: []string{"schema", "echo"}, code: 0, stdout: `"parameters"`},
		{args: []string{"version"}, code: 0, stdout: "toolport"},
		{args: []string{"call", "other", `{"text":"x"}`}, code: 1},
		{args: []string{"mcp"}, code: 1},
		{args: []string{"serve", "--addr", "127.0.0.1:0"}, code: 1},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: testRegistry}
			// Bounded, in case a command that should refuse to start serves instead.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code := cli.Run(ctx, env, tt.args)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
			stderr := errb.String()
			if !strings.Contains(stderr, path) || !strings.Contains(stderr, "not valid JSON (error at line 1") {
				t.Errorf("stderr does not say what is wrong with the file:\n%s", stderr)
			}
			if n := strings.Count(stderr, path); n != 1 {
				t.Errorf("the file is named %d times, want once:\n%s", n, stderr)
			}
			if tt.code == 0 && !strings.Contains(stderr, "warning:") {
				t.Errorf("no warning:\n%s", stderr)
			}
			if tt.code != 0 && !strings.Contains(stderr, "TOOLPORT_CREDENTIALS") {
				t.Errorf("the error does not say how to fix it:\n%s", stderr)
			}
			if strings.Contains(stderr, "sk-ant-secret") {
				t.Errorf("stderr shows the file's content:\n%s", stderr)
			}
		})
	}
}

// TestVersionOfABuiltBinary builds toolport with VCS stamping and checks that
// --version reports what the toolchain stamped into that binary (as `go
// version -m` reads it) and, in a git clone, the commit checked out. (The go
// command does not stamp builds inside a `git worktree`; there the binary
// says its revision is unknown, and the test checks that instead.)
func TestVersionOfABuiltBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "toolport")
	// -buildvcs=true overrides a GOFLAGS=-buildvcs=false in the environment.
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "../../cmd/toolport").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	stamped := map[string]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			stamped["version"] = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				stamped[k] = v
			}
		}
	}
	want := []string{"toolport " + stamped["version"] + "\n", runtime.Version()}
	if rev := stamped["vcs.revision"]; rev != "" {
		want = append(want, "revision "+rev)
		if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && strings.TrimSpace(string(head)) != rev {
			t.Errorf("stamped revision %s, HEAD is %s", rev, head)
		}
	} else {
		t.Logf("the toolchain stamped no revision (not a git clone?)")
		want = append(want, "revision unknown")
	}
	for _, arg := range []string{"--version", "version"} {
		r := testexec.Run(t, bin, nil, "", arg)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\n%s", arg, r.Code, r.Stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("%s lacks %q:\n%s", arg, w, r.Stdout)
			}
		}
	}
}

// TestServeNamesTheMissingKey checks what `toolport serve` says on start-up
// when TOOLPORT_MODEL is set but the provider's key is not: the key to set,
// not "set TOOLPORT_MODEL".
func TestServeNamesTheMissingKey(t *testing.T) {
	tests := []struct{ model, want string }{
		{"anthropic:claude-sonnet-4-5", "model none (anthropic:claude-sonnet-4-5: no API key: set ANTHROPIC_API_KEY or llm.anthropic.api_key"},
		{"openai:gpt-4.1", "model none (openai:gpt-4.1: no API key: set OPENAI_API_KEY or llm.openai.api_key"},
		{"", "model none (set TOOLPORT_MODEL)"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			dir := t.TempDir()
			vars := map[string]string{"TOOLPORT_MODEL": tt.model, "TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db")}
			cfg, err := config.New(func(k string) string { return vars[k] }, dir)
			if err != nil {
				t.Fatal(err)
			}
			// The server starts, reports, and is stopped once it serves.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb testexec.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}
			done := make(chan int, 1)
			go func() { done <- cli.Run(ctx, env, []string{"serve", "--addr", "127.0.0.1:0"}) }()
			deadline := time.After(time.Minute) // a hang guard, not a timing
			for {
				printed, changed := out.Next()
				if strings.Contains(printed, "serving on") {
					break
				}
				select {
				case code := <-done:
					t.Fatalf("serve exited %d before serving\n%s", code, errb.String())
				case <-deadline:
					t.Fatalf("serve did not start\n%s", errb.String())
				case <-changed:
				}
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("exit %d\n%s", code, errb.String())
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errb.String())
			}
			if tt.model != "" && strings.Contains(errb.String(), "set TOOLPORT_MODEL") {
				t.Errorf("tells the user to set TOOLPORT_MODEL, which is set:\n%s", errb.String())
			}
		})
	}
}
