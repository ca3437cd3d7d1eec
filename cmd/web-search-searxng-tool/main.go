// Command web-search-searxng-tool is the web_search_searxng tool as an ikigai
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

const help = `Configuration: TOOLPORT_SEARXNG_URL, or "web_search.searxng.url" in the credentials file
($TOOLPORT_CREDENTIALS, ~/.config/toolport/credentials.json or ~/.config/ikigai/credentials.json):
the base URL of a SearXNG instance whose settings.yml lists json under search.formats.
No account or key is needed; without the URL a call fails with CONFIG_ERROR.`

func main() {
	exectool.Main("web-search-searxng-tool", help, os.Getenv, func(c *config.Config) (*tool.Tool, error) {
		return websearch.Searxng(websearch.ConfigFromEnv(c)), nil
	})
}
