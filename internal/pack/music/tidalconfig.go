package music

import (
	"context"
	"strings"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// TidalConfigFromEnv reads the TIDAL settings: TIDAL_CLIENT_ID and
// TIDAL_CLIENT_SECRET (or tidal.client_id / tidal.client_secret in the
// credentials file), TIDAL_API_BASE_URL, TIDAL_AUTH_URL and TIDAL_COUNTRY_CODE.
func TidalConfigFromEnv(c *config.Config) tidal.Config {
	return tidal.Config{
		ClientID:     c.Secret("TIDAL_CLIENT_ID", "tidal.client_id"),
		ClientSecret: c.Secret("TIDAL_CLIENT_SECRET", "tidal.client_secret"),
		BaseURL:      c.Default("TIDAL_API_BASE_URL", tidal.DefaultBaseURL),
		AuthURL:      c.Default("TIDAL_AUTH_URL", tidal.DefaultAuthURL),
		CountryCode:  strings.ToUpper(c.Default("TIDAL_COUNTRY_CODE", tidal.DefaultCountryCode)),
	}
}

// reportTidalProgress passes the TIDAL client's progress on to the tool
// call whose context it runs in.
func reportTidalProgress(ctx context.Context, p tidal.Progress) {
	tool.ReportProgress(ctx, tool.Progress{Done: float64(p.Done), Total: float64(p.Total), Message: p.Message})
}
