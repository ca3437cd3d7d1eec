package websearch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/google"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// The schema blocks of web-tool-schemas.md, verbatim.
const (
	specBraveSchema = `{
  "name": "web_search_brave",
  "description": "Search the web using Brave Search API and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks.",
  "parameters": {
    "type": "object",
    "properties": {
      "query": {"type": "string", "description": "The search query to use", "minLength": 2},
      "count": {"type": "integer", "description": "Number of results to return (1-20)", "minimum": 1, "maximum": 20, "default": 10},
      "offset": {"type": "integer", "description": "Result offset for pagination", "minimum": 0, "default": 0},
      "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only include search results from these domains"},
      "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never include search results from these domains"}
    },
    "required": ["query"]
  }
}`
	specGoogleSchema = `{
  "name": "web_search_google",
  "description": "Search the web using Google Custom Search API and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks.",
  "parameters": {
    "type": "object",
    "properties": {
      "query": {"type": "string", "description": "The search query to use", "minLength": 2},
      "num": {"type": "integer", "description": "Number of results to return (1-10)", "minimum": 1, "maximum": 10, "default": 10},
      "start": {"type": "integer", "description": "Result index offset for pagination (1-based, max 91)", "minimum": 1, "maximum": 91, "default": 1},
      "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only include search results from these domains"},
      "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never include search results from these domains"}
    },
    "required": ["query"]
  }
}`
	specBraveEvent  = `{"kind": "config_required", "content": "⚠ Configuration Required\n\nWeb search needs an API key. Brave Search offers 2,000 free searches/month.\n\nGet your key: https://brave.com/search/api/\nAdd to: ~/.config/ikigai/credentials.json\n\nExample:\n{\n  \"web_search\": {\n    \"brave\": {\n      \"api_key\": \"your-api-key-here\"\n    }\n  }\n}", "data_json": "{\"tool\": \"web_search_brave\", \"credential\": \"api_key\", \"signup_url\": \"https://brave.com/search/api/\"}"}`
	specBraveError  = `{"success": false, "error": "Web search requires API key configuration.\n\nBrave Search offers 2,000 free searches/month.\nGet your key: https://brave.com/search/api/\nAdd to: ~/.config/ikigai/credentials.json as 'web_search.brave.api_key'"}`
	specGoogleEvent = `{"kind": "config_required", "content": "⚠ Configuration Required\n\nWeb search needs an API key and Search Engine ID. Google Custom Search offers 100 free searches/day.\n\nGet API key: https://developers.google.com/custom-search/v1/overview\nGet Search Engine ID: https://programmablesearchengine.google.com/controlpanel/create\nAdd to: ~/.config/ikigai/credentials.json\n\nExample:\n{\n  \"web_search\": {\n    \"google\": {\n      \"api_key\": \"your-api-key-here\",\n      \"engine_id\": \"your-search-engine-id\"\n    }\n  }\n}", "data_json": "{\"tool\": \"web_search_google\", \"credentials\": [\"api_key\", \"engine_id\"]}"}`
	specGoogleError = `{"success": false, "error": "Web search requires API key configuration.\n\nGoogle Custom Search offers 100 free searches/day.\nGet API key: https://developers.google.com/custom-search/v1/overview\nGet Search Engine ID: https://programmablesearchengine.google.com/controlpanel/create\nAdd to: ~/.config/ikigai/credentials.json as 'web_search.google.api_key' and 'web_search.google.engine_id'"}`
)

type schemaDoc struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	} `json:"parameters"`
}

