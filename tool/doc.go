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
// A tool whose input schema is only known at run time (another MCP server's) is declared with
// [NewRaw] from that schema, and a source whose tools change removes them with
// [Registry.Unregister].
//
// Its JSON Schema is derived from those types (github.com/google/jsonschema-go for the
// structure, the `schema` struct tag for the constraints JSON Schema needs and Go types
// cannot say: minimum, maximum, default, enum, …). That one schema is what every surface
// publishes: ikigai's --schema, MCP inputSchema/outputSchema, and the Anthropic and OpenAI
// tool formats.
//
// A [Registry] runs calls. Input is decoded, defaults are applied and the result is
// validated (internal/schemacheck) before the tool does any I/O;
// output is validated before it is returned. Failures are values: an [*Error] with a
// [Code], never a panic. Transient failures are retried once. Every call is traced as an
// OpenTelemetry span named "tool-<name>".
//
// The JSON an agent sees for a call is the [Result] envelope: the tool's output fields
// plus "success", "summary" and "durationMs"; or, on failure,
// {"success":false,"error","error_code","retryable","wasRetried","durationMs"}, with
// "violations" (and "moreViolations") when the arguments broke the schema.
//
// # Bounds
//
// Input is untrusted, so what a call produces is bounded whatever it is given:
//
//   - Arguments are at most [MaxArgumentBytes] (1 MiB).
//   - A validation error lists at most [MaxViolations] (20) violations, in order
//     of path, then "and K more" (moreViolations in the envelope); the fields an
//     object allows are listed once, with its first unknown field, at most 50 of
//     them. Violations beyond the 20 are counted, never described, so the work
//     is bounded too. Property names in paths are cut at 64 bytes, a
//     violation's message at 1 KiB.
//   - An error message is cut at [MaxErrorBytes] (8 KiB), a summary at
//     [MaxSummaryBytes] (1 KiB); what the registry logs at 1 KiB a value.
//   - A tool's output is at most [DefaultMaxOutputBytes] (16 MiB) as JSON
//     ([WithMaxOutputBytes]); a larger one fails with RESULT_TOO_LARGE. The
//     bound is checked on the output itself before it is encoded, so an output
//     that repeats one large string cannot make an enormous encoding.
//   - Within that, a successful result is as large as the tool's output: the registry does
//     not cut it, since a CLI or MCP client may want it whole. Surfaces that pass
//     results on to a model, an event stream or a database bound them with
//     [Result.Bounded] or [BoundJSON], by default to [DefaultMaxResultBytes]
//     (64 KiB): long strings, arrays and objects are cut, each cut marked with
//     "…", and the result gets a [TruncatedField] note saying how large it was.
//
// # Cached results
//
// A registry made with [WithResultCache] reuses the successful results of the
// tools its policies name, for each tool's TTL, keyed by the tool, its output
// schema and its canonical arguments (defaults applied, keys sorted). Such a
// tool accepts two more optional arguments, "fresh" (true: call the upstream
// and refresh the cache) and "maxAgeSeconds" (reuse only a result at most that
// old), and a result from the cache carries "cached": true and
// "cachedAgeSeconds". Failures are never kept, nor results over
// [MaxCachedResultBytes]. Identical concurrent calls make one call of the
// tool: in one process they join it, and processes sharing the cache wait
// (at most [DefaultFillWait]) for the one holding the key's lock. A cache
// that fails is logged and bypassed; the call goes on without it.
//
// A policy with InTool set leaves the caching to the tool, for results that
// mix cached upstream answers with data read on every call: the tool takes the
// same two arguments, reads the age it may accept with [CacheMaxAge], and
// reports what it reused with [ReportCached].
//
// # Secrets
//
// The values given to [WithSecrets] (API keys and tokens) are replaced by
// "[REDACTED]" in everything a call produces: the output's strings (object keys
// and nested values included), the summary, the error, its violations and its
// event, the span and the log lines. An upstream that echoes a key in a 200
// answer cannot pass it on to a CLI, a model or a database. A key that arrives
// while the registry runs (set from the page's Settings) joins with
// [Registry.AddSecrets] and is scrubbed from the next call on.
package tool
