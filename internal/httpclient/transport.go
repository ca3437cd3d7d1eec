package httpclient

import (
	"net/http"
	"time"
)

// Connection pool sizes of every HTTP client Toolport builds. Go's default of
// 2 idle connections per host is far below the concurrency of a chat server
// (hundreds of turns calling one model and a few upstream APIs at once): in a
// burst, every request beyond the second found no idle connection and paid
// for a new TCP (and TLS) handshake. 64 per host keeps a burst's connections
// for the next one; the total bounds what idles across many hosts (web_fetch
// and named CKAN portals reach arbitrary hosts). Idle connections are closed
// after IdleConnTimeout, below the keep-alive of common servers and proxies.
const (
	MaxIdleConnsPerHost = 64
	MaxIdleConns        = 256
	IdleConnTimeout     = 90 * time.Second
)

// SizePool sets t's idle pool to the sizes above. It changes nothing else
// (dialer, proxy, TLS, timeouts), for transports built with their own policy.
func SizePool(t *http.Transport) {
	t.MaxIdleConns = MaxIdleConns
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	t.IdleConnTimeout = IdleConnTimeout
}

// NewTransport returns a copy of [http.DefaultTransport] (its dial, TLS and
// proxy settings) with the pool sizes above. Share one per client: a
// transport is the pool, so one built per request would reuse nothing.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	SizePool(t)
	return t
}

// NewClient returns a client over a new [NewTransport] with the given
// overall timeout (0 for none: deadlines then come from each request's
// context).
func NewClient(timeout time.Duration) *http.Client {
	return &http.Client{Transport: NewTransport(), Timeout: timeout}
}
