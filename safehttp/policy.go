package safehttp

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/toolport/toolport/internal/textclip"
)

// Policy decides which network addresses outbound connections may reach.
//
// The zero Policy refuses every address that is not plain public unicast:
// loopback, private (RFC 1918), link-local (including the cloud metadata
// address 169.254.169.254), CGNAT, unique-local IPv6, unspecified, multicast,
// broadcast, documentation, benchmarking and other reserved ranges, and the
// IPv4-mapped, IPv4-compatible, 6to4 and NAT64 IPv6 forms of any of them.
type Policy struct {
	// AllowPrivate turns the address check off entirely: every address
	// may be dialled (URLs are still checked for scheme and credentials). It is meant for deployments that deliberately fetch
	// from their own network (the web_fetch tool maps
	// TOOLPORT_FETCH_ALLOW_PRIVATE=1 to it).
	AllowPrivate bool

	// Allow lists explicit exceptions that may be dialled even though they
	// fall in a refused range, e.g. 127.0.0.2/32 for a test server or one
	// intranet host. An IPv4-mapped IPv6 address matches its IPv4 prefix.
	Allow []netip.Prefix

	// AllowHosts names hosts (names or address literals, compared without
	// case or a trailing dot) that may be dialled whatever addresses they
	// resolve to: a server the operator configured, such as an intranet
	// CKAN portal, as opposed to a URL a model or a page chose. Redirects
	// from such a host to any other are checked as usual.
	AllowHosts []string
}

// allowsHost reports whether host is one of p.AllowHosts.
func (p Policy) allowsHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	for _, h := range p.AllowHosts {
		if strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".") == host && host != "" {
			return true
		}
	}
	return false
}

// BlockedError reports that a connection was refused because the address it
// would reach is in a refused range. It names the host and the range, never
// the URL's credentials, path or query.
type BlockedError struct {
	Host   string       // host name or literal from the URL, without port or userinfo
	Addr   netip.Addr   // the address that was about to be dialled
	Range  netip.Prefix // the refused range Addr falls in
	Reason string       // what the range is, e.g. "loopback" or "private (RFC 1918)"
}

func (e *BlockedError) Error() string {
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("safehttp: refusing to connect to %s: %s address (%s)", e.Addr, e.Reason, e.Range)
	}
	return fmt.Sprintf("safehttp: refusing to connect to %q (%s): %s address (%s)", e.Host, e.Addr, e.Reason, e.Range)
}

// Errors for URLs that cannot be fetched. They are wrapped, so test with errors.Is.
var (
	// ErrInvalidURL reports a URL that does not parse or has no host.
	ErrInvalidURL = errors.New("safehttp: invalid URL")
	// ErrUnsupportedScheme reports a URL (or redirect target) whose
	// scheme is not http or https.
	ErrUnsupportedScheme = errors.New("safehttp: unsupported URL scheme")
	// ErrUserinfo reports a URL (or redirect target) that carries
	// credentials ("user:password@"). They are refused rather than sent:
	// an agent-supplied URL with credentials is a leak or a phishing trick
	// (https://trusted.example@evil.example/).
	ErrUserinfo = errors.New("safehttp: URL must not contain credentials")
)

