// Package cli implements the toolport command: list, schema and call tools,
// and run the servers. cmd/toolport is a thin main over it.
//
// It is the one wiring place: with the mains under cmd/ it alone reads the
// process environment ([Main] builds the config.Config every command reads
// its settings from), and it hands the packs, the store, the doctor and the
// server what they use. Commands return errors; [Run] prints a failure once,
// as "toolport COMMAND: …", and turns it into the exit code.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/record"
	buildversion "github.com/toolport/toolport/internal/version" // mcp.go declares a var named version
	"github.com/toolport/toolport/tool"
)

// Exit codes of every toolport command.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed (a tool failure, a server error)
	ExitUsage   = 2 // the command line was wrong
)

// Env is what a command runs against: its streams and configuration.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Config *config.Config
	// StdinIsTerminal says whether stdin is interactive (then `call` does not
	// wait for JSON on it).
	StdinIsTerminal bool
	// StderrIsTerminal says whether progress lines can be drawn on stderr.
	StderrIsTerminal bool
	// Registry builds the tool registry; commands call it lazily so that
	// `toolport --help` does not open databases or read keys.
	Registry func(ctx context.Context, env *Env) (*tool.Registry, func(), error)
	// Recorder, when set, records the upstream exchanges of the clients the
	// command builds (TOOLPORT_RECORD_DIR, `toolport doctor --record`).
	Recorder *record.Recorder
}

type command struct {
	name, usage, short string
	run                func(ctx context.Context, env *Env, args []string) error
	// noCredentials marks commands that work without the credentials file:
	// an unusable file is only a warning for them, and fatal for the others,
	// which would otherwise run without the keys it holds.
	noCredentials bool
}

func commands() []command {
	return []command{
		{"list", "toolport list [--pack NAME] [--json]", "list the tools", runList, true},
		{"schema", "toolport schema [NAME] [--format json|anthropic|openai|openai-responses|mcp|gemini]", "print tool definitions", runSchema, true},
		{"call", "toolport call NAME ['{json}'] [--pretty]", "call a tool with JSON arguments (or JSON on stdin)", runCall, false},
		{"mcp", "toolport mcp [--packs LIST] [--tools LIST]", "serve the tools over MCP on stdin/stdout", runMCP, false},
		{"serve", "toolport serve [--addr 127.0.0.1:8080] [--max-steps 5]", "run the chat server: web page, REST+SSE API, MCP over HTTP", runServe, false},
		{"library", "toolport library add|remove|list|import ...", "manage your music library", runLibrary, false},
		{"index", "toolport index add FILE.jsonl | status", "build and inspect the semantic track index", runIndex, false},
		{"playlist", playlistUsage, "list and export the playlists the agent suggested", runPlaylist, false},
		{"tidal", tidalUsage, "log in to your TIDAL account (to save playlists and sync the library)", runTidal, false},
		{"doctor", "toolport doctor [--json] [--yes] [--record DIR]", "check every configured upstream with your keys", runDoctor, false},
		{"version", "toolport version", "print the version, VCS revision and Go version (also --version)", runVersion, true},
	}
}

// Run runs the toolport command line (args without the program name) and
// returns the exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return Run(ctx, env, []string{args[1], "--help"})
		}
		usage(env.Stdout, cmds)
		return ExitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		return report(env.Stderr, c.name, runCommand(ctx, env, c, args[1:]))
	}
	fmt.Fprintf(env.Stderr, "toolport: unknown command %q\n\n", args[0])
	usage(env.Stderr, cmds)
	return ExitUsage
}

// runCommand runs c after what every command needs first: a usable
// credentials file (unless c works without one), the configuration's
// warnings shown, and the recording TOOLPORT_RECORD_DIR asks for.
func runCommand(ctx context.Context, env *Env, c command, args []string) error {
	if !c.noCredentials {
		if err := env.Config.CheckCredentials(); err != nil {
			return err
		}
	}
	for _, w := range env.Config.Warnings {
		fmt.Fprintln(env.Stderr, "warning:", w)
	}
	// Commands that reach upstreams record when TOOLPORT_RECORD_DIR says
	// so; doctor starts its own recording (its --record wins).
	if !c.noCredentials && c.name != "doctor" {
		msg, err := startRecording(env, "")
		if err != nil {
			return err
		}
		if msg != "" {
			fmt.Fprintf(env.Stderr, "toolport %s: %s\n", c.name, msg)
		}
	}
	return c.run(ctx, env, args)
}

func usage(w io.Writer, cmds []command) {
	fmt.Fprint(w, "Toolport gives LLM agents real tools: web search and fetch, open data (CKAN), music discovery.\n\nUsage:\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-60s %s\n", c.usage, c.short)
	}
	fmt.Fprint(w, "\nRun 'toolport COMMAND --help' for a command's flags. Configuration is read from the\nenvironment, then from the credentials file ($TOOLPORT_CREDENTIALS or\n~/.config/toolport/credentials.json); see the README.\n")
}

