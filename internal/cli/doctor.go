package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/toolport/toolport/internal/doctor"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/musiccaps"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/version"
	"github.com/toolport/toolport/tool"
)

// RecordDirEnv names the directory that records every upstream exchange of
// any command (see package record).
const RecordDirEnv = "TOOLPORT_RECORD_DIR"

// startRecording sets env.Recorder when TOOLPORT_RECORD_DIR (or dir, which
// wins) names a directory, and returns a message for the user; "" when
// there is nothing to record.
func startRecording(env *Env, dir string) (string, error) {
	if dir == "" {
		dir = env.Config.Env(RecordDirEnv)
	}
	if dir == "" || env.Recorder != nil {
		return "", nil
	}
	rec, err := record.New(dir, record.Options{Secrets: env.Config.Secrets(), MoreSecrets: env.Config.Secrets,
		Version: version.Get().Short()})
	if err != nil {
		return "", err
	}
	env.Recorder = rec
	return "recording upstream exchanges to " + dir + " (secrets removed; review before committing, see CONTRIBUTING.md)", nil
}

// recordingClient is hc (nil: a zero client over the default transport)
// recording under upstream when a recording is on, else hc unchanged.
func recordingClient(env *Env, upstream string, hc *http.Client) *http.Client {
	if env.Recorder == nil {
		return hc
	}
	return env.Recorder.Client(upstream, hc)
}

// doctorChecks are the checks of env's configuration. Building them reads
// every key, so env.Config.Secrets() lists them afterwards.
func doctorChecks(env *Env) []doctor.Check {
	dsn := databaseURL(env.Config)
	src := doctor.Sources{DatabaseURL: dsn, ScratchLibrary: scratchLibrary, StoreName: describeDSN(dsn)}
	if dsn != "" {
		src.Index = func(ctx context.Context) (doctor.IndexFacts, error) { return indexFacts(ctx, dsn) }
	}
	return doctor.FromConfig(env.Config, src)
}

// indexFacts opens the store for the doctor's store and index checks. A
// SQLite file that does not exist yet is reported, not created.
func indexFacts(ctx context.Context, dsn string) (doctor.IndexFacts, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		path := strings.TrimPrefix(dsn, "sqlite:")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && path != ":memory:" {
			return doctor.IndexFacts{Engine: "sqlite", NotCreated: true}, nil
		}
	}
	db, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return doctor.IndexFacts{}, err
	}
	defer db.Close()
	st, err := db.IndexStatus(ctx)
	if err != nil {
		return doctor.IndexFacts{}, err
	}
	demo, err := db.CountIndexPrefix(ctx, musiccaps.ISRCPrefix)
	if err != nil {
		return doctor.IndexFacts{}, err
	}
	return doctor.IndexFacts{Engine: db.Engine(), Tracks: st.Total, Demo: demo, Embedder: st.Embedder}, nil
}

// mcpServerChecks are a check per MCP server the credentials file
// attaches: connected with how many tools, or why not. Each connects on
// its own (an MCP session is several requests, which the doctor's one
// request per host would refuse), bounded by the check's deadline.
func mcpServerChecks(env *Env) ([]doctor.Check, error) {
	servers, _, err := loadMCPHostSettings(env)
	if err != nil {
		return nil, err
	}
	checks := make([]doctor.Check, 0, len(servers))
	for _, s := range servers {
		endpoint := "stdio: " + s.Command
		if s.URL != "" {
			endpoint = s.URL
			if u, err := url.Parse(s.URL); err == nil { // never the userinfo or query, which may hold credentials
				endpoint = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
			}
		}
		checks = append(checks, doctor.Check{Name: "mcp:" + s.Name, Title: "MCP server " + s.Name, Endpoint: endpoint, Configured: true,
			Run: func(ctx context.Context, _ *http.Client) (string, error) {
				h, err := mcphost.Attach(ctx, tool.NewRegistry(), []mcphost.Server{s},
					mcphost.Options{Version: version.Get().Short(), Getenv: env.Config.Env})
				if err != nil {
					return "", err
				}
				defer h.Close()
				st := h.Status()[0]
				if !st.Connected {
					return "", errors.New(st.Error)
				}
				return fmt.Sprintf("connected, %d tools", len(st.Tools)), nil
			}})
	}
	return checks, nil
}

// scratchLibrary is the doctor's stand-in for the user's library: a private
// in-memory store, gone when closed.
func scratchLibrary(ctx context.Context) (music.Store, func() error, error) {
	db, err := sqlstore.Open(ctx, ":memory:")
	if err != nil {
		return nil, nil, err
	}
	return db, db.Close, nil
}

// runDoctorChecks runs checks with env's secrets scrubbed and, when a
// recording is on, every exchange recorded.
func runDoctorChecks(ctx context.Context, env *Env, checks []doctor.Check, allowQuota bool, timeout time.Duration) doctor.Report {
	o := doctor.Options{AllowQuota: allowQuota, Timeout: timeout, Secrets: env.Config.Secrets(), Version: version.Get().Short()}
	if env.Recorder != nil {
		o.Wrap = env.Recorder.Transport
	}
	return doctor.Run(ctx, checks, o)
}

