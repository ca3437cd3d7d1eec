package exectool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/exectool"
	"github.com/toolport/toolport/tool"
)

type pageInput struct {
	Lines int    `json:"lines" schema:"minimum=0,maximum=100000"`
	Fail  string `json:"fail,omitempty" schema:"enum=auth|rate"`
}

type pageOutput struct {
	URL     string `json:"url"`
	Content string `json:"content"`
}

func (o pageOutput) Summary() string { return fmt.Sprintf("%d bytes", len(o.Content)) }

func registry(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(tool.Must(tool.New(tool.Spec{Name: "page", Description: "Returns a page of lines."},
		func(_ context.Context, in pageInput) (pageOutput, error) {
			switch in.Fail {
			case "auth":
				return pageOutput{}, &tool.Error{Code: tool.CodeAuthMissing, Message: "needs a key",
					Event: &tool.Event{Kind: "config_required", Content: "Set KEY", DataJSON: `{"tool":"page"}`}}
			case "rate":
				return pageOutput{}, tool.Errorf(tool.CodeRateLimit, "slow down")
			}
			var b strings.Builder
			for i := range in.Lines {
				fmt.Fprintf(&b, "line %d with \"quotes\" and ünïcode\n", i+1)
			}
			return pageOutput{URL: "https://example.com/", Content: b.String()}, nil
		})))
	return reg
}

type run struct {
	code           int
	stdout, stderr string
}

func execute(t *testing.T, env map[string]string, stdin string, args ...string) run {
	t.Helper()
	var out, errb bytes.Buffer
	c := &exectool.Command{Registry: registry(t), Tool: "page", Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }}
	code := c.Run(context.Background(), args)
	return run{code, out.String(), errb.String()}
}

func TestSchemaFlag(t *testing.T) {
	r := execute(t, nil, "", "--schema")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var def struct {
		Name       string
		Parameters map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &def); err != nil || def.Name != "page" || def.Parameters["type"] != "object" {
		t.Fatalf("bad --schema output (%v): %s", err, r.stdout)
	}
	if len(r.stdout) > exectool.MaxSchemaBytes {
		t.Errorf("--schema output is %d bytes, over the host's cap", len(r.stdout))
	}
}

func TestCallProtocol(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string // substring
		wantStderr string // substring; "" means stderr must be empty
	}{
		{name: "success", stdin: `{"lines":2}`, wantCode: 0, wantStdout: `"success":true`},
		{name: "invalid arguments", stdin: `{"lines":-1}`, wantCode: 1, wantStdout: `lines: must be >= 0, got -1`},
		{name: "not JSON", stdin: `lines=2`, wantCode: 1, wantStdout: `"error_code":"VALIDATION"`},
		{name: "failure without event", stdin: `{"lines":0,"fail":"rate"}`, wantCode: 1, wantStdout: `"error_code":"RATE_LIMIT"`},
		{name: "config_required on stderr", stdin: `{"lines":0,"fail":"auth"}`, wantCode: 1, wantStdout: `"error_code":"AUTH_MISSING"`, wantStderr: `{"kind":"config_required","content":"Set KEY","data_json":"{\"tool\":\"page\"}"}`},
		{name: "exit-zero flag puts event in stdout", stdin: `{"lines":0,"fail":"auth"}`, args: []string{"--exit-zero"}, wantCode: 0, wantStdout: `"_event":{"kind":"config_required"`},
		{name: "exit-zero by environment", env: map[string]string{"TOOLPORT_EXEC_EXIT_ZERO": "1"}, stdin: `{"lines":0,"fail":"auth"}`, wantCode: 0, wantStdout: `"_event":`},
		{name: "unknown flag", args: []string{"--verbose"}, wantCode: 2, wantStderr: "flag provided but not defined"},
		{name: "stray argument", args: []string{`{"lines":1}`}, wantCode: 2, wantStderr: "arguments are read as JSON on stdin"},
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStderr: "Returns a page of lines."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := execute(t, tt.env, tt.stdin, tt.args...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.wantStdout) {
				t.Errorf("stdout lacks %s:\n%s", tt.wantStdout, r.stdout)
			}
			if tt.wantStderr == "" && r.stderr != "" {
				t.Errorf("unexpected stderr: %s", r.stderr)
			}
			if !strings.Contains(r.stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %s:\n%s", tt.wantStderr, r.stderr)
			}
			if tt.stdin != "" && !json.Valid([]byte(r.stdout)) {
				t.Errorf("stdout is not one JSON value: %s", r.stdout)
			}
		})
	}
}

func TestLargeOutputIsTruncatedAtALine(t *testing.T) {
	r := execute(t, nil, `{"lines":20000}`)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	if len(r.stdout) > exectool.MaxOutputBytes {
		t.Fatalf("stdout is %d bytes, over the %d cap", len(r.stdout), exectool.MaxOutputBytes)
	}
	var res struct {
		Success bool
		URL     string
		Content string
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("truncated output is not JSON: %v", err)
	}
	if !res.Success || res.URL != "https://example.com/" {
		t.Errorf("other fields lost: %+v", res)
	}
	body, note, ok := strings.Cut(res.Content, "\n\n[Truncated")
	if !ok || !strings.Contains(note, "of 20001 lines") || !strings.Contains(note, `"offset"`) {
		t.Errorf("truncation note missing or wrong: %q", note)
	}
	if !strings.HasSuffix(body, "ünïcode") {
		t.Errorf("content not cut at a line boundary: ...%q", body[len(body)-40:])
	}
}

func TestFitLeavesSmallObjectsAlone(t *testing.T) {
	in := []byte(`{"b":1,"a":"x"}`)
	if got := exectool.Fit(in, 100); !bytes.Equal(got, in) {
		t.Errorf("Fit changed a small object: %s", got)
	}
	got := exectool.Fit([]byte(`{"a":[`+strings.Repeat(`1,`, 100)+`1]}`), 50)
	if !strings.Contains(string(got), `"success":false`) {
		t.Errorf("an object with no string to cut should become a failure: %s", got)
	}
}
