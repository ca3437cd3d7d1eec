// Package exectool runs one Toolport tool as an ikigai-style external executable:
//
//	web-fetch-tool --schema          prints the tool definition and exits
//	echo '{"url":"…"}' | web-fetch-tool   reads JSON arguments on stdin, writes the result JSON on stdout
//
// A failure exits 1 with {"success":false,…} on stdout; a host-facing notice such
// as config_required goes to stderr as one JSON line. Hosts that treat a non-zero
// exit as a crash ask for --exit-zero (or TOOLPORT_EXEC_EXIT_ZERO=1): failures then
// exit 0 and the notice rides inside the stdout JSON as "_event".
package exectool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/tool"
)

// Limits of the ikigai host: it reads at most 64 KB of a call's stdout and 8 KB
// of --schema output.
const (
	MaxOutputBytes = 64 << 10
	MaxSchemaBytes = 8 << 10
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // the tool failed; the reason is on stdout
	ExitUsage   = 2 // the command line was wrong
)

// Command is one tool exposed as an executable.
type Command struct {
	Registry *tool.Registry // holds the tool
	Tool     string         // its name
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Getenv   func(string) string
	// Help is extra text for --help (configuration, caveats).
	Help string
}

// Run executes the command with its arguments (without the program name) and
// returns the exit code.
func (c *Command) Run(ctx context.Context, args []string) int {
	t, ok := c.Registry.Lookup(c.Tool)
	if !ok {
		fmt.Fprintf(c.Stderr, "internal error: tool %q is not registered\n", c.Tool)
		return ExitFailure
	}
	fs := flag.NewFlagSet(c.Tool, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	schema := fs.Bool("schema", false, "print the tool's JSON definition and exit")
	exitZero := fs.Bool("exit-zero", c.Getenv != nil && c.Getenv("TOOLPORT_EXEC_EXIT_ZERO") == "1",
		"exit 0 on tool failures and put host events in the stdout JSON as \"_event\" (env TOOLPORT_EXEC_EXIT_ZERO=1)")
	fs.Usage = func() {
		fmt.Fprintf(c.Stderr, "Usage: %s [--schema] [--exit-zero] < arguments.json\n\n%s\n\n", fs.Name(), t.Spec().Description)
		if c.Help != "" {
			fmt.Fprintf(c.Stderr, "%s\n\n", strings.TrimSpace(c.Help))
		}
		fmt.Fprintf(c.Stderr, "Reads the tool's JSON arguments on stdin and writes the result JSON on stdout.\nExit status: 0 success, 1 tool failure, 2 usage error.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "%s: unexpected argument %q (arguments are read as JSON on stdin)\n", fs.Name(), fs.Arg(0))
		return ExitUsage
	}
	if *schema {
		out, err := t.DefinitionJSON(tool.FormatIkigai)
		if err != nil {
			fmt.Fprintf(c.Stderr, "internal error: %v\n", err)
			return ExitFailure
		}
		if len(out) > MaxSchemaBytes {
			// Indentation is a luxury the 8 KB cap does not always afford.
			out, _ = json.Marshal(json.RawMessage(out))
		}
		c.Stdout.Write(append(out, '\n'))
		return ExitOK
	}

	input, err := io.ReadAll(io.LimitReader(c.Stdin, tool.MaxArgumentBytes+1))
	if err != nil {
		fmt.Fprintf(c.Stderr, "%s: reading stdin: %v\n", fs.Name(), err)
		return ExitUsage
	}
	res := c.Registry.Call(ctx, c.Tool, input)
	out := Fit(res.JSON, MaxOutputBytes-1)

	if res.Err != nil && res.Err.Event != nil {
		if *exitZero {
			out = withEvent(out, res.Err.Event)
		} else {
			ev, _ := tool.Marshal(res.Err.Event)
			c.Stderr.Write(append(ev, '\n'))
		}
	}
	c.Stdout.Write(append(out, '\n'))
	if res.Err != nil && !*exitZero {
		return ExitFailure
	}
	return ExitOK
}

// withEvent adds "_event" to a JSON object.
func withEvent(obj []byte, ev *tool.Event) []byte {
	raw, err := tool.Marshal(ev)
	if err != nil || len(obj) < 2 {
		return obj
	}
	var b bytes.Buffer
	b.Write(obj[:len(obj)-1])
	b.WriteString(`,"_event":`)
	b.Write(raw)
	b.WriteByte('}')
	return b.Bytes()
}

// Fit shrinks a JSON object to at most max bytes by cutting its longest
// top-level string field (a fetched page's content, say) at a line boundary and
// saying so at the cut. Field order is kept. An object that cannot be made to
// fit is replaced by a failure envelope that says why.
func Fit(obj []byte, max int) []byte {
	if len(obj) <= max {
		return obj
	}
	fields, err := splitObject(obj)
	if err != nil {
		return tooLarge(len(obj), max)
	}
	longest, size := -1, 0
	for i, f := range fields {
		if len(f.value) > size && len(f.value) > 0 && f.value[0] == '"' {
			longest, size = i, len(f.value)
		}
	}
	if longest < 0 {
		return tooLarge(len(obj), max)
	}
	var s string
	if json.Unmarshal(fields[longest].value, &s) != nil {
		return tooLarge(len(obj), max)
	}
	totalLines := strings.Count(s, "\n") + 1
	over := len(obj) - max
	// Escaping can make the encoded string longer than s, so cut, measure and
	// cut again until it fits.
	keep := len(s) - over - 300
	for keep > 0 {
		cut := s[:keep]
		for !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		if nl := strings.LastIndexByte(cut, '\n'); nl > 0 {
			cut = cut[:nl]
		}
		shown := strings.Count(cut, "\n") + 1
		note := fmt.Sprintf("\n\n[Truncated to fit the host's %d KB output limit: showing %d of %d lines. Ask for fewer lines with \"limit\", or page on with \"offset\".]",
			MaxOutputBytes>>10, shown, totalLines)
		enc, _ := tool.Marshal(cut + note)
		fields[longest].value = enc
		if out := joinObject(fields); len(out) <= max {
			return out
		}
		keep = len(cut) - 1024
	}
	return tooLarge(len(obj), max)
}

type field struct {
	key   []byte // the encoded key, quotes included
	value json.RawMessage
}

func splitObject(obj []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := json.Marshal(tok)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, field{key, v})
	}
	return fields, nil
}

func joinObject(fields []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(f.key)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func tooLarge(size, max int) []byte {
	out, _ := tool.Marshal(map[string]any{
		"success": false, "error_code": tool.CodeInternal, "retryable": false, "wasRetried": false,
		"error": fmt.Sprintf("the result (%d bytes) does not fit the host's %d-byte output limit", size, max),
	})
	return out
}