func runDoctor(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "doctor", "toolport doctor [--json] [--yes] [--record DIR] [--timeout 6s]",
		"Checks every upstream the configuration names (web search, CKAN, TIDAL, LRCLIB, ReccoBeats, the\n"+
			"chat model, embeddings, PostgreSQL, Weaviate, Redis, trace export): configured, reachable, key\n"+
			"accepted, rate-limit headers, and one cheap real call through the tools' own clients. Checks run in\n"+
			"parallel, each under --timeout, with at most one request per upstream host. Checks that spend\n"+
			"quota are listed first and run only after you agree (or with --yes); without a terminal and\n"+
			"without --yes they are skipped. Exit status: 0 when no configured upstream fails, 1 otherwise.")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	yes := fs.Bool("yes", false, "run the checks that cost quota without asking")
	recordDir := fs.String("record", "", "record every exchange to this new directory, secrets removed (also "+RecordDirEnv+")")
	timeout := fs.Duration("timeout", doctor.DefaultTimeout, "bound on each check")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 || *timeout <= 0 {
		return usageExit(fs)
	}
	checks := doctorChecks(env)
	attached, err := mcpServerChecks(env)
	if err != nil {
		return err
	}
	checks = append(checks, attached...)
	if msg, err := startRecording(env, *recordDir); err != nil {
		return err
	} else if msg != "" {
		fmt.Fprintln(env.Stderr, "toolport doctor:", msg)
	}
	allowQuota := askQuota(env, checks, *yes)
	rep := runDoctorChecks(ctx, env, checks, allowQuota, *timeout)
	if env.Recorder != nil {
		if err := env.Recorder.Err(); err != nil {
			fmt.Fprintf(env.Stderr, "toolport doctor: the recording is incomplete: %v\n", err)
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		printReport(env.Stdout, rep)
	}
	if !rep.OK {
		return exitCode(ExitFailure) // the report says what failed
	}
	return nil
}

// askQuota lists the checks that would spend quota and, unless yes, asks
// whether to run them. Without a terminal on stdin nobody can answer: they
// are skipped, and the user is told how to include them.
func askQuota(env *Env, checks []doctor.Check, yes bool) bool {
	var costly []string
	for _, c := range checks {
		if c.Configured && c.CostsQuota {
			costly = append(costly, fmt.Sprintf("  %-11s %s", c.Name, c.Cost))
		}
	}
	if len(costly) == 0 {
		return false
	}
	fmt.Fprintf(env.Stderr, "These checks cost quota on your accounts:\n%s\n", strings.Join(costly, "\n"))
	if yes {
		return true
	}
	if !stdinIsTerminal(env) {
		fmt.Fprintln(env.Stderr, "stdin is not a terminal: skipping them (run with --yes to include them)")
		return false
	}
	fmt.Fprint(env.Stderr, "Run them? [y/N] ")
	line, _ := bufio.NewReader(io.LimitReader(env.Stdin, 256)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(env.Stderr, "skipping them")
	return false
}

// printReport writes one line per upstream: name, verdict, what was found,
// and the fix when there is one.
func printReport(w io.Writer, rep doctor.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rep.Results {
		line := r.Detail
		if r.Status == doctor.OK && len(r.Limits) > 0 {
			line += " [" + doctor.LimitsLine(r.Limits) + "]"
		}
		if r.Fix != "" && r.Status != doctor.OK {
			line += " — fix: " + r.Fix
		}
		if r.Warning != "" {
			line += " — warning: " + r.Warning
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Status, line)
	}
	tw.Flush()
	failing := rep.Failing()
	switch failing {
	case 0:
		fmt.Fprintln(w, "no configured upstream is failing")
	case 1:
		fmt.Fprintln(w, "1 configured upstream is failing")
	default:
		fmt.Fprintf(w, "%d configured upstreams are failing\n", failing)
	}
}

// recordPacks points the packs' API clients at recording transports when a
// recording is on. (web_fetch is not recorded: its pages are arbitrary
// sites, not an upstream API whose fixtures the tests replay.)
func recordPacks(env *Env, search *websearch.Config, od *opendata.Config, m *music.Config) {
	if env.Recorder == nil {
		return
	}
	search.HTTPClient = recordingClient(env, "websearch", search.HTTPClient)
	od.HTTPClient = recordingClient(env, "ckan", od.HTTPClient)
	m.Tidal.HTTPClient = recordingClient(env, "tidal", &http.Client{Timeout: 30 * time.Second})
	m.Embeddings.HTTPClient = recordingClient(env, "embeddings", &http.Client{Timeout: 60 * time.Second})
}

// serveDoctor is GET /api/doctor's DoctorFunc over the configuration
// current returns (the page's Settings change it). Runs go one at a time:
// each may spend a request per upstream.
func serveDoctor(current func() *Env) server.DoctorFunc {
	var mu sync.Mutex
	return func(ctx context.Context, allowQuota bool) (any, error) {
		if !mu.TryLock() {
			return nil, server.ErrDoctorBusy
		}
		defer mu.Unlock()
		// The checks of the configuration in use now: the page's Settings
		// may have changed it since the start.
		env := current()
		return runDoctorChecks(ctx, env, doctorChecks(env), allowQuota, doctor.DefaultTimeout), nil
	}
}

// stdinIsTerminal says whether someone can answer a question on stdin.
// Env.StdinIsTerminal counts any character device, /dev/null included,
// which is right for not waiting on stdin but would wait here for an
// answer that never comes; a real *os.File is asked precisely.
func stdinIsTerminal(env *Env) bool {
	if f, ok := env.Stdin.(*os.File); ok {
		return term.IsTerminal(int(f.Fd()))
	}
	return env.StdinIsTerminal
}
