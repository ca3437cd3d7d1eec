package tool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolport/toolport/tool"
)

type listIn struct {
	N int `json:"n"`
}

type listOut struct {
	Items []string `json:"items"`
}

func (o listOut) Summary() string { return "a list" }
func (o listOut) Text() string    { return strings.Join(o.Items, "\n") }

// TestModelTextIsTheSummaryThenTheOutputsText: an output with a text form
// reaches a model as its summary line and that text, scrubbed of secrets
// and bounded on request; a failure stays the JSON envelope.
func TestModelTextIsTheSummaryThenTheOutputsText(t *testing.T) {
	list := tool.Must(tool.New(tool.Spec{Name: "list", Description: "List"}, func(ctx context.Context, in listIn) (listOut, error) {
		if in.N < 0 {
			return listOut{}, tool.Errorf(tool.CodeValidation, "n must not be negative")
		}
		items := []string{"alpha", "sekrit-key"}
		for range in.N {
			items = append(items, strings.Repeat("x", 100))
		}
		return listOut{Items: items}, nil
	}))
	reg := tool.NewRegistry(tool.WithSecrets("sekrit-key"))
	if err := reg.Register(list); err != nil {
		t.Fatal(err)
	}
	res := reg.Call(context.Background(), "list", []byte(`{"n":0}`))
	if !res.HasText() || res.ModelText() != "a list\nalpha\n[REDACTED]" {
		t.Errorf("model text = %q", res.ModelText())
	}
	long := reg.Call(context.Background(), "list", []byte(`{"n":50}`))
	if got := long.BoundedText(tool.MinResultBytes); len(got) > tool.MinResultBytes || !strings.Contains(got, "…(cut:") {
		t.Errorf("bounded text: %d bytes, ends %q", len(got), got[max(len(got)-80, 0):])
	}
	failed := reg.Call(context.Background(), "list", []byte(`{"n":-1}`))
	if failed.HasText() || failed.ModelText() != string(failed.JSON) {
		t.Errorf("a failure reads %q", failed.ModelText())
	}
}