// newFlags returns a flag set that prints its usage to env.Stderr.
func newFlags(env *Env, name, usageLine, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: %s\n\n%s\n", usageLine, about)
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(env.Stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses flags wherever they appear among the arguments, so that
// `toolport call NAME --pretty` works as well as `toolport call --pretty NAME`,
// and returns the positional arguments. Help ends the command with ExitOK,
// a bad flag (the flag package has printed it) with ExitUsage.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitCode(ExitOK)
			}
			return nil, exitCode(ExitUsage)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// usageExit prints the command's usage and ends it with ExitUsage.
func usageExit(fs *flag.FlagSet) error {
	fs.Usage()
	return exitCode(ExitUsage)
}

func openRegistry(ctx context.Context, env *Env) (*tool.Registry, func(), error) {
	reg, closeFn, err := env.Registry(ctx, env)
	if err != nil {
		return nil, nil, plainError{err}
	}
	if closeFn == nil {
		closeFn = func() {}
	}
	return reg, closeFn, nil
}

func runList(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "list", "toolport list [--pack NAME] [--json]", "Lists the tools Toolport provides.")
	pack := fs.String("pack", "", "only the tools of this pack (web, ckan, music)")
	asJSON := fs.Bool("json", false, "print the MCP-style definitions as JSON")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usageExit(fs)
	}
	reg, closeFn, err := openRegistry(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	if *pack != "" {
		sub, err := reg.Select([]string{*pack}, nil)
		if err != nil {
			return usageError(err)
		}
		reg = sub
	}
	if *asJSON {
		return printDefinitions(env, reg.Tools(), tool.FormatMCP)
	}
	tools := reg.Tools()
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Spec().Pack < tools[j].Spec().Pack })
	width := 4
	for _, t := range tools {
		width = max(width, len(t.Name()))
	}
	fmt.Fprintf(env.Stdout, "%-*s  %-5s  %s\n", width, "TOOL", "PACK", "DESCRIPTION")
	for _, t := range tools {
		line := firstSentence(t.Spec().Description)
		if n := t.Spec().Notice; n != "" {
			line += " (" + n + ")"
		}
		fmt.Fprintf(env.Stdout, "%-*s  %-5s  %s\n", width, t.Name(), t.Spec().Pack, line)
	}
	return nil
}

