package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// maxToolSets bounds how many distinct tool sets a provider keeps prepared.
// An agent sends one set (its registry's) on every call; a few more cover
// servers that select tools per request without letting the cache grow.
const maxToolSets = 8

// toolCache holds a provider's tool list already encoded for its API, so
// that a model call does not decode every schema into maps and encode them
// again (with 28 tools, ~24 KB of JSON on every call). It is keyed by the
// content of the definitions, not the slice's identity: a caller that edits
// its slice in place gets a fresh encoding, never a stale one. Comparing
// 24 KB of bytes costs far less than decoding and re-encoding them.
type toolCache[T any] struct {
	mu   sync.Mutex
	sets []*toolSet[T] // most recently used first
}

type toolSet[T any] struct {
	defs  []ToolDef // a private copy, compared with each request's
	tools []T       // shared by concurrent requests: read only
}

// get returns the prepared tools for defs, building them with build (which
// must not keep defs) on a miss. Errors are not cached.
func (c *toolCache[T]) get(defs []ToolDef, build func([]ToolDef) ([]T, error)) ([]T, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	for i, s := range c.sets {
		if sameDefs(s.defs, defs) {
			copy(c.sets[1:i+1], c.sets[:i])
			c.sets[0] = s
			c.mu.Unlock()
			return s.tools, nil
		}
	}
	c.mu.Unlock()

	// Built outside the lock: two requests that miss together both build,
	// which is cheaper than making every request wait on one.
	tools, err := build(defs)
	if err != nil {
		return nil, err
	}
	s := &toolSet[T]{defs: cloneDefs(defs), tools: tools}
	c.mu.Lock()
	if len(c.sets) >= maxToolSets {
		c.sets = c.sets[:maxToolSets-1]
	}
	c.sets = append([]*toolSet[T]{s}, c.sets...)
	c.mu.Unlock()
	return tools, nil
}

func sameDefs(a, b []ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description ||
			!bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}

func cloneDefs(defs []ToolDef) []ToolDef {
	out := make([]ToolDef, len(defs))
	for i, d := range defs {
		out[i] = ToolDef{Name: d.Name, Description: d.Description, InputSchema: bytes.Clone(d.InputSchema)}
	}
	return out
}

// encodeTools marshals each of tools once; requestBody sends them as encoded.
func encodeTools[T any](defs []ToolDef, tools []T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("llm: tool %s: encoding: %w", defs[i].Name, err)
		}
		out[i] = b
	}
	return out, nil
}

// requestBody is the JSON body of a streaming model call: the SDK's own
// encoding of params, which carry no tools, with "stream": true and the
// prepared tools added. Handed a tool's raw JSON inside params, the SDKs'
// encoders validate and compact every byte of it again on each call (~27 KB
// with the packs' tools, most of a request's encoding cost); a body given
// whole is sent as is. "stream" goes first because the SDKs then set it
// themselves with sjson, which scans the keys in order and stops there.
func requestBody(params json.Marshaler, tools []json.RawMessage) ([]byte, error) {
	enc, err := params.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("llm: encoding the request: %w", err)
	}
	enc = bytes.TrimSpace(enc)
	if len(enc) < 2 || enc[0] != '{' || enc[len(enc)-1] != '}' {
		return nil, fmt.Errorf("llm: the request encodes as %.40q, not an object", enc)
	}
	size := len(enc) + 32
	for _, t := range tools {
		size += len(t) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, size))
	b.WriteString(`{"stream":true`)
	if len(tools) > 0 {
		b.WriteString(`,"tools":[`)
		for i, t := range tools {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(t)
		}
		b.WriteByte(']')
	}
	if rest := bytes.TrimSpace(enc[1 : len(enc)-1]); len(rest) > 0 {
		b.WriteByte(',')
		b.Write(rest)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
