package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/tool"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"What to echo"`
}
type echoOut struct {
	Text string `json:"text"`
}

func (o echoOut) Summary() string { return o.Text }

func TestToolDefsFromRegistry(t *testing.T) {
	reg := tool.NewRegistry()
	echo := tool.Must(tool.New(tool.Spec{Name: "echo", Description: "Echo the text back"},
		func(ctx context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil }))
	if err := reg.Register(echo); err != nil {
		t.Fatal(err)
	}
	defs, err := llm.ToolDefs(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].Name != "echo" || defs[0].Description != "Echo the text back" {
		t.Fatalf("defs = %+v", defs)
	}
	var schema struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(defs[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["text"] == nil || len(schema.Required) != 1 {
		t.Errorf("schema = %s", defs[0].InputSchema)
	}
}
