package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/cache"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/ratelimit"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// Defaults of the upstream rate limits.
const (
	// Brave's free plan allows one request a second (paid plans 20 or 50:
	// set TOOLPORT_BRAVE_RATE_LIMIT, e.g. "20:20").
	defaultBraveRate = "1:1"
	// TIDAL's limiter is a token bucket announced in x-ratelimit-* headers;
	// before any answer the client assumes bursts of 10 at 2 a second, and so
	// does the shared limiter.
	defaultTidalRate = "2:10"
	// defaultRedisPrefix starts every key Toolport writes in Redis
	// (TOOLPORT_REDIS_PREFIX), so that deployments can share one Redis.
	defaultRedisPrefix = "toolport:"
)

// cachePolicies are how long each upstream's results are reused (TTLs fit
// to how fast each upstream's answers change and how scarce its quota is).
// Every replica sharing a Redis shares them; a call with "fresh": true or
// "maxAgeSeconds" asks for newer.
var cachePolicies = map[string]tool.CachePolicy{
	// Web search: rankings move over hours, and Brave's free plan is 2,000
	// searches a month, so the same query within half an hour reuses the
	// answer. News moves within minutes; image and video indexes slowly.
	"web_search_brave":   {TTL: 30 * time.Minute},
	"web_search_google":  {TTL: 30 * time.Minute}, // 100 free queries a day
	"news_search_brave":  {TTL: 5 * time.Minute},
	"image_search_brave": {TTL: time.Hour},
	"video_search_brave": {TTL: time.Hour},
	// Places change hours and ratings slowly (Brave's ids last about 8 h);
	// grounding content and written answers follow the web results they
	// come from.
	"local_search_brave": {TTL: 30 * time.Minute},
	"llm_context_brave":  {TTL: 30 * time.Minute},
	"answer_brave":       {TTL: 30 * time.Minute},
	// web_fetch: pages change, but an agent often reads the same page
	// several times in one conversation; ten minutes covers that without
	// serving a stale page for long.
	"web_fetch": {TTL: 10 * time.Minute},
	// CKAN metadata (data.gov.il) changes when a publisher edits a dataset,
	// at most a few times a day; fifteen minutes keeps an edit visible soon.
	"searchDatasets":         {TTL: 15 * time.Minute},
	"getDatasetDetails":      {TTL: 15 * time.Minute},
	"getDatasetSchema":       {TTL: 15 * time.Minute},
	"getResourceDetails":     {TTL: 15 * time.Minute},
	"searchResources":        {TTL: 15 * time.Minute},
	"getOrganizationDetails": {TTL: 15 * time.Minute},
	"previewResource":        {TTL: 15 * time.Minute}, // a file download: the dearest read
	// Lists of organisations, groups, tags and licences change rarely.
	"listOrganizations": {TTL: time.Hour},
	"listGroups":        {TTL: time.Hour},
	"listTags":          {TTL: time.Hour},
	"listLicenses":      {TTL: time.Hour},
	"listAllDatasets":   {TTL: time.Hour},
	// Datastore rows can be pushed at any time (live tables); activity
	// streams are about what just happened. Short TTLs: they only absorb
	// repeats within one exchange.
	"queryDatastore":          {TTL: 5 * time.Minute},
	"getDatasetActivity":      {TTL: 2 * time.Minute},
	"getOrganizationActivity": {TTL: 2 * time.Minute},
	// TIDAL catalogue reads: search results change as releases are added
	// (daily), an album's tracks hardly ever; six hours keeps a new release
	// findable the same day. These tools' results also say which tracks are
	// in the user's library and index, which changes as the user works, so
	// the TIDAL client caches its answers (tidal.Config.Cache) and the
	// library and index are read on every call.
	"tidalSearch": {TTL: tidal.DefaultCacheTTL, InTool: true},
	"albumTracks": {TTL: tidal.DefaultCacheTTL, InTool: true},
	// Not cached: getStatus (it reports the portal's state now), and the
	// tools that read or write Toolport's own store or the user's TIDAL
	// account (semanticSearch, batchMetadata, suggestPlaylist,
	// savePlaylistToTidal).
}

