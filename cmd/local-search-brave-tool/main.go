// Command local-search-brave-tool is the local_search_brave tool as an ikigai external tool:
// --schema prints its definition; JSON arguments on stdin give the result on
// stdout.
package main

import (
	"os"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/exectool"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/tool"
)

const help = `Configuration: BRAVE_API_KEY, or "web_search.brave.api_key" in the credentials file
($TOOLPORT_CREDENTIALS, ~/.config/toolport/credentials.json or ~/.config/ikigai/credentials.json).
BRAVE_API_BASE_URL overrides the API's scheme and host. Get a key: https://brave.com/search/api/
Brave's local search (its /res/v1/local endpoints) is part of its Search plan; a key whose plan lacks it gets AUTH_INVALID.`

func main() {
	exectool.Main("local-search-brave-tool", help, os.Getenv, func(c *config.Config) (*tool.Tool, error) {
		return websearch.Local(websearch.ConfigFromEnv(c)), nil
	})
}
