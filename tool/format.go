package tool

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Format names a way of publishing tool definitions.
type Format string

// The definition formats a registry renders.
const (
	FormatIkigai    Format = "json"      // {"name","description","parameters"}: ikigai's --schema
	FormatAnthropic Format = "anthropic" // Messages API tools: {"name","description","input_schema"}
	FormatOpenAI    Format = "openai"    // Chat Completions tools: {"type":"function","function":{…}}
	FormatMCP       Format = "mcp"       // MCP Tool: {"name","title","description","inputSchema","outputSchema","annotations"}
	FormatGemini    Format = "gemini"    // Gemini API FunctionDeclaration: {"name","description","parameters"} in its OpenAPI 3.0 subset
	// FormatOpenAIResponses is a Responses API function tool:
	// {"type":"function","name","description","parameters","strict":false}.
	// It is flat, unlike Chat Completions', and strict is said: the
	// Responses API takes it as true when absent, and strict mode refuses
	// optional parameters, which most tools have.
	FormatOpenAIResponses Format = "openai-responses"
)

// Formats lists the supported formats.
func Formats() []Format {
	return []Format{FormatIkigai, FormatAnthropic, FormatOpenAI, FormatOpenAIResponses, FormatMCP, FormatGemini}
}

// Definition renders the tool's definition in format f as a JSON-encodable value.
func (t *Tool) Definition(f Format) (any, error) {
	in := t.InputSchema()
	switch f {
	case FormatIkigai:
		return struct {
			Name        string             `json:"name"`
			Description string             `json:"description"`
			Parameters  *jsonschema.Schema `json:"parameters"`
		}{t.spec.Name, t.spec.Description, in}, nil
	case FormatAnthropic:
		return struct {
			Name        string             `json:"name"`
			Description string             `json:"description"`
			InputSchema *jsonschema.Schema `json:"input_schema"`
		}{t.spec.Name, t.spec.Description, in}, nil
	case FormatOpenAI:
		type function struct {
			Name        string             `json:"name"`
			Description string             `json:"description"`
			Parameters  *jsonschema.Schema `json:"parameters"`
		}
		return struct {
			Type     string   `json:"type"`
			Function function `json:"function"`
		}{"function", function{t.spec.Name, t.spec.Description, in}}, nil
	case FormatOpenAIResponses:
		return struct {
			Type        string             `json:"type"`
			Name        string             `json:"name"`
			Description string             `json:"description"`
			Parameters  *jsonschema.Schema `json:"parameters"`
			Strict      bool               `json:"strict"`
		}{"function", t.spec.Name, t.spec.Description, in, false}, nil
	case FormatMCP:
		a := t.spec.Annotations
		type annotations struct {
			Title           string `json:"title,omitempty"`
			ReadOnlyHint    bool   `json:"readOnlyHint"`
			DestructiveHint bool   `json:"destructiveHint"`
			IdempotentHint  bool   `json:"idempotentHint"`
			OpenWorldHint   bool   `json:"openWorldHint"`
		}
		return struct {
			Name         string             `json:"name"`
			Title        string             `json:"title,omitempty"`
			Description  string             `json:"description"`
			InputSchema  *jsonschema.Schema `json:"inputSchema"`
			OutputSchema *jsonschema.Schema `json:"outputSchema"`
			Annotations  annotations        `json:"annotations"`
		}{t.spec.Name, t.spec.Title, t.spec.Description, in, t.OutputSchema(),
			annotations{t.spec.Title, a.ReadOnly, a.Destructive && !a.ReadOnly, a.Idempotent, a.OpenWorld}}, nil
	case FormatGemini:
		return t.geminiDefinition(), nil
	}
	return nil, fmt.Errorf("unknown definition format %q (want one of %v)", f, Formats())
}

// DefinitionJSON renders the definition as indented JSON.
func (t *Tool) DefinitionJSON(f Format) ([]byte, error) {
	d, err := t.Definition(f)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(d, "", "  ")
}

// Definitions renders every tool of the registry in format f, in registration order.
func (r *Registry) Definitions(f Format) ([]any, error) {
	tools := r.Tools()
	out := make([]any, 0, len(tools))
	for _, t := range tools {
		d, err := t.Definition(f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