func definition(t *testing.T, tl *tool.Tool) schemaDoc {
	t.Helper()
	def, err := tl.Definition(tool.FormatIkigai)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(def)
	var d schemaDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSchemasFollowTheSpec(t *testing.T) {
	tests := []struct {
		spec string
		tool *tool.Tool
		// where the published text deliberately extends the spec's
		description string
		extended    map[string]string
		extra       []string
	}{
		{specBraveSchema, Brave(Config{}), "", map[string]string{"offset": "Result offset for pagination: results to skip"},
			[]string{"freshness", "country", "search_lang", "safesearch", "extra_snippets", "goggles", "result_filter"}},
		{specGoogleSchema, Google(Config{}), " Note: Google has closed the Custom Search JSON API to new customers and shuts it down on 2027-01-01.",
			map[string]string{"start": "Result index offset for pagination (1-based, max 91"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Name(), func(t *testing.T) {
			var spec schemaDoc
			if err := json.Unmarshal([]byte(tt.spec), &spec); err != nil {
				t.Fatal(err)
			}
			got := definition(t, tt.tool)
			if got.Name != spec.Name || got.Description != spec.Description+tt.description || got.Parameters.Type != "object" {
				t.Errorf("name/description = %q %q", got.Name, got.Description)
			}
			if !slices.Equal(got.Parameters.Required, spec.Parameters.Required) {
				t.Errorf("required = %v", got.Parameters.Required)
			}
			for name, want := range spec.Parameters.Properties {
				have := got.Parameters.Properties[name]
				if prefix, ok := tt.extended[name]; ok {
					if d, _ := have["description"].(string); !strings.HasPrefix(d, prefix) {
						t.Errorf("%s description = %q", name, d)
					}
					delete(want, "description")
					delete(have, "description")
				}
				if !reflect.DeepEqual(have, want) {
					t.Errorf("%s = %v, want %v", name, have, want)
				}
			}
			var extra []string
			for name := range got.Parameters.Properties {
				if _, ok := spec.Parameters.Properties[name]; !ok {
					extra = append(extra, name)
				}
			}
			slices.Sort(extra)
			want := slices.Clone(tt.extra)
			slices.Sort(want)
			if !slices.Equal(extra, want) {
				t.Errorf("extra properties = %v, want %v", extra, want)
			}
		})
	}
	t.Run("Brave says its offset is a page index", func(t *testing.T) {
		d, _ := definition(t, Brave(Config{})).Parameters.Properties["offset"]["description"].(string)
		if !strings.Contains(d, "multiple of count") || !strings.Contains(d, "10 × count") {
			t.Errorf("offset description = %q", d)
		}
	})
	t.Run("both tools share their common fields", func(t *testing.T) {
		b, g := definition(t, Brave(Config{})), definition(t, Google(Config{}))
		for _, name := range []string{"query", "allowed_domains", "blocked_domains"} {
			if !reflect.DeepEqual(b.Parameters.Properties[name], g.Parameters.Properties[name]) {
				t.Errorf("%s differs", name)
			}
		}
	})
}

func TestMissingCredentials(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		tool     string
		specErr  string
		specEvnt string
		envVars  []string // what a Toolport user sets instead
	}{
		{"Brave without a key", Config{GoogleAPIKey: googleKey, GoogleEngineID: engineID}, "web_search_brave", specBraveError, specBraveEvent,
			[]string{"BRAVE_API_KEY"}},
		{"Google without a key", Config{BraveAPIKey: braveKey, GoogleEngineID: engineID}, "web_search_google", specGoogleError, specGoogleEvent,
			[]string{"GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID"}},
		{"Google without an engine ID", Config{GoogleAPIKey: googleKey}, "web_search_google", specGoogleError, specGoogleEvent,
			[]string{"GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{}`)})
			tt.cfg.BraveBaseURL, tt.cfg.GoogleBaseURL = up.URL, up.URL
			res := call(t, tt.cfg, tt.tool, `{"query":"semantic kernel"}`)
			wantFailure(t, res, tool.CodeAuthMissing, false, false)
			// The spec's text comes first, verbatim; then where Toolport
			// itself looks: the environment and its own credentials file.
			var specErr struct{ Error string }
			json.Unmarshal([]byte(tt.specErr), &specErr)
			if !strings.HasPrefix(res.Err.Message, specErr.Error) {
				t.Errorf("message = %q\nwant it to start %q", res.Err.Message, specErr.Error)
			}
			var want tool.Event
			if err := json.Unmarshal([]byte(tt.specEvnt), &want); err != nil {
				t.Fatal(err)
			}
			if res.Err.Event == nil || res.Err.Event.Kind != want.Kind || res.Err.Event.DataJSON != want.DataJSON ||
				!strings.HasPrefix(res.Err.Event.Content, want.Content) {
				t.Fatalf("event = %+v\nwant it to start %+v", res.Err.Event, want)
			}
			for _, name := range append(tt.envVars, "~/.config/toolport/credentials.json") {
				if !strings.Contains(res.Err.Message, name) || !strings.Contains(res.Err.Event.Content, name) {
					t.Errorf("message or event does not name %s:\n%s\n%s", name, res.Err.Message, res.Err.Event.Content)
				}
			}
			if !json.Valid([]byte(res.Err.Event.DataJSON)) {
				t.Error("data_json is not JSON")
			}
			if len(up.Requests()) != 0 {
				t.Error("a request was made without credentials")
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	os.WriteFile(creds, []byte(`{"web_search":{"brave":{"api_key":"file-brave"},"google":{"api_key":"file-google","engine_id":"file-cx"},"searxng":{"url":"http://file-searx:8888"}}}`), 0o600)

	t.Run("credentials file", func(t *testing.T) {
		c, err := config.New(func(k string) string { return map[string]string{"TOOLPORT_CREDENTIALS": creds}[k] }, dir)
		if err != nil {
			t.Fatal(err)
		}
		got := ConfigFromEnv(c)
		want := Config{BraveAPIKey: "file-brave", GoogleAPIKey: "file-google", GoogleEngineID: "file-cx",
			BraveBaseURL: "https://api.search.brave.com", GoogleBaseURL: "https://customsearch.googleapis.com", SearxngURL: "http://file-searx:8888"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		if s := c.Secrets(); !slices.Contains(s, "file-brave") || !slices.Contains(s, "file-google") {
			t.Errorf("secrets = %v", s)
		}
	})
	t.Run("environment wins", func(t *testing.T) {
		env := map[string]string{
			"TOOLPORT_CREDENTIALS": creds, "BRAVE_API_KEY": "env-brave", "GOOGLE_SEARCH_API_KEY": "env-google",
			"GOOGLE_SEARCH_ENGINE_ID": "env-cx", "BRAVE_API_BASE_URL": "http://127.0.0.1:8081", "GOOGLE_SEARCH_BASE_URL": "http://127.0.0.1:8082",
			"TOOLPORT_SEARXNG_URL": " http://127.0.0.1:8888 ",
		}
		c, err := config.New(func(k string) string { return env[k] }, dir)
		if err != nil {
			t.Fatal(err)
		}
		got := ConfigFromEnv(c)
		want := Config{BraveAPIKey: "env-brave", GoogleAPIKey: "env-google", GoogleEngineID: "env-cx",
			BraveBaseURL: "http://127.0.0.1:8081", GoogleBaseURL: "http://127.0.0.1:8082", SearxngURL: "http://127.0.0.1:8888"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
}

func TestBadBaseURL(t *testing.T) {
	cfg := Config{BraveAPIKey: braveKey, GoogleAPIKey: googleKey, GoogleEngineID: engineID, BraveBaseURL: "api.search.brave.com", GoogleBaseURL: "ftp://x"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "BRAVE_API_BASE_URL") {
		t.Errorf("Validate = %v", err)
	}
	reg := tool.NewRegistry()
	reg.Register(Tools(cfg)...)
	for _, name := range []string{"web_search_brave", "web_search_google"} {
		res := reg.Call(context.Background(), name, []byte(`{"query":"go"}`))
		if res.Err == nil || res.Err.Code != tool.CodeConfig {
			t.Errorf("%s: %s", name, res.JSON)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("the zero Config: %v", err)
	}
}

// TestAvailability: a search tool is available only with its keys, so that
// a chat agent does not offer its model searches that can only fail.
func TestAvailability(t *testing.T) {
	all := []string{"web", "news", "images", "videos"}
	tests := []struct {
		name string
		cfg  Config
		want map[string]string // tool → its Unavailable()
	}{
		{"no keys", Config{BraveTools: all, Now: beforeGoogleEnds}, map[string]string{
			"web_search_brave": "BRAVE_API_KEY is not set", "news_search_brave": "BRAVE_API_KEY is not set",
			"image_search_brave": "BRAVE_API_KEY is not set", "video_search_brave": "BRAVE_API_KEY is not set",
			"web_search_google": "GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID are not set"}},
		{"every key", Config{BraveTools: all, BraveAPIKey: braveKey, GoogleAPIKey: googleKey, GoogleEngineID: engineID, Now: beforeGoogleEnds},
			map[string]string{"web_search_brave": "", "news_search_brave": "", "image_search_brave": "", "video_search_brave": "", "web_search_google": ""}},
		{"Google without an engine ID", Config{BraveTools: []string{"web"}, BraveAPIKey: braveKey, GoogleAPIKey: googleKey, Now: beforeGoogleEnds},
			map[string]string{"web_search_brave": "", "web_search_google": "GOOGLE_SEARCH_ENGINE_ID is not set"}},
		{"a bad Brave base URL", Config{BraveTools: []string{"web"}, BraveAPIKey: braveKey, BraveBaseURL: "api.search.brave.com", Google: GoogleOff},
			map[string]string{"web_search_brave": "BRAVE_API_BASE_URL: "}},
		{"Google turned on after its end", Config{BraveTools: []string{}, GoogleAPIKey: googleKey, GoogleEngineID: engineID, Google: GoogleOn,
			Now: func() time.Time { return google.EndOfService }}, map[string]string{"web_search_google": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, tl := range Tools(tt.cfg) {
				got[tl.Name()] = tl.Unavailable()
			}
			if len(got) != len(tt.want) {
				t.Fatalf("tools = %v, want %v", got, tt.want)
			}
			for name, want := range tt.want {
				if g, ok := got[name]; !ok || (want == "" && g != "") || !strings.HasPrefix(g, want) {
					t.Errorf("%s: Unavailable() = %q, want %q", name, g, want)
				}
			}
		})
	}
}
