package config

import (
	"fmt"
	"strings"
)

// A Setting is one environment variable Toolport reads. The table of them,
// [Settings], is the one place a setting is described: docs/config.md is
// rendered from it ([RenderMarkdown]), and a test fails when the code reads
// a variable the table lacks or the table lists one nothing reads.
type Setting struct {
	Env         string // the variable
	Credentials string // its path in the credentials file ("llm.openai.api_key"), if it has one
	Flag        string // the command-line flag that wins over it, if any
	Default     string // as people read it; "" when unset means off or none
	Secret      bool   // a credential: never logged, shown or traced
	Doc         string // what it does, in Markdown
}

// A SettingGroup is a section of the table.
type SettingGroup struct {
	Title    string
	Doc      string
	Settings []Setting
}

// Settings returns the table of every variable Toolport reads, by group.
func Settings() []SettingGroup {
	return []SettingGroup{
		{
			Title: "Files and the store",
			Doc:   "Where Toolport keeps what it keeps. Precedence everywhere: flags, then the environment, then the credentials file.",
			Settings: []Setting{
				{Env: "TOOLPORT_CREDENTIALS", Default: "`~/.config/toolport/credentials.json`, then `~/.config/ikigai/credentials.json`",
					Doc: "the credentials file: JSON with the nested layout ikigai uses; Toolport warns when others can read it"},
				{Env: "TOOLPORT_DATABASE_URL", Default: "`$XDG_DATA_HOME/toolport/toolport.db`",
					Doc: "the store: a file path or `sqlite:` URL, or `postgres://…`"},
				{Env: "XDG_DATA_HOME", Default: "`~/.local/share`", Doc: "base of the default store's path"},
				{Env: "XDG_CONFIG_HOME", Default: "`~/.config`", Doc: "base of the default TIDAL login file's path"},
				{Env: "HOME", Doc: "the user's home, for the default paths above"},
			},
		},
		{
			Title: "Web search and fetch",
			Settings: []Setting{
				{Env: "BRAVE_API_KEY", Credentials: "web_search.brave.api_key", Secret: true, Doc: "Brave Search API key"},
				{Env: "BRAVE_ANSWERS_API_KEY", Credentials: "web_search.brave.answers_api_key", Secret: true,
					Doc: "the key `answer_brave` sends, when Brave's Answers plan has its own (default: `BRAVE_API_KEY`)"},
				{Env: "TOOLPORT_BRAVE_TOOLS", Credentials: "web_search.brave.tools", Default: "`web`",
					Doc: "the Brave tools offered: `web,news`, `all` or `none`, from `web`, `news`, `images`, `videos`, `local`, `llm_context`, `answers`; all but web need Brave's Search plan, `answers` its Answers plan"},
				{Env: "BRAVE_API_BASE_URL", Default: "`https://api.search.brave.com`", Doc: "Brave's scheme and host (tests point it at a local server)"},
				{Env: "TOOLPORT_BRAVE_RATE_LIMIT", Default: "`1:1`",
					Doc: "requests per second and burst kept to Brave, `rate[:burst]` (the free plan's; e.g. `20:20` on a paid one); shared by replicas through Redis"},
				{Env: "GOOGLE_SEARCH_API_KEY", Credentials: "web_search.google.api_key", Secret: true,
					Doc: "Google Custom Search JSON API key (closed to new customers; whole-web search ends on 2027-01-01)"},
				{Env: "GOOGLE_SEARCH_ENGINE_ID", Credentials: "web_search.google.engine_id", Doc: "the Programmable Search Engine id"},
				{Env: "TOOLPORT_GOOGLE_SEARCH", Default: "`auto`",
					Doc: "whether `web_search_google` is offered: `auto` until Google ends the API on 2027-01-01, `on` (a key that still works), `off`"},
				{Env: "GOOGLE_SEARCH_BASE_URL", Default: "`https://customsearch.googleapis.com`", Doc: "Google's scheme and host"},
				{Env: "TOOLPORT_SEARXNG_URL", Credentials: "web_search.searxng.url",
					Doc: "base URL of a SearXNG instance (e.g. `http://localhost:8888`) with `json` in `search.formats` of its settings.yml; `web_search_searxng` is offered only when it is set"},
				{Env: "TOOLPORT_FETCH_ALLOW_PRIVATE", Default: "off",
					Doc: "`1`: let `web_fetch` (and portals an agent names) reach private, loopback and link-local addresses"},
				{Env: "TOOLPORT_FETCH_MAX_BYTES", Default: "10 MiB", Doc: "`web_fetch`'s page size cap, after decompression"},
				{Env: "TOOLPORT_FETCH_TIMEOUT", Default: "`30s`", Doc: "`web_fetch`'s whole fetch, redirects and body included"},
				{Env: "TOOLPORT_FETCH_USER_AGENT", Default: "Toolport's", Doc: "the `User-Agent` of `web_fetch`; its product token selects robots.txt groups"},
				{Env: "TOOLPORT_FETCH_IGNORE_ROBOTS", Default: "off",
					Doc: "`1`: skip robots.txt, for deployments where every fetch is a person's request"},
				{Env: "TOOLPORT_FETCH_MAX_CONCURRENT", Default: "8", Doc: "`web_fetch` fetches at once per process"},
				{Env: "TOOLPORT_FETCH_MAX_INFLIGHT_BYTES", Default: "24 MiB", Doc: "page bytes in extraction at once"},
				{Env: "TOOLPORT_FETCH_QUEUE_WAIT", Default: "`5s`", Doc: "how long a call waits for a slot before a retryable `RATE_LIMIT`"},
				{Env: "TOOLPORT_FETCH_BROWSER", Default: "off",
					Doc: "a Chromium binary (path or name on `PATH`): `web_fetch` renders pages built by JavaScript in it, every request of the page through `web_fetch`'s own address policy; unset, such pages come with a notice that they need JavaScript"},
			},
		},
		{
			Title: "Open data (CKAN)",
			Settings: []Setting{
				{Env: "CKAN_BASE_URL", Credentials: "ckan.base_url", Default: "`https://data.gov.il/api/3`", Doc: "the default portal; its own host is trusted wherever it is, its redirects are checked"},
				{Env: "CKAN_ALLOWED_PORTALS", Default: "any public portal", Doc: "hosts the per-call `portal` argument may name, comma-separated (`*`: any public host)"},
				{Env: "CKAN_USER_AGENT", Default: "Toolport's", Doc: "the `User-Agent` sent to portals"},
			},
		},
		{
			Title: "Music: TIDAL, lyrics, features, embeddings and the index",
			Settings: []Setting{
				{Env: "TIDAL_CLIENT_ID", Credentials: "tidal.client_id", Secret: true, Doc: "TIDAL app id; a public app (PKCE only) needs just this"},
				{Env: "TIDAL_CLIENT_SECRET", Credentials: "tidal.client_secret", Secret: true, Doc: "TIDAL app secret (confidential apps)"},
				{Env: "TIDAL_COUNTRY_CODE", Default: "`US`", Doc: "the TIDAL market searched"},
				{Env: "TIDAL_API_BASE_URL", Default: "`https://openapi.tidal.com/v2`", Doc: "TIDAL API's scheme and host"},
				{Env: "TIDAL_AUTH_URL", Default: "`https://auth.tidal.com/v1/oauth2/token`", Doc: "TIDAL's token endpoint"},
				{Env: "TIDAL_LOGIN_URL", Default: "`https://login.tidal.com/authorize`", Doc: "TIDAL's authorization page for `toolport tidal login`"},
				{Env: "TIDAL_REDIRECT_URI", Default: "`http://127.0.0.1:8765/callback`", Doc: "the login's loopback redirect"},
				{Env: "TIDAL_TOKEN_FILE", Default: "`$XDG_CONFIG_HOME/toolport/tidal-login.json`", Doc: "where the login is kept (mode 0600)"},
				{Env: "TOOLPORT_TIDAL_RATE_LIMIT", Default: "`2:10`", Doc: "requests per second and burst kept to TIDAL, `rate[:burst]`"},
				{Env: "LRCLIB_BASE_URL", Default: "`https://lrclib.net`", Doc: "lyrics for `toolport index build` (keyless)"},
				{Env: "RECCOBEATS_BASE_URL", Default: "`https://api.reccobeats.com`", Doc: "audio features for `toolport index build` (keyless)"},
				{Env: "MUSIXMATCH_API_KEY", Credentials: "lyrics.musixmatch.api_key", Secret: true, Doc: "optional second lyrics source, asked by ISRC when LRCLIB has nothing"},
				{Env: "MUSIXMATCH_BASE_URL", Default: "`https://api.musixmatch.com`", Doc: "Musixmatch's scheme and host"},
				{Env: "TOOLPORT_EMBEDDINGS_URL", Default: "the offline embedder built in", Doc: "an OpenAI-compatible `/v1/embeddings` server (OpenAI, Ollama, vLLM, TEI)"},
				{Env: "TOOLPORT_EMBEDDINGS_MODEL", Doc: "the embeddings model asked for"},
				{Env: "TOOLPORT_EMBEDDINGS_API_KEY", Secret: true, Doc: "the embeddings server's key"},
				{Env: "TOOLPORT_VECTOR_URL", Default: "the embedded index",
					Doc: "Weaviate's REST address, or several nodes' comma-separated: `semanticSearch` then runs Weaviate's hybrid query over a collection every replica shares"},
				{Env: "TOOLPORT_WEAVIATE_GRPC_ADDR", Doc: "Weaviate's gRPC address (`host:50051`), one per URL in the same order"},
				{Env: "TOOLPORT_WEAVIATE_API_KEY", Credentials: "weaviate.api_key", Secret: true, Doc: "Weaviate API key, sent as a bearer token"},
				{Env: "TOOLPORT_WEAVIATE_REPLICATION", Default: "1", Doc: "replication factor of the collection Toolport creates"},
				{Env: "TOOLPORT_WEAVIATE_SHARDS", Default: "one per node", Doc: "shard count of the collection Toolport creates"},
				{Env: "TOOLPORT_WEAVIATE_CONSISTENCY", Default: "`QUORUM`", Doc: "consistency of reads and writes: `ONE`, `QUORUM` or `ALL`"},
				{Env: "TOOLPORT_WEAVIATE_TIMEOUT", Default: "`10s`", Doc: "per-request timeout"},
				{Env: "TOOLPORT_WEAVIATE_COLLECTION", Default: "`ToolportTrack`", Doc: "the collection's name"},
			},
		},
		{
			Title: "Models and the chat server",
			Settings: []Setting{
				{Env: "TOOLPORT_MODEL",
					Doc: "the chat model (and the writer of `index build`'s interpretations): `anthropic:claude-sonnet-4-5`, `openai:gpt-4.1`, `openai:qwen2.5@http://127.0.0.1:11434/v1`"},
				{Env: "TOOLPORT_MODELS", Doc: "more models a conversation may pick, comma-separated in `TOOLPORT_MODEL`'s syntax (at most 16)"},
				{Env: "ANTHROPIC_API_KEY", Credentials: "llm.anthropic.api_key", Secret: true, Doc: "Anthropic key"},
				{Env: "ANTHROPIC_BASE_URL", Default: "Anthropic's", Doc: "Anthropic endpoint"},
				{Env: "OPENAI_API_KEY", Credentials: "llm.openai.api_key", Secret: true, Doc: "OpenAI (or compatible server) key"},
				{Env: "OPENAI_BASE_URL", Default: "OpenAI's", Doc: "OpenAI-compatible endpoint"},
				{Env: "TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT", Default: "`30s`", Doc: "the wait for the model's response headers"},
				{Env: "TOOLPORT_MODEL_IDLE_TIMEOUT", Default: "`2m`", Doc: "the wait for the model's next streamed byte"},
				{Env: "TOOLPORT_TURN_TIMEOUT", Default: "`10m`", Doc: "a chat turn's deadline; past it the turn ends with `MODEL_TIMEOUT`"},
				{Env: "TOOLPORT_API_TOKEN", Secret: true, Doc: "bearer token for the API, `/mcp` and `/metrics` (required when serving beyond loopback)"},
				{Env: "TOOLPORT_ALLOWED_HOSTS", Flag: "--allowed-hosts", Doc: "extra `Host` names the server answers (loopback names and `--addr`'s host always)"},
				{Env: "TOOLPORT_ALLOWED_ORIGINS", Flag: "--allowed-origins", Doc: "origins trusted for cross-origin writes (see SECURITY.md)"},
				{Env: "TOOLPORT_METRICS_ADDR", Flag: "--metrics-addr", Doc: "serve `/metrics` on its own address instead (loopback unless a token is set)"},
				{Env: "TOOLPORT_TURN_LEASE", Default: "`15s`", Doc: "how long a turn's claim outlives its replica's last renewal"},
				{Env: "TOOLPORT_TURN_EVENTS_RETENTION", Default: "`10m`", Doc: "how long an ended turn's event log is kept for resuming clients"},
				{Env: "TOOLPORT_REPLICA_ID", Default: "random", Doc: "this replica's name in the store"},
				{Env: "TOOLPORT_TURN_START_PRECEDENCE", Default: "`200ms`",
					Doc: "the most a running turn waits while other turns start, so a burst gets its first events quickly (`off` or `0`: off; at most 10s)"},
			},
		},
		{
			Title: "Caching, Redis, traces and recordings",
			Settings: []Setting{
				{Env: "TOOLPORT_CACHE", Default: "`on`", Doc: "`off`: do not reuse upstream results (in-process: 10,000 entries, 64 MiB; in Redis when set)"},
				{Env: "TOOLPORT_REDIS_URL", Credentials: "redis.url", Secret: true,
					Doc: "`redis://[:password@]host:6379/db` (or `rediss://`): the result cache and rate limits replicas share; a Redis that stops answering costs no call"},
				{Env: "TOOLPORT_REDIS_PREFIX", Default: "`toolport:`", Doc: "start of every key Toolport writes in Redis"},
				{Env: "OTEL_EXPORTER_OTLP_ENDPOINT", Doc: "trace export over OTLP/HTTP"},
				{Env: "OTEL_EXPORTER_OTLP_HEADERS", Secret: true, Doc: "headers of the export, `k=v,k2=v2` (values URL-encoded)"},
				{Env: "OTEL_SERVICE_NAME", Default: "`toolport`", Doc: "the service name on spans"},
				{Env: "LANGFUSE_PUBLIC_KEY", Credentials: "langfuse.public_key", Secret: true, Doc: "Langfuse's OTLP endpoint instead (with the secret key)"},
				{Env: "LANGFUSE_SECRET_KEY", Credentials: "langfuse.secret_key", Secret: true, Doc: "Langfuse secret key"},
				{Env: "LANGFUSE_HOST", Default: "`https://cloud.langfuse.com`", Doc: "Langfuse's host"},
				{Env: "TOOLPORT_RECORD_DIR", Doc: "record every upstream exchange of the command into this new directory, secrets removed (CONTRIBUTING.md)"},
				{Env: "TOOLPORT_EXEC_EXIT_ZERO", Flag: "--exit-zero", Default: "off",
					Doc: "`1`: the ikigai executables exit 0 on tool failures and put host events in their JSON"},
			},
		},
		{
			Title: "Tests",
			Doc:   "Read by the test suite only, in the test-support packages (`…test`, `internal/testexec`: the only packages besides `internal/cli` and `cmd/` that read the environment); `scripts/test` and CI set them.",
			Settings: []Setting{
				{Env: "TOOLPORT_TEST_DATABASE_URL", Doc: "a PostgreSQL the store tests use (each test its own schema); set, they must pass"},
				{Env: "TOOLPORT_TEST_REDIS_URL", Doc: "a Redis the cache and rate-limit tests use"},
				{Env: "TOOLPORT_TEST_WEAVIATE_BIN", Doc: "a `weaviate-server` binary the Weaviate tests start"},
				{Env: "TOOLPORT_ARTIFACTS_DIR", Doc: "where the browser tests write screenshots"},
				{Env: "TOOLPORT_TEST_REQUIRE_TOOLS", Doc: "`1`: a test whose external program (Node tools, Chromium) is missing fails instead of skipping (`scripts/test` sets it)"},
				{Env: "TOOLPORT_NPM_DIR", Default: "`.cache/npm`", Doc: "where `scripts/test` installed the pinned npm tools (`testdata/npm`)"},
				{Env: "TOOLPORT_MCP_INSPECTOR", Doc: "the MCP Inspector's command, instead of the one in `TOOLPORT_NPM_DIR`"},
				{Env: "CHROMIUM_PATH", Default: "`/usr/bin/chromium`", Doc: "the browser the page's tests drive"},
			},
		},
	}
}

