package opendata

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// serverRegistry returns a registry holding the pack's tools pointed at s.
func serverRegistry(t *testing.T, s *tooltest.Server) *tool.Registry {
	t.Helper()
	return newRegistry(t, Config{BaseURL: s.URL, HTTPClient: s.Client()})
}

func newRegistry(t *testing.T, cfg Config) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond))
	if err := reg.Register(Tools(cfg)...); err != nil {
		t.Fatal(err)
	}
	return reg
}

// okJSON serves a CKAN success envelope around result.
func okJSON(t testing.TB, result any) http.HandlerFunc {
	raw, err := json.Marshal(map[string]any{"help": "http://127.0.0.1/api/3/action/help_show", "success": true, "result": result})
	if err != nil {
		t.Fatal(err)
	}
	return tooltest.Respond(http.StatusOK, "application/json;charset=utf-8", raw)
}

// call runs a tool and decodes its envelope.
func call(t *testing.T, reg *tool.Registry, name, args string) (*tool.Result, map[string]any) {
	t.Helper()
	res := reg.Call(context.Background(), name, json.RawMessage(args))
	var env map[string]any
	dec := json.NewDecoder(bytes.NewReader(res.JSON))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("%s envelope is not JSON: %v\n%s", name, err, res.JSON)
	}
	return res, env
}

// mustOK fails the test unless the call succeeded, and decodes its output
// into out.
func mustOK(t *testing.T, res *tool.Result, out any) {
	t.Helper()
	if !res.OK() {
		t.Fatalf("call failed: %s", res.JSON)
	}
	if err := json.Unmarshal(res.JSON, out); err != nil {
		t.Fatalf("decoding output: %v", err)
	}
}

// mustFail fails the test unless the call failed with code, and returns the
// error.
func mustFail(t *testing.T, res *tool.Result, code tool.Code) *tool.Error {
	t.Helper()
	if res.OK() {
		t.Fatalf("call succeeded, want %s: %s", code, res.JSON)
	}
	if res.Err.Code != code {
		t.Fatalf("error code = %s, want %s (%s)", res.Err.Code, code, res.JSON)
	}
	return res.Err
}
