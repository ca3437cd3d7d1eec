package mcphost

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Output is what a call of an attached tool returns: the server's content
// blocks, with binary data left out (a model cannot read base64 and it
// would crowd out everything else), and its structured content.
type Output struct {
	// Server names the MCP server that answered.
	Server  string    `json:"server" jsonschema:"The MCP server that answered"`
	Content []Content `json:"content" jsonschema:"The result's content blocks"`
	// Structured is the server's structuredContent; a value that is not an
	// object is given as {"value": …}.
	Structured map[string]any `json:"structuredContent,omitempty" jsonschema:"The result's structured content"`

	summary string
}

// Content is one content block of a result.
type Content struct {
	Type     string `json:"type" jsonschema:"text, image, audio, resource_link or resource"`
	Text     string `json:"text,omitempty" jsonschema:"The text (text blocks, text resources)"`
	MIMEType string `json:"mimeType,omitempty" jsonschema:"The media type"`
	URI      string `json:"uri,omitempty" jsonschema:"The resource's URI"`
	Name     string `json:"name,omitempty" jsonschema:"The resource's name"`
	// Bytes is the size of binary data left out.
	Bytes int `json:"bytes,omitempty" jsonschema:"The size of binary data not passed on"`
}

// Summary is the first line of the first text block, or a count.
func (o *Output) Summary() string { return o.summary }

func newOutput(server string, res *mcp.CallToolResult) *Output {
	o := &Output{Server: server, Content: make([]Content, 0, len(res.Content))}
	for _, c := range res.Content {
		o.Content = append(o.Content, content(c))
	}
	switch v := res.StructuredContent.(type) {
	case nil:
	case map[string]any:
		o.Structured = v
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(v, &m) == nil && m != nil {
			o.Structured = m
		} else {
			var val any
			if json.Unmarshal(v, &val) == nil {
				o.Structured = map[string]any{"value": val}
			}
		}
	default:
		o.Structured = map[string]any{"value": v}
	}
	o.summary = fmt.Sprintf("%d content blocks from %s", len(o.Content), server)
	for _, c := range o.Content {
		if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
			line, _, _ := strings.Cut(strings.TrimSpace(c.Text), "\n")
			o.summary = clip(line, 200)
			break
		}
	}
	return o
}

func content(c mcp.Content) Content {
	switch v := c.(type) {
	case *mcp.TextContent:
		return Content{Type: "text", Text: clip(v.Text, maxTextBytes)}
	case *mcp.ImageContent:
		return Content{Type: "image", MIMEType: v.MIMEType, Bytes: len(v.Data)}
	case *mcp.AudioContent:
		return Content{Type: "audio", MIMEType: v.MIMEType, Bytes: len(v.Data)}
	case *mcp.ResourceLink:
		return Content{Type: "resource_link", URI: v.URI, Name: v.Name, MIMEType: v.MIMEType}
	case *mcp.EmbeddedResource:
		out := Content{Type: "resource"}
		if r := v.Resource; r != nil {
			out.URI, out.MIMEType, out.Text, out.Bytes = r.URI, r.MIMEType, clip(r.Text, maxTextBytes), len(r.Blob)
		}
		return out
	}
	return Content{Type: fmt.Sprintf("%T", c)}
}

// resultText is the text of a result's text blocks, for an error message.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "(no text)"
	}
	return strings.Join(parts, "\n")
}