// firstSentence returns the description's first sentence, or the whole
// description when it has no sentence end: a cut anywhere else (inside
// "(e.g. …)", mid-word) reads as a broken line.
func firstSentence(s string) string {
	// Only the first sentence is scanned: descriptions run to kilobytes.
	depth := 0 // parentheses and brackets: "(e.g. x. y)" does not end a sentence
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth = max(depth-1, 0)
		case '.', '!', '?':
			if depth > 0 || i+1 >= len(s) || !isSpace(s[i+1]) || abbreviation(s[:i]) {
				continue
			}
			return strings.Join(strings.Fields(s[:i+1]), " ")
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// abbreviation says whether the word ending just before a period is a common
// abbreviation (e.g., i.e., etc., vs.), whose period ends no sentence.
func abbreviation(before string) bool {
	start := len(before)
	for start > 0 && !isSpace(before[start-1]) && before[start-1] != '(' {
		start--
	}
	switch strings.ToLower(before[start:]) {
	case "e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "no":
		return true
	}
	return false
}

func runSchema(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "schema", "toolport schema [NAME] [--format json|anthropic|openai|openai-responses|mcp|gemini]",
		"Prints tool definitions: one tool's, or every tool's as a JSON array.\n"+
			"Formats: json (ikigai --schema: name, description, parameters), anthropic (Messages API tools),\n"+
			"openai (Chat Completions tools), openai-responses (Responses API function tools, strict off),\n"+
			"mcp (MCP tools with input and output schemas),\n"+
			"gemini (Gemini API function declarations: parameters in its OpenAPI 3.0 subset).")
	format := fs.String("format", "json", "definition format: json, anthropic, openai, openai-responses, mcp or gemini")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageExit(fs)
	}
	f := tool.Format(*format)
	if !slices.Contains(tool.Formats(), f) {
		return usageError(fmt.Errorf("unknown format %q (want one of %v)", *format, tool.Formats()))
	}
	reg, closeFn, err := openRegistry(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	if len(pos) == 1 {
		t, ok := reg.Lookup(pos[0])
		if !ok {
			return usageError(fmt.Errorf("no tool named %q (see 'toolport list')", pos[0]))
		}
		out, err := t.DefinitionJSON(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return nil
	}
	return printDefinitions(env, reg.Tools(), f)
}

func printDefinitions(env *Env, tools []*tool.Tool, f tool.Format) error {
	defs := make([]any, 0, len(tools))
	for _, t := range tools {
		d, err := t.Definition(f)
		if err != nil {
			return plainError{err}
		}
		defs = append(defs, d)
	}
	out, err := tool.Marshal(defs)
	if err != nil {
		return plainError{err}
	}
	fmt.Fprintf(env.Stdout, "%s\n", indent(out))
	return nil
}

func runCall(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "call", "toolport call NAME ['{json}'] [--pretty]",
		"Calls a tool and prints its result JSON. Arguments come from the second argument or, if it\n"+
			"is absent, from stdin. Exit status: 0 success, 1 tool failure, 2 usage error.")
	pretty := fs.Bool("pretty", false, "indent the result JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageExit(fs)
	}
	var input []byte
	switch {
	case len(pos) == 2:
		input = []byte(pos[1])
	case env.StdinIsTerminal:
		input = []byte("{}")
	default:
		if input, err = io.ReadAll(io.LimitReader(env.Stdin, tool.MaxArgumentBytes+1)); err != nil {
			return usageError(fmt.Errorf("reading stdin: %w", err))
		}
	}
	// Arguments that are not JSON at all are a mistake on the command line
	// (exit 2); JSON that breaks the tool's schema is the tool's failure (exit 1,
	// with the structured error on stdout).
	// (No input at all means no arguments, as for the tool itself.)
	if trimmed := bytes.TrimSpace(input); len(trimmed) > 0 && !json.Valid(trimmed) {
		return usageError(fmt.Errorf("the arguments are not valid JSON: %s\n"+
			"  give one JSON object, quoted for the shell: toolport call %s '{\"name\":\"value\"}'", jsonProblem(input), pos[0]))
	}
	// A call is one tool run in a process of its own, whose heap is small
	// and dies with it: collecting it at the default pace was a third of the
	// instructions of a cold semanticSearch (BENCHMARKS.md, "cold
	// semanticSearch"). GOGC and GOMEMLIMIT, when set, still decide.
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(callGCPercent))
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(callMemoryLimit))
	}
	reg, closeFn, err := openRegistry(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	if _, ok := reg.Lookup(pos[0]); !ok {
		return usageError(fmt.Errorf("no tool named %q (see 'toolport list')", pos[0]))
	}
	if env.StderrIsTerminal {
		// One line, redrawn in place and erased when the call ends.
		var mu sync.Mutex
		ctx = tool.WithProgress(ctx, func(p tool.Progress) {
			mu.Lock()
			defer mu.Unlock()
			line := pos[0] + ": " + p.Message
			if p.Total > 0 {
				line = fmt.Sprintf("%s: %.0f/%.0f %s", pos[0], p.Done, p.Total, p.Message)
			}
			fmt.Fprintf(env.Stderr, "\r\033[K%s", line)
		})
	}
	res := reg.Call(ctx, pos[0], input)
	if env.StderrIsTerminal {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	out := []byte(res.JSON)
	if *pretty {
		out = indent(out)
	}
	fmt.Fprintf(env.Stdout, "%s\n", out)
	if res.Err != nil {
		if ev := res.Err.Event; ev != nil {
			fmt.Fprintf(env.Stderr, "%s\n", ev.Content)
		}
		return exitCode(ExitFailure) // the failure is the result printed
	}
	return nil
}

// callGCPercent and callMemoryLimit pace the garbage collector during
// `toolport call`: the heap may grow to 21 times what is live (the default:
// twice), so the first collection is due at 80 MB, and a call that holds a
// lot (a large page or PDF) is collected at 256 MiB whatever that pace
// says. A cold semanticSearch peaks near 45 MB: at 1000 its one collection,
// due at 40 MB, cost a tenth of its CPU time.
const (
	callGCPercent   = 2000
	callMemoryLimit = 256 << 20
)

// jsonProblem says where invalid JSON goes wrong.
func jsonProblem(input []byte) string {
	var v any
	err := json.Unmarshal(input, &v)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf("%v (at byte %d)", err, syntax.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "unknown error"
}

func runVersion(_ context.Context, env *Env, args []string) error {
	fs := newFlags(env, "version", "toolport version", "Prints the module version, the VCS revision it was built from and the Go version.")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usageExit(fs)
	}
	fmt.Fprintln(env.Stdout, buildversion.Get())
	return nil
}

// modelStatus is how `toolport serve` names its model on start-up: the model,
// or why there is none and what to set. When TOOLPORT_MODEL is set, the
// problem is elsewhere (usually the provider's key), and saying "set
// TOOLPORT_MODEL" would send the user the wrong way.
func modelStatus(env *Env, modelName string, noModel error) string {
	if modelName != "" {
		return modelName
	}
	spec, err := llm.ParseModel(env.Config.Env("TOOLPORT_MODEL"))
	var le *llm.Error
	if err != nil || !errors.As(noModel, &le) {
		return "none (set TOOLPORT_MODEL)"
	}
	return fmt.Sprintf("none (%s:%s: %s)", spec.Provider, spec.Model, le.Message)
}

// Main is the body of cmd/toolport: it wires the process's streams and
// configuration and returns the exit code.
func Main(ctx context.Context, args []string) int {
	home, _ := os.UserHomeDir() // none: only the explicit credentials file is looked for
	cfg, err := config.New(os.Getenv, home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolport: %v\n", err)
		return ExitFailure
	}
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Config: cfg, Registry: BuildRegistry,
		StdinIsTerminal: isTerminal(os.Stdin), StderrIsTerminal: isTerminal(os.Stderr)}
	return Run(ctx, env, args)
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
