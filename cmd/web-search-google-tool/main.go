// Command web-search-google-tool is the web_search_google tool as an ikigai
// external tool: --schema prints its definition; JSON arguments on stdin give
// the result on stdout.
package main

import (
	"os"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/exectool"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/tool"
)

const help = `Configuration: GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID, or "web_search.google.api_key" and
"web_search.google.engine_id" in the credentials file ($TOOLPORT_CREDENTIALS,
~/.config/toolport/credentials.json or ~/.config/ikigai/credentials.json).
GOOGLE_SEARCH_BASE_URL overrides the API's scheme and host.

Note: Google's Custom Search JSON API is closed to new customers and ends on 2027-01-01;
after that a call fails with UPSTREAM_GONE, unless TOOLPORT_GOOGLE_SEARCH=on (a key that still works).`

func main() {
	exectool.Main("web-search-google-tool", help, os.Getenv, func(c *config.Config) (*tool.Tool, error) {
		return websearch.Google(websearch.ConfigFromEnv(c)), nil
	})
}