// RenderMarkdown renders the table as docs/config.md.
func RenderMarkdown() string {
	var b strings.Builder
	b.WriteString("# Configuration\n\n")
	b.WriteString("<!-- Generated from internal/config/settings.go by `go test ./internal/config -run TestConfigDoc -update`; edit the table there. -->\n\n")
	b.WriteString("Toolport reads environment variables, then the credentials file; a command's flags win over both.\n")
	b.WriteString("The credentials file (`$TOOLPORT_CREDENTIALS`, else `~/.config/toolport/credentials.json`, else\n")
	b.WriteString("`~/.config/ikigai/credentials.json`) is JSON with the paths named below, for example:\n\n")
	b.WriteString("```json\n{\n  \"web_search\": {\"brave\": {\"api_key\": \"…\"}, \"google\": {\"api_key\": \"…\", \"engine_id\": \"…\"}},\n")
	b.WriteString("  \"tidal\": {\"client_id\": \"…\", \"client_secret\": \"…\"},\n")
	b.WriteString("  \"llm\": {\"anthropic\": {\"api_key\": \"…\"}, \"openai\": {\"api_key\": \"…\"}}\n}\n```\n\n")
	b.WriteString("Secrets (marked 🔒) never reach a log, a span, a tool result or an error.\n")
	for _, g := range Settings() {
		fmt.Fprintf(&b, "\n## %s\n\n", g.Title)
		if g.Doc != "" {
			b.WriteString(g.Doc + "\n\n")
		}
		b.WriteString("| variable | default | what |\n|---|---|---|\n")
		for _, s := range g.Settings {
			name := "`" + s.Env + "`"
			if s.Secret {
				name += " 🔒"
			}
			var also []string
			if s.Flag != "" {
				also = append(also, "flag `"+s.Flag+"`")
			}
			if s.Credentials != "" {
				also = append(also, "credentials `"+s.Credentials+"`")
			}
			if len(also) > 0 {
				name += "<br>" + strings.Join(also, ", ")
			}
			def := s.Default
			if def == "" {
				def = "—"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", name, def, s.Doc)
		}
	}
	return b.String()
}
