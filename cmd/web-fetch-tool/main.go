// Command web-fetch-tool is the web_fetch tool as an ikigai external tool:
// --schema prints its definition; JSON arguments on stdin give the result on stdout.
package main

import (
	"os"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/exectool"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/tool"
)

const help = `Configuration (environment):
  TOOLPORT_FETCH_ALLOW_PRIVATE=1   allow private, loopback and link-local addresses (refused by default)
  TOOLPORT_FETCH_MAX_BYTES         page size cap in bytes (default 10 MiB)
  TOOLPORT_FETCH_TIMEOUT           whole-fetch timeout, e.g. 20s (default 30s)
  TOOLPORT_FETCH_MAX_CONCURRENT    fetches in progress at once (default 8)
  TOOLPORT_FETCH_MAX_INFLIGHT_BYTES  page bytes in extraction at once (default 24 MiB)
  TOOLPORT_FETCH_QUEUE_WAIT        wait for a free slot before RATE_LIMIT, e.g. 5s (default 5s)
  TOOLPORT_FETCH_IGNORE_ROBOTS=1   skip robots.txt (respected by default: ROBOTS_DISALLOWED)`

func main() {
	exectool.Main("web-fetch-tool", help, os.Getenv, func(c *config.Config) (*tool.Tool, error) {
		cfg, err := webfetch.ConfigFromEnv(c)
		if err != nil {
			return nil, err
		}
		return webfetch.Tool(cfg), nil
	})
}
