package cli

import (
	"context"
	"strings"

	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
)

// serveChecks are the engines /healthz reports and /readyz may require,
// besides the store (always checked, always required):
//
//   - Weaviate, when TOOLPORT_VECTOR_URL is set, is required: the track
//     index lives only there, so a replica that cannot reach it cannot
//     answer semanticSearch and should leave the load balancer's rotation.
//   - Redis, when TOOLPORT_REDIS_URL is set, is reported but not required:
//     the cache and rate limits degrade to calling the upstreams uncached
//     and limiting in-process, so every request still gets its answer (at a
//     cost in quota), and taking every replica out of rotation because the
//     shared cache blinked would turn a slowdown into an outage.
func serveChecks(getenv func(string) string, engines *sharedEngines, musicSvc *music.Service) []server.Check {
	var checks []server.Check
	if strings.TrimSpace(getenv(weaviate.EnvURL)) != "" {
		checks = append(checks, server.Check{Name: "weaviate", Required: true, Check: musicSvc.PingVectors})
	}
	if engines.redis != nil {
		checks = append(checks, server.Check{Name: "redis", Required: false, Check: func(ctx context.Context) error {
			return engines.Ping(ctx)
		}})
	}
	return checks
}