// sharedEngines is what the replicas of a deployment share: the result cache
// and the upstream rate limiters, in Redis when TOOLPORT_REDIS_URL is set and
// in-process otherwise (the single-machine default).
type sharedEngines struct {
	cache       tool.ResultCache // nil when TOOLPORT_CACHE=off
	redis       *cache.Redis     // nil without TOOLPORT_REDIS_URL
	braveRate   ratelimit.Rate
	tidalRate   ratelimit.Rate
	logger      *slog.Logger
	redisShown  string // the URL with its password hidden
	redisPrefix string
}

// openSharedEngines reads TOOLPORT_REDIS_URL, TOOLPORT_CACHE and the rate
// settings. It does not dial Redis: an unreachable one degrades to no cache
// and in-process limits, with a warning, and shows in Ping.
func openSharedEngines(cfg *config.Config, logger *slog.Logger) (*sharedEngines, error) {
	e := &sharedEngines{logger: logger}
	var err error
	if e.braveRate, err = ratelimit.ParseRate(cfg.Default("TOOLPORT_BRAVE_RATE_LIMIT", defaultBraveRate), 1); err != nil {
		return nil, fmt.Errorf("TOOLPORT_BRAVE_RATE_LIMIT: %w", err)
	}
	if e.tidalRate, err = ratelimit.ParseRate(cfg.Default("TOOLPORT_TIDAL_RATE_LIMIT", defaultTidalRate), 10); err != nil {
		return nil, fmt.Errorf("TOOLPORT_TIDAL_RATE_LIMIT: %w", err)
	}
	if raw := cfg.RedisURL(); raw != "" {
		e.redisShown = config.RedactURL(raw)
		e.redisPrefix = cfg.Default("TOOLPORT_REDIS_PREFIX", defaultRedisPrefix)
		if e.redis, err = cache.OpenRedis(raw, cache.RedisConfig{Prefix: e.redisPrefix + "cache:"}); err != nil {
			return nil, fmt.Errorf("TOOLPORT_REDIS_URL (%s): %w", e.redisShown, err)
		}
	}
	switch v := strings.ToLower(cfg.Default("TOOLPORT_CACHE", "on")); v {
	case "on", "1", "true", "yes":
		if e.redis != nil {
			e.cache = e.redis
		} else {
			e.cache = cache.NewMemory(cache.MemoryConfig{})
		}
	case "off", "0", "false", "no":
	default:
		e.Close()
		return nil, fmt.Errorf("TOOLPORT_CACHE: want on or off, got %q", v)
	}
	return e, nil
}

// registryOptions makes the registry cache the results of the tools with a
// policy.
func (e *sharedEngines) registryOptions() []tool.Option {
	if e.cache == nil {
		return nil
	}
	return []tool.Option{tool.WithResultCache(e.cache, cachePolicies)}
}

// limiter returns the limiter of one upstream quota, named by the upstream
// and (hashed) the credential the quota belongs to.
func (e *sharedEngines) limiter(upstream, credential string, r ratelimit.Rate) ratelimit.Limiter {
	if e.redis == nil {
		l, _ := ratelimit.NewMemory(r) // r was checked when parsed
		return l
	}
	sum := sha256.Sum256([]byte(credential))
	key := e.redisPrefix + "ratelimit:" + upstream + ":" + hex.EncodeToString(sum[:6])
	l, _ := ratelimit.NewRedis(e.redis.Client(), key, r, func(err error) {
		e.logger.Warn("shared rate limit unavailable: limiting in this process only", "upstream", upstream, "error", err)
	})
	return l
}

// Ping checks the shared engines: nil when everything is in-process, else
// whether Redis answers. /readyz uses it when Redis is configured.
func (e *sharedEngines) Ping(ctx context.Context) error {
	if e.redis == nil {
		return nil
	}
	if err := e.redis.Ping(ctx); err != nil {
		return fmt.Errorf("redis %s: %w", e.redisShown, err)
	}
	return nil
}

// Close releases the Redis connections.
func (e *sharedEngines) Close() {
	if e.redis != nil {
		_ = e.redis.Close()
	}
}
