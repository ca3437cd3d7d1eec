package opendata

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// Bounds of what a [Catalog] keeps.
const (
	// MaxCatalogNames bounds the publisher or group names asked of, and
	// kept for, one portal: completions need the names, not every one of a
	// portal with tens of thousands.
	MaxCatalogNames = 1000
	// CatalogTTL is how long a portal's names are reused: publishers and
	// groups change rarely, and a host asks on every key typed.
	CatalogTTL = 10 * time.Minute
)

// A Catalog answers MCP hosts about the configured portals: a dataset's
// metadata (as getDatasetDetails gives it) and the names of publishers and
// groups (completions). It serves only the default portal and the hosts
// CKAN_ALLOWED_PORTALS lists by name; a portal an agent may name under "*"
// is not one a host may browse.
type Catalog struct {
	p       *pack
	defHost string
	hosts   []string // default first
	now     func() time.Time

	mu    sync.Mutex
	names map[string]cachedNames // kind + " " + host
}

type cachedNames struct {
	names []string
	at    time.Time
}

// NewCatalog returns a catalog over the portals of cfg.
func NewCatalog(cfg Config) *Catalog {
	p := newPack(cfg)
	c := &Catalog{p: p, now: time.Now, names: map[string]cachedNames{}}
	if p.def != nil {
		if u, err := url.Parse(p.def.BaseURL()); err == nil {
			c.defHost = strings.ToLower(u.Host)
			c.hosts = append(c.hosts, c.defHost)
		}
	}
	for _, h := range cfg.AllowedHosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !slices.Contains(c.hosts, h) {
			c.hosts = append(c.hosts, h)
		}
	}
	return c
}

// Portals lists the configured portals' hosts, the default first.
func (c *Catalog) Portals() []string { return slices.Clone(c.hosts) }

// portal returns the portal input that selects host ("" for the default),
// or a BLOCKED error for a host that is not configured.
func (c *Catalog) portal(host string) (string, error) {
	host = strings.ToLower(strings.TrimSpace(host))
	switch {
	case host == "" || host == c.defHost:
		return "", nil
	case slices.Contains(c.hosts, host):
		return "https://" + host, nil
	}
	return "", &tool.Error{Code: tool.CodeBlocked,
		Message: fmt.Sprintf("portal %s is not configured (configured: %s)", host, strings.Join(c.hosts, ", "))}
}

// Dataset returns a dataset's metadata as JSON (getDatasetDetails' output,
// with its whole description and up to 500 resources) and its title.
func (c *Catalog) Dataset(ctx context.Context, host, name string) ([]byte, string, error) {
	portal, err := c.portal(host)
	if err != nil {
		return nil, "", err
	}
	out, err := c.p.getDatasetDetails(ctx, GetDatasetDetailsInput{ID: name, ResourcesLimit: 500, FullNotes: true, Portal: portal})
	if err != nil {
		return nil, "", err
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, "", fmt.Errorf("opendata: encoding dataset %s: %w", name, err)
	}
	return body, out.Title, nil
}

// Organizations lists a portal's publishers' names, cached for CatalogTTL.
func (c *Catalog) Organizations(ctx context.Context, host string) ([]string, error) {
	return c.list(ctx, "organizations", host, (*ckan.Client).OrganizationList)
}

// Groups lists a portal's dataset groups' names, cached for CatalogTTL.
func (c *Catalog) Groups(ctx context.Context, host string) ([]string, error) {
	return c.list(ctx, "groups", host, (*ckan.Client).GroupList)
}

func (c *Catalog) list(ctx context.Context, kind, host string,
	fetch func(*ckan.Client, context.Context, *ckan.ListOptions) ([]string, *ckan.Response, error)) ([]string, error) {
	portal, err := c.portal(host)
	if err != nil {
		return nil, err
	}
	key := kind + " " + portal
	c.mu.Lock()
	cached, ok := c.names[key]
	c.mu.Unlock()
	if ok && c.now().Sub(cached.at) < CatalogTTL {
		return cached.names, nil
	}
	client, err := c.p.client(portal)
	if err != nil {
		return nil, err
	}
	names, _, err := fetch(client, ctx, &ckan.ListOptions{Sort: "name asc", Limit: MaxCatalogNames})
	if err != nil {
		return nil, toolError(err)
	}
	names = names[:min(len(names), MaxCatalogNames)] // a portal may ignore the limit
	c.mu.Lock()
	c.names[key] = cachedNames{names: names, at: c.now()}
	c.mu.Unlock()
	return names, nil
}
