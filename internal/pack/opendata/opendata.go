// Package opendata is Toolport's "ckan" tool pack (searchDatasets,
// getDatasetDetails, queryDatastore and the other CKAN tools that Tools
// lists), built on the CKAN client in package ckan. It holds what is
// Toolport's rather than CKAN's: the tools' inputs and outputs, settings from
// the environment, the policy for portals an agent names per call, and the
// mapping of the client's typed errors to tool errors.
package opendata

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// Pack is the name of the tool pack.
const Pack = "ckan"

// Config configures the ckan tools.
type Config struct {
	// BaseURL is the default portal (its root or its /api/3 URL); empty
	// selects ckan.DefaultBaseURL (data.gov.il).
	BaseURL string
	// HTTPClient sends every request; nil uses http.DefaultClient. A server
	// that exposes the per-call portal input to untrusted agents should pass
	// an SSRF-checked client here (package safehttp).
	HTTPClient *http.Client
	// UserAgent overrides ckan.DefaultUserAgent.
	UserAgent string
	// Timeout bounds each API call; zero uses ckan.DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes bounds each response; zero uses ckan.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// PortalHTTPClient sends the requests to portals named by a call's
	// portal input (agent-supplied URLs), and previewResource's downloads. ConfigFromEnv sets an SSRF-checked
	// client (package safehttp) that refuses private, loopback and link-local
	// addresses at connect time; nil uses HTTPClient for portals, and for
	// downloads an SSRF-checked client that refuses all non-public addresses.
	PortalHTTPClient *http.Client
	// PreviewMaxBytes bounds how much of a file previewResource downloads;
	// zero uses DefaultPreviewBytes.
	PreviewMaxBytes int
	// PreviewXLSXMaxBytes bounds the size of an XLSX workbook
	// previewResource reads (whole); zero uses DefaultPreviewXLSXBytes.
	PreviewXLSXMaxBytes int
	// AllowPortal decides whether a tool call may use another portal than
	// BaseURL (the "portal" input), given the normalised API URL. Nil
	// selects DefaultAllowPortal. Return an error to refuse; its text is
	// shown to the agent.
	AllowPortal func(apiURL string) error
	// AllowedHosts are the other portals' hosts CKAN_ALLOWED_PORTALS names
	// (not "*"): with the default portal, the portals a [Catalog] serves.
	AllowedHosts []string
}

// ConfigFromEnv reads the pack's settings: CKAN_BASE_URL or ckan.base_url
// in the credentials file (the default portal, which the page's Settings sets),
// CKAN_USER_AGENT, and CKAN_ALLOWED_PORTALS, a comma-separated list of host
// names that the portal input may select ("*" for any public host; unset
// means DefaultAllowPortal).
func ConfigFromEnv(c *config.Config) Config {
	cfg := Config{
		BaseURL:   cmp.Or(c.Lookup("CKAN_BASE_URL", "ckan.base_url"), ckan.DefaultBaseURL),
		UserAgent: c.Default("CKAN_USER_AGENT", ckan.DefaultUserAgent),
	}
	// Portals an agent names are untrusted URLs, fetched under the same
	// address policy as web_fetch (TOOLPORT_FETCH_ALLOW_PRIVATE lifts it).
	allowPrivate := c.Bool("TOOLPORT_FETCH_ALLOW_PRIVATE")
	cfg.PortalHTTPClient = safehttp.NewClient(safehttp.Options{
		Policy: safehttp.Policy{AllowPrivate: allowPrivate},
	}).HTTPClient()
	// The configured portal is the operator's choice and may be on their
	// own network; but where it redirects, and what its answers link to, is
	// checked like any other URL.
	cfg.HTTPClient = DefaultPortalClient(cfg.BaseURL, allowPrivate)
	if list := strings.TrimSpace(c.Env("CKAN_ALLOWED_PORTALS")); list != "" && list != "*" {
		var hosts []string
		for h := range strings.SplitSeq(list, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
				if u, err := url.Parse(h); err == nil && u.Host != "" {
					h = strings.ToLower(u.Hostname())
				}
				hosts = append(hosts, h)
			}
		}
		cfg.AllowPortal, cfg.AllowedHosts = AllowHosts(hosts...), hosts
	}
	return cfg
}

// DefaultPortalClient returns the SSRF-checked client for the configured
// portal baseURL: its host may be dialled whatever its address, every other
// host (a redirect's target) only when public, unless allowPrivate.
func DefaultPortalClient(baseURL string, allowPrivate bool) *http.Client {
	policy := safehttp.Policy{AllowPrivate: allowPrivate}
	if u, err := url.Parse(strings.TrimSpace(baseURL)); err == nil && u.Hostname() != "" {
		policy.AllowHosts = []string{u.Hostname()}
	}
	return safehttp.NewClient(safehttp.Options{Policy: policy}).HTTPClient()
}

// AllowHosts returns an AllowPortal policy that accepts only the named hosts.
func AllowHosts(hosts ...string) func(string) error {
	return func(apiURL string) error {
		u, err := url.Parse(apiURL)
		if err != nil {
			return err
		}
		h := strings.ToLower(u.Hostname())
		for _, allowed := range hosts {
			if h == allowed {
				return nil
			}
		}
		return fmt.Errorf("portal %s is not in the allowed list (%s)", h, strings.Join(hosts, ", "))
	}
}

