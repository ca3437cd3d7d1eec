// Package tool is the contract every Toolport tool is built on.
//
// A tool is declared once, with Go types for its input and output:
//
//	type SearchInput struct {
//		Query string `json:"query" jsonschema:"The search query" schema:"minLength=2"`
//		Count int    `json:"count,omitempty" jsonschema:"Number of results" schema:"minimum=1,maximum=20,default=10"`
//	}
//	t := tool.Must(tool.New(tool.Spec{Name: "search", Description: "…"}, search))
//
// Its JSON Schema is derived from those types (github.com/google/jsonschema-go for the
// structure, the `schema` struct tag for the constraints JSON Schema needs and Go types
// cannot say: minimum, maximum, default, enum, …). That one schema is what every surface
// publishes: ikigai's --schema, MCP inputSchema/outputSchema, and the Anthropic and OpenAI
// tool formats.
//
// A [Registry] runs calls. Input is decoded, defaults are applied and the result is
// validated (github.com/santhosh-tekuri/jsonschema/v6) before the tool does any I/O;
// output is validated before it is returned. Failures are values: an [*Error] with a
// [Code], never a panic. Transient failures are retried once. Every call is traced as an
// OpenTelemetry span named "tool-<name>".
//
// The JSON an agent sees for a call is the [Result] envelope: the tool's output fields
// plus "success", "summary" and "durationMs"; or, on failure,
// {"success":false,"error","error_code","retryable","wasRetried","durationMs"}.
package tool
