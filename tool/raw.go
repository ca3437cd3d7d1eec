package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolport/toolport/internal/schemacheck"
)

// MaxRawSchemaBytes bounds the input schema a [NewRaw] tool is declared
// with: it comes from another program (an MCP server's tools/list).
const MaxRawSchemaBytes = 256 << 10

// RawFunc is the implementation of a tool declared with [NewRaw]: it gets the
// arguments as checked JSON (an object, defaults applied).
type RawFunc[Out Summarizer] func(ctx context.Context, args json.RawMessage) (Out, error)

// NewRaw declares a tool whose input schema is given as JSON Schema instead of
// being derived from a Go type: a tool of another MCP server, whose schema is
// only known at run time. The output is still a Go type, so results have the
// same envelope, bounds and output check as every other tool's.
//
// The schema is published as given. Arguments are checked against it when
// internal/schemacheck implements every keyword it uses; otherwise (draft-07
// "$schema", "oneOf", "$ref", …) only that they form a JSON object of at most
// [MaxArgumentBytes], and the tool's own program remains the authority on
// them. A schema that is not a JSON object of type "object" is an error. A
// raw tool cannot have a result-cache policy.
func NewRaw[Out Summarizer](spec Spec, inputSchema json.RawMessage, fn RawFunc[Out]) (*Tool, error) {
	if spec.Name == "" || spec.Description == "" {
		return nil, errors.New("tool: a tool needs a name and a description")
	}
	if len(inputSchema) > MaxRawSchemaBytes {
		return nil, fmt.Errorf("tool %s: input schema: %d bytes, limit %d", spec.Name, len(inputSchema), MaxRawSchemaBytes)
	}
	doc := &jsonschema.Schema{}
	if len(bytes.TrimSpace(inputSchema)) == 0 {
		inputSchema = []byte(`{"type":"object"}`)
	}
	if err := json.Unmarshal(inputSchema, doc); err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", spec.Name, err)
	}
	if doc.Type != "object" {
		return nil, fmt.Errorf("tool %s: input schema: type must be \"object\", not %q", spec.Name, doc.Type)
	}
	t, err := New(spec, func(context.Context, struct{}) (Out, error) {
		var zero Out
		return zero, errors.New("unreachable: replaced below")
	})
	if err != nil {
		return nil, err
	}
	t.inputType = nil
	t.input = lenientValidator(doc)
	t.invoke = func(ctx context.Context, args []byte) (any, error) { return fn(ctx, args) }
	return t, nil
}

// lenientValidator checks values against doc when schemacheck can compile
// it, and only that they are objects when it cannot.
func lenientValidator(doc *jsonschema.Schema) *validator {
	return &validator{
		doc: func() *jsonschema.Schema { return doc },
		compiled: sync.OnceValues(func() (*schemacheck.Schema, error) {
			if c, err := schemacheck.Compile(doc); err == nil {
				return c, nil
			}
			return schemacheck.Compile(&jsonschema.Schema{Type: "object"})
		}),
	}
}

// Unregister removes the named tools from r; names it does not hold are
// ignored. It is for tool sources that change at run time (an MCP server's
// tools/list_changed). Registries made from r with Select or Available
// before the call keep the tools they were made with.
func (r *Registry) Unregister(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range names {
		if _, ok := r.tools[name]; !ok {
			continue
		}
		delete(r.tools, name)
		for i, n := range r.order {
			if n == name {
				r.order = append(r.order[:i:i], r.order[i+1:]...)
				break
			}
		}
	}
}

// Replace swaps registered tools for new declarations of the same names
// (a pack declared again with new keys), in place: a call that looks a
// tool up sees the old or the new one, never none, and the order is kept.
// Names not registered are skipped; it returns those it replaced.
func (r *Registry) Replace(tools ...*Tool) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var done []string
	for _, t := range tools {
		if _, ok := r.tools[t.Name()]; !ok {
			continue
		}
		if _, ok := r.policies[t.Name()]; ok && r.cache != nil {
			ct, err := cacheable(t)
			if err != nil {
				return done, err
			}
			t = ct
		}
		r.tools[t.Name()] = t
		done = append(done, t.Name())
	}
	return done, nil
}
