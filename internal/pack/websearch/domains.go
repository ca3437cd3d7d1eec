package websearch

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/tool"
)

// maxDomainLen is the longest DNS name.
const maxDomainLen = 253

// domainFilter keeps results whose host is on the allowed list (when it is not
// empty) and not on the blocked list. A domain matches itself and its
// subdomains, case-insensitively, ignoring a leading "www.": "example.com"
// matches www.example.com and docs.example.com but not notexample.com.
type domainFilter struct {
	allowed, blocked []string
}

// newDomainFilter normalises both lists, failing with VALIDATION on an entry
// that is not a domain.
func newDomainFilter(allowed, blocked []string) (domainFilter, error) {
	var f domainFilter
	var err error
	if f.allowed, err = normalizeDomains("allowed_domains", allowed); err != nil {
		return f, err
	}
	if f.blocked, err = normalizeDomains("blocked_domains", blocked); err != nil {
		return f, err
	}
	return f, nil
}

func (f domainFilter) active() bool { return len(f.allowed) > 0 || len(f.blocked) > 0 }

// allows reports whether a result URL passes the filter. A URL without a host
// passes only when there is no allowed list.
func (f domainFilter) allows(rawURL string) bool {
	if !f.active() {
		return true
	}
	host := hostOf(rawURL)
	for _, d := range f.blocked {
		if host != "" && domainMatches(host, d) {
			return false
		}
	}
	if len(f.allowed) == 0 {
		return true
	}
	for _, d := range f.allowed {
		if host != "" && domainMatches(host, d) {
			return true
		}
	}
	return false
}

func domainMatches(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

func hostOf(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	return stripWWW(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."))
}

// stripWWW drops leading "www." labels unless what is left is a bare TLD.
func stripWWW(h string) string {
	// Every leading "www.", so that a domain and its normalised form
	// normalise alike ("www.www.example.com"; FuzzDomainFilter found it).
	for {
		rest, ok := strings.CutPrefix(h, "www.")
		if !ok || !strings.Contains(rest, ".") {
			return h
		}
		h = rest
	}
}

func normalizeDomains(field string, in []string) ([]string, error) {
	if len(in) > maxDomains {
		return nil, validationError(field, "maxItems", fmt.Sprintf("%s: at most %d domains, got %d", field, maxDomains, len(in)))
	}
	var out []string
	for i, raw := range in {
		d, ok := normalizeDomain(raw)
		if !ok {
			return nil, validationError(fmt.Sprintf("%s[%d]", field, i), "format",
				fmt.Sprintf("%s[%d]: %q is not a domain name (want e.g. example.com)", field, i, httpclient.ClipRunes(raw, 80)))
		}
		out = append(out, d)
	}
	return out, nil
}

// normalizeDomain accepts "example.com", "Example.COM", "www.example.com",
// "*.example.com", ".example.com" and a URL such as "https://example.com/x",
// and returns the bare lower-case domain.
func normalizeDomain(raw string) (string, bool) {
	d := strings.ToLower(strings.TrimSpace(raw))
	if _, rest, ok := strings.Cut(d, "://"); ok {
		d = rest
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		d = d[i+1:]
	}
	if i := strings.LastIndexByte(d, ':'); i >= 0 && !strings.Contains(d, "]") {
		d = d[:i]
	}
	d = strings.TrimPrefix(d, "*.")
	d = strings.Trim(d, ".")
	if strings.Contains(d, "..") {
		return "", false
	}
	d = stripWWW(d)
	if d == "" || len(d) > maxDomainLen {
		return "", false
	}
	for _, r := range d {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '.' && r != '_' {
			return "", false
		}
	}
	return d, true
}

func validationError(path, rule, msg string) *tool.Error {
	return &tool.Error{Code: tool.CodeValidation, Message: msg, Violations: []tool.Violation{{Path: path, Rule: rule, Message: msg}}}
}
