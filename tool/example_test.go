package tool_test

import (
	"context"
	"fmt"

	"github.com/toolport/toolport/tool"
)

type greetInput struct {
	Name  string `json:"name" jsonschema:"Who to greet" schema:"minLength=1,maxLength=40"`
	Times int    `json:"times,omitempty" jsonschema:"How many times" schema:"minimum=1,maximum=3,default=1"`
}

type greetOutput struct {
	Greetings []string `json:"greetings"`
}

func (o greetOutput) Summary() string { return fmt.Sprintf("%d greetings", len(o.Greetings)) }

func greet(ctx context.Context, in greetInput) (greetOutput, error) {
	var out greetOutput
	for range in.Times {
		out.Greetings = append(out.Greetings, "hello, "+in.Name)
	}
	return out, nil
}

func Example() {
	reg := tool.NewRegistry()
	reg.Register(tool.Must(tool.New(tool.Spec{Name: "greet", Description: "Greets someone."}, greet)))

	ok := reg.Call(context.Background(), "greet", []byte(`{"name":"Ada","times":2}`))
	fmt.Println(ok.OK(), ok.Summary)

	bad := reg.Call(context.Background(), "greet", []byte(`{"name":"Ada","times":10}`))
	fmt.Println(bad.Err.Code, bad.Err.Message)
	// Output:
	// true 2 greetings
	// VALIDATION times: must be <= 3, got 10
}
