package safehttp

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
)

// errNotIPv4 reports a host that ends in a number but is not an IPv4
// address in any form browsers accept ("1.2.3.4.5", "example.123",
// "0x1g", "256.1.1.1"). Browsers refuse such URLs; so does this package,
// rather than handing the name to DNS.
var errNotIPv4 = errors.New("host ends in a number but is not a valid IPv4 address")

// parseIPv4Host parses host the way the WHATWG URL Standard's host parser
// does once it has decided the host "ends in a number": one to four parts
// separated by dots (one trailing dot allowed), each decimal, octal
// (leading 0) or hexadecimal (leading 0x); every part but the last is one
// byte, and the last fills the remaining bytes. So 127.1, 2130706433,
// 0x7f000001, 017700000001 and 127.0.0.1. are all 127.0.0.1.
//
// numeric reports whether host ends in a number at all. When it does not,
// host is a name (or an IPv6 literal) and err is nil; when it does, either
// addr is the address it denotes or err is errNotIPv4.
func parseIPv4Host(host string) (addr netip.Addr, numeric bool, err error) {
	if !endsInNumber(host) {
		return netip.Addr{}, false, nil
	}
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errNotIPv4
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, true, errNotIPv4
		}
		if i < len(parts)-1 && n > 255 {
			return netip.Addr{}, true, errNotIPv4
		}
		nums[i] = n
	}
	last := nums[len(parts)-1]
	if last >= 1<<(8*(5-len(parts))) {
		return netip.Addr{}, true, errNotIPv4
	}
	v := last
	for i := range len(parts) - 1 {
		v += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// endsInNumber is the URL Standard's "ends in a number" check: the last
// dot-separated label (ignoring one trailing dot) is all decimal digits,
// or parses as an IPv4 number (hex with 0x, octal with a leading 0).
func endsInNumber(host string) bool {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Number parses one part of an IPv4 host. Values above 2³² are
// reported as not ok: no part of a valid address can be that large, and
// stopping there keeps the arithmetic from overflowing.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true // "0x" and "0" followed by nothing are zero
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := digitValue(s[i])
		if d >= base {
			return 0, false
		}
		n = n*uint64(base) + uint64(d)
		if n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}

func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// checkPort accepts an empty port (the scheme's default) or a decimal
// number from 1 to 65535. Port 0 cannot be connected to.
func checkPort(port string) error {
	if port == "" {
		return nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%w: port %s is not a number from 1 to 65535", ErrInvalidURL, quoteBounded(port, 16))
	}
	return nil
}

// canonicalHost decides what host means before anything is resolved: an
// IP literal (bracketed IPv6, dotted IPv4 or any numeric IPv4 form) comes
// back as its address with isIP set; a host that ends in a number but is
// no IPv4 address is ErrInvalidURL; anything else is a name for DNS.
func canonicalHost(host string) (addr netip.Addr, isIP bool, err error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true, nil
	}
	a, numeric, err := parseIPv4Host(host)
	switch {
	case err != nil:
		return netip.Addr{}, false, fmt.Errorf("%w: %s: %v", ErrInvalidURL, quoteBounded(host, 100), err)
	case numeric:
		return a, true, nil
	}
	return netip.Addr{}, false, nil
}

// RedactURL renders a URL, well-formed or not, for an error message or a
// log line: scheme, host and path only. Credentials ("user:pass@"), the
// query and the fragment are dropped, control characters and invalid UTF-8
// are percent-escaped, and the result is at most about 200 bytes. Every
// URL that enters an error in this package goes through it, and callers
// that name a URL in their own errors should use it too.
func RedactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	// The authority starts after "//" (or after "scheme:" when the slashes
	// are missing) and ends at the first slash; browsers treat "\" as "/".
	start := 0
	if i := strings.Index(raw, "//"); i >= 0 {
		start = i + 2
	} else if i := strings.IndexByte(raw, ':'); i > 0 && validScheme(raw[:i]) {
		start = i + 1
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], `/\`); i >= 0 {
		end = start + i
	}
	authority := raw[start:end]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	// A "port" that is not a number is not one: it may be anything, even
	// the password of a mangled "user:pass@" that lost its "@".
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && i > strings.LastIndexByte(authority, ']') &&
		strings.Trim(authority[i+1:], "0123456789") != "" {
		authority = authority[:i]
	}
	raw = raw[:start] + authority + raw[end:]
	return textclip.Bytes(escapeControl(raw), 200)
}

// redact renders a parsed URL for error text; see RedactURL.
func redact(u *url.URL) string {
	return RedactURL(u.String())
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// escapeControl percent-escapes control characters, spaces and invalid
// UTF-8 so that error text stays one printable line.
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0x21 || r == 0x7f || (r == utf8.RuneError && size == 1) || (0x80 <= r && r < 0xa0) {
			for j := range size {
				fmt.Fprintf(&b, "%%%02X", s[i+j])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// quoteBounded quotes a fragment of untrusted input for error text.
func quoteBounded(s string, n int) string {
	return strconv.Quote(textclip.Bytes(s, n))
}
