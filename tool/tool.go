package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Summarizer is implemented by every tool output: one human line that says what
// the call found ("10 results for \"semantic kernel\""). Surfaces show it in
// progress lines and tool cards; agents read it first.
type Summarizer interface {
	Summary() string
}

// Texter is implemented by a tool output that has a better text form for a
// model than its JSON (a page's Markdown under a short header, a compact
// list of search results): every character of a result is paid for on
// every later model call of a turn. Surfaces that hand a model text (MCP's
// text content, the chat's tool_result) send [Result.ModelText]; the JSON
// stays the structured result (MCP structuredContent, the page's cards,
// `toolport call`). The model reads the output's summary line, then Text:
// it must carry what a model needs to go on (the next page's offset, ids for
// other tools), since it may see nothing else.
type Texter interface {
	Text() string
}

// Func is a tool's implementation. It receives validated input with defaults
// applied and returns the output, or an error; return an *Error (see [Errorf]) to
// choose the failure code agents see.
type Func[In any, Out Summarizer] func(ctx context.Context, in In) (Out, error)

// Annotations are hints about a tool's behaviour for hosts (MCP's ToolAnnotations).
type Annotations struct {
	ReadOnly    bool // does not change anything it touches
	Destructive bool // may delete or overwrite (meaningful when not ReadOnly)
	Idempotent  bool // calling twice with the same input has no further effect
	OpenWorld   bool // reaches outside Toolport (the web, an upstream API)
	// UserAccount marks a tool that writes to the user's own account with an
	// outside service (saving a playlist to TIDAL): a surface that can ask
	// the person asks before it runs (MCP elicitation).
	UserAccount bool
}

// Spec names and describes a tool.
type Spec struct {
	Name        string // the name agents call, e.g. "web_search_brave"
	Title       string // a friendly name for people, e.g. "Brave Search"
	Description string // what the model reads to decide when to call it
	Pack        string // the pack it belongs to: "web", "ckan", "music"
	Annotations Annotations
	// Notice is what people should know before relying on the tool (its
	// upstream is about to end), shown beside it in listings; "" for none.
	Notice string
	// Available, when set, reports whether the tool can work with the
	// configuration it was declared with: nil if so, else an error saying
	// what is missing ("BRAVE_API_KEY is not set"). A chat agent offers its
	// model only available tools, since calling any other can only fail;
	// listings still show them, with the reason. Nil means always available.
	Available func() error
}

// Tool is a declared tool: its definition and its type-erased implementation.
// Build one with [New]; call it through a [Registry].
type Tool struct {
	spec   Spec
	input  *validator
	output *validator
	// inputType is the input's Go type: its JSON field names are known
	// from it without building the schema.
	inputType reflect.Type
	// envelope is the published output schema: the tool's fields plus the
	// success/summary/durationMs every result carries. It is built on first
	// use: cloning schemas is most of what declaring a tool costs, and
	// `toolport list` never reads them.
	envelope func() *jsonschema.Schema
	invoke   func(ctx context.Context, args []byte) (any, error)
	// decodeOutput reads an output back from its JSON (a cached result).
	decodeOutput func([]byte) (any, error)
	// cacheVersion names the output's shape in cache keys (cacheable tools).
	// It hashes the encoded output schema, so it is worked out on the first
	// cached call, not when the tool is registered.
	cacheVersion func() string
}