// DefaultAllowPortal accepts any portal whose host is a name or a public IP
// address, and refuses literal loopback, private, link-local and unspecified
// addresses and "localhost". It does not resolve names: a name that resolves
// to a private address passes, so deployments that face untrusted agents
// should also set Config.HTTPClient to an SSRF-checked client.
func DefaultAllowPortal(apiURL string) error {
	u, err := url.Parse(apiURL)
	if err != nil {
		return err
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return errors.New("a portal on localhost is not allowed")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
			a.IsUnspecified() || a.IsMulticast() || a.Is4() && net.IP(a.AsSlice()).Equal(net.IPv4bcast) ||
			(a.Is4() && a.As4()[0] == 100 && a.As4()[1]&0xC0 == 64) { // CGNAT 100.64/10
			return fmt.Errorf("a portal at the non-public address %s is not allowed", a)
		}
	}
	return nil
}

// pack holds what every tool call shares.
type pack struct {
	cfg  Config
	opts []ckan.Option
	// fetch downloads the files previewResource reads: their URLs come
	// from agents or from portal metadata, so it is always SSRF-checked.
	fetch        *http.Client
	previewBytes int
	xlsxBytes    int
	// xlsxSlots bounds the workbooks read at once: each may hold its
	// download and up to xlsxUnzipBytes of parts in memory.
	xlsxSlots chan struct{}
	xlsxWait  time.Duration // how long a preview waits for a slot
	def       *ckan.Client
	defErr    error // a bad BaseURL: reported on every call as CONFIG_ERROR
	allowed   func(string) error
}

// Tools returns the pack's tools: searchDatasets, getDatasetDetails,
// listGroups, listTags, listOrganizations, queryDatastore,
// getResourceDetails, searchResources, getOrganizationDetails,
// getDatasetActivity, getOrganizationActivity, getDatasetSchema,
// listAllDatasets, listLicenses, getStatus and previewResource.
func Tools(cfg Config) []*tool.Tool {
	p := newPack(cfg)
	return []*tool.Tool{
		searchDatasetsTool(p),
		getDatasetDetailsTool(p),
		listGroupsTool(p),
		listTagsTool(p),
		listOrganizationsTool(p),
		queryDatastoreTool(p),
		getResourceDetailsTool(p),
		searchResourcesTool(p),
		getOrganizationDetailsTool(p),
		getDatasetActivityTool(p),
		getOrganizationActivityTool(p),
		getDatasetSchemaTool(p),
		listAllDatasetsTool(p),
		listLicensesTool(p),
		getStatusTool(p),
		previewResourceTool(p),
	}
}

// newPack sets up what the pack's tools (and a [Catalog]) share.
func newPack(cfg Config) *pack {
	p := &pack{cfg: cfg, allowed: cfg.AllowPortal}
	if p.allowed == nil {
		p.allowed = DefaultAllowPortal
	}
	p.opts = []ckan.Option{ckan.WithHTTPClient(cfg.HTTPClient), ckan.WithUserAgent(cfg.UserAgent),
		ckan.WithTimeout(cfg.Timeout), ckan.WithMaxBodyBytes(cfg.MaxBodyBytes)}
	p.def, p.defErr = ckan.NewClient(cfg.BaseURL, p.opts...)
	// Files are fetched like per-call portals, never through HTTPClient,
	// which may reach private addresses; without a PortalHTTPClient a
	// client that refuses every non-public address is used.
	p.fetch = cfg.PortalHTTPClient
	if p.fetch == nil {
		p.fetch = safehttp.NewClient(safehttp.Options{}).HTTPClient()
	}
	p.previewBytes = cfg.PreviewMaxBytes
	if p.previewBytes <= 0 {
		p.previewBytes = DefaultPreviewBytes
	}
	p.xlsxBytes = cfg.PreviewXLSXMaxBytes
	if p.xlsxBytes <= 0 {
		p.xlsxBytes = DefaultPreviewXLSXBytes
	}
	p.xlsxSlots, p.xlsxWait = make(chan struct{}, maxConcurrentXLSX), xlsxQueueWait
	return p
}

// annotations are shared by every tool of the pack: they read a remote portal.
func annotations() tool.Annotations {
	return tool.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}
}

// client returns the client for a call: the default portal, or the one the
// call names in its portal input, if it is a valid, allowed http(s) URL.
func (p *pack) client(portal string) (*ckan.Client, error) {
	if strings.TrimSpace(portal) == "" {
		if p.defErr != nil {
			return nil, &tool.Error{Code: tool.CodeConfig, Message: "CKAN_BASE_URL: " + p.defErr.Error(), Err: p.defErr}
		}
		return p.def, nil
	}
	opts := p.opts
	if p.cfg.PortalHTTPClient != nil {
		opts = append(slices.Clone(opts), ckan.WithHTTPClient(p.cfg.PortalHTTPClient))
	}
	c, err := ckan.NewClient(portal, opts...)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeInvalidURL, Message: "portal: " + strings.TrimPrefix(err.Error(), "ckan: "), Err: err}
	}
	if p.def != nil && c.BaseURL() == p.def.BaseURL() {
		return p.def, nil
	}
	if err := p.allowed(c.BaseURL()); err != nil {
		return nil, &tool.Error{Code: tool.CodeBlocked, Message: "portal: " + err.Error(), Err: err}
	}
	return c, nil
}

// nonNil returns s, or an empty slice for nil: outputs show [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