type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges is the default refusal list, ordered so that the most
// specific and most telling reason matches first. It follows the IANA
// IPv4 and IPv6 special-purpose address registries. IPv4-mapped addresses
// are unmapped before this list is consulted; 6to4 and NAT64 addresses are
// checked again on their embedded IPv4 address (see embeddedIPv4).
var blockedRanges = []blockedRange{
	// IPv4
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (\"this network\")"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared CGNAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (incl. cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},

	// IPv6
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking"},
	{netip.MustParsePrefix("2001:10::/28"), "ORCHID"},
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// CheckAddr reports whether addr may be dialled under p. It returns nil or
// a *BlockedError (with Host empty). It is what the client's dialer runs on
// every address it actually connects to.
func (p Policy) CheckAddr(addr netip.Addr) error {
	if p.AllowPrivate {
		return nil
	}
	addr = addr.WithZone("")
	if !addr.IsValid() {
		return &BlockedError{Addr: addr, Reason: "invalid"}
	}
	if p.allowed(addr) {
		return nil
	}
	return check(addr)
}

func (p Policy) allowed(addr netip.Addr) bool {
	un := addr.Unmap()
	for _, pfx := range p.Allow {
		if pfx.Contains(addr) || pfx.Contains(un) {
			return true
		}
	}
	return false
}

// check applies the default refusal list to addr, recursing once into an
// IPv4 address embedded in a mapped, 6to4 or NAT64 IPv6 address.
func check(addr netip.Addr) error {
	a := addr.Unmap()
	for _, r := range blockedRanges {
		if r.prefix.Contains(a) {
			return &BlockedError{Addr: addr, Range: r.prefix, Reason: r.reason}
		}
	}
	if v4, pfx, name, ok := embeddedIPv4(a); ok {
		if err := check(v4); err != nil {
			inner := err.(*BlockedError)
			return &BlockedError{Addr: addr, Range: pfx,
				Reason: fmt.Sprintf("%s form of %s %s", name, inner.Reason, v4)}
		}
		return nil
	}
	// A safety net for anything the registry list misses.
	if !a.IsGlobalUnicast() {
		bits := 32
		if a.Is6() {
			bits = 128
		}
		return &BlockedError{Addr: addr, Range: netip.PrefixFrom(a, bits), Reason: "non-global"}
	}
	return nil
}

// embeddedIPv4 extracts the IPv4 address carried by a 6to4 (2002::/16) or
// well-known-prefix NAT64 (64:ff9b::/96) address, so that 2002:7f00:1:: or
// 64:ff9b::7f00:1 cannot be used to reach 127.0.0.1 through a gateway.
func embeddedIPv4(a netip.Addr) (v4 netip.Addr, pfx netip.Prefix, name string, ok bool) {
	if !a.Is6() {
		return netip.Addr{}, netip.Prefix{}, "", false
	}
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), nat64Prefix, "NAT64", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), sixToFour, "6to4", true
	}
	return netip.Addr{}, netip.Prefix{}, "", false
}

// CheckURL parses rawURL and validates it for fetching under p: the scheme
// must be http or https, there must be a host, there must be no userinfo,
// the port, if any, must be 1–65535, and a literal IP host must pass
// CheckAddr. Literal IPv4 hosts are read as browsers read them (127.1,
// 2130706433, 0x7f000001 and 017700000001 are all 127.0.0.1) and the
// returned URL carries the dotted form; a host that ends in a number but is
// not such an address is ErrInvalidURL. Host names are not resolved here;
// the dialer checks the addresses they resolve to at connect time. Errors
// never contain the raw URL, so credentials cannot leak through them.
func (p Policy) CheckURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidURL, parseReason(err))
	}
	if err := p.checkParsed(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkParsed validates an already parsed URL (a request or a redirect
// target). A host in one of the numeric IPv4 forms browsers accept is
// rewritten in u to its dotted form, so that it is dialled as the address
// it is and never resolved.
func (p Policy) checkParsed(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return fmt.Errorf("%w: missing scheme (want http or https)", ErrInvalidURL)
	default:
		return fmt.Errorf("%w %q (want http or https)", ErrUnsupportedScheme, textclip.Bytes(u.Scheme, 32))
	}
	if u.User != nil {
		return ErrUserinfo
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: missing host", ErrInvalidURL)
	}
	if err := checkPort(u.Port()); err != nil {
		return err
	}
	addr, isIP, err := canonicalHost(host)
	if err != nil {
		return err
	}
	if !isIP || p.allowsHost(host) {
		return nil // a name's addresses are checked when dialled; an allowed host is not checked
	}
	if err := p.CheckAddr(addr); err != nil {
		err.(*BlockedError).Host = host
		return err
	}
	if addr.Is4() && host != addr.String() {
		// A numeric form such as 2130706433 or 127.1 is an address, not a
		// name: request the address itself, as browsers do, so that it is
		// never looked up in DNS.
		port := u.Port()
		u.Host = addr.String()
		if port != "" {
			u.Host += ":" + port
		}
	}
	return nil
}