// New declares a tool from its Go input and output types. The input type must be
// a struct; its schema is derived by [SchemaFor] on first use. It fails for a
// tool without a name or description, or types that are not structs: a
// programming error, so most callers wrap it in [Must]. A schema that cannot
// be built from the types or their tags makes [Tool.CheckSchemas] fail, and
// every call with it (fail closed); test every tool with CheckSchemas.
func New[In any, Out Summarizer](spec Spec, fn Func[In, Out]) (*Tool, error) {
	if spec.Name == "" || spec.Description == "" {
		return nil, errors.New("tool: a tool needs a name and a description")
	}
	if k := reflect.TypeFor[In]().Kind(); k != reflect.Struct {
		return nil, fmt.Errorf("tool %s: input type must be a struct, not %v", spec.Name, k)
	}
	outType := reflect.TypeFor[Out]()
	for outType.Kind() == reflect.Pointer {
		outType = outType.Elem()
	}
	if outType.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool %s: output type must be a struct, not %v", spec.Name, outType.Kind())
	}
	// The schemas are built from the Go types on first use (reflection over
	// every field, about 1 MB of allocations for the built-in packs):
	// `toolport list` and `TOOL --schema` of another tool need none of them,
	// and a server builds those of the tools it lists or calls.
	input := newLazyValidator(func() (*jsonschema.Schema, error) {
		s, err := schemaForType(reflect.TypeFor[In](), true)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input: %w", spec.Name, err)
		}
		return s, nil
	})
	output := newLazyValidator(func() (*jsonschema.Schema, error) {
		s, err := schemaForType(reflect.TypeFor[Out](), false)
		if err != nil {
			return nil, fmt.Errorf("tool %s: output: %w", spec.Name, err)
		}
		return s, nil
	})
	t := &Tool{spec: spec, input: input, output: output, inputType: reflect.TypeFor[In](), envelope: sync.OnceValue(func() *jsonschema.Schema { return envelopeSchema(output.doc()) })}
	t.invoke = func(ctx context.Context, args []byte) (any, error) {
		var v In
		// UseNumber keeps large integers exact in free-form (map[string]any) inputs.
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			// The schema admitted a value the Go type cannot hold (an integer
			// beyond int64, say): still the caller's mistake.
			return nil, &Error{Code: CodeValidation, Message: "arguments: " + err.Error(), Err: err}
		}
		return fn(ctx, v)
	}
	t.decodeOutput = func(raw []byte) (any, error) {
		var out Out
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return t, nil
}

// Must panics if err is not nil. It is for declaring tools at start-up.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// Name is the name agents call the tool by.
func (t *Tool) Name() string { return t.spec.Name }

// Spec returns the tool's name, description and annotations.
func (t *Tool) Spec() Spec { return t.spec }

// Unavailable returns why the tool cannot work with its configuration
// (see [Spec.Available]), or "" when it can.
func (t *Tool) Unavailable() string {
	if t.spec.Available == nil {
		return ""
	}
	if err := t.spec.Available(); err != nil {
		return err.Error()
	}
	return ""
}

// CheckSchemas compiles the tool's input and output schemas, which
// otherwise happens on the first call: tests use it to catch a schema that
// does not compile without calling every tool.
func (t *Tool) CheckSchemas() error {
	if _, err := t.input.compiled(); err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.spec.Name, err)
	}
	if _, err := t.output.compiled(); err != nil {
		return fmt.Errorf("tool %s: output schema: %w", t.spec.Name, err)
	}
	return nil
}

// InputSchema returns a copy of the tool's input schema.
func (t *Tool) InputSchema() *jsonschema.Schema { return t.input.doc().CloneSchemas() }

// OutputSchema returns a copy of the schema of a successful result, envelope
// fields included.
func (t *Tool) OutputSchema() *jsonschema.Schema { return t.envelope().CloneSchemas() }

// ValidateArguments checks raw arguments without calling the tool, returning the
// normalised arguments (defaults applied) or a CodeValidation error.
func (t *Tool) ValidateArguments(raw []byte) ([]byte, error) {
	args, e := t.input.decodeArgs(raw)
	if e != nil {
		return nil, e
	}
	return args, nil
}

// envelopeSchema adds the fields every successful result carries.
func envelopeSchema(out *jsonschema.Schema) *jsonschema.Schema {
	env := out.CloneSchemas()
	if env.Properties == nil {
		env.Properties = map[string]*jsonschema.Schema{}
	}
	env.Properties["success"] = &jsonschema.Schema{Type: "boolean", Description: "Always true for a successful call", Const: ptr[any](true)}
	env.Properties["summary"] = &jsonschema.Schema{Type: "string", Description: "One line saying what the call found"}
	env.Properties["durationMs"] = &jsonschema.Schema{Type: "integer", Description: "How long the call took, in milliseconds", Minimum: ptr(0.0)}
	env.PropertyOrder = append([]string{"success", "summary", "durationMs"}, env.PropertyOrder...)
	env.Required = append([]string{"success", "summary", "durationMs"}, env.Required...)
	return env
}

func ptr[T any](v T) *T { return &v }

// jsonFieldNames lists the JSON names of a struct's fields as encoding/json
// names them (embedded structs' fields promoted, "-" left out).
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		embedded := f.Anonymous && name == "" // its fields are listed instead
		if !f.IsExported() || embedded || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}
