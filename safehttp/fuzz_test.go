package safehttp

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// FuzzCheckURL feeds arbitrary strings through URL validation and the
// address check. Nothing may panic, an accepted URL must be http(s) with a
// host and no userinfo, a literal loopback host must never be accepted, and
// an error must never repeat the URL's password.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://example.com/",
		"https://user:pass@example.com/",
		"http://127.0.0.1:8080/",
		"http://[::ffff:127.0.0.1]/",
		"http://[fe80::1%25eth0]/",
		"http://[64:ff9b::7f00:1]/",
		"http://[2002:7f00:1::]/",
		"ftp://x/",
		"http://[::1",
		"http://%zz/",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Policy{}.CheckURL(raw)
		if err != nil {
			if u != nil {
				t.Fatalf("CheckURL returned both a URL and %v", err)
			}
			if i := strings.Index(raw, "://"); i >= 0 {
				if at := strings.LastIndex(raw, "@"); at > i {
					userinfo := raw[i+3 : at]
					if _, pw, ok := strings.Cut(userinfo, ":"); ok && len(pw) >= 6 && !strings.ContainsAny(pw, "/?#") &&
						strings.Contains(err.Error(), pw) && !strings.Contains(raw[:i], pw) {
						t.Fatalf("error %q repeats the password %q", err, pw)
					}
				}
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q with userinfo or without host", raw)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && a.Unmap().IsLoopback() {
			t.Fatalf("accepted loopback literal %q", raw)
		}
		// Every address check must be decided without panicking.
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			var be *BlockedError
			if err := (Policy{}).CheckAddr(a); err != nil && !errors.As(err, &be) {
				t.Fatalf("CheckAddr error %v is not a *BlockedError", err)
			}
		}
	})
}

// FuzzCheckAddr checks every 16-byte address: mapped forms must be judged
// like their IPv4 address, and nothing may panic.
func FuzzCheckAddr(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1})
	f.Add([]byte{0x20, 0x02, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 16 {
			return
		}
		a := netip.AddrFrom16([16]byte(b))
		err := Policy{}.CheckAddr(a)
		if a.Is4In6() {
			err4 := Policy{}.CheckAddr(a.Unmap())
			if (err == nil) != (err4 == nil) {
				t.Fatalf("%v and %v judged differently: %v vs %v", a, a.Unmap(), err, err4)
			}
		}
		if err == nil && !a.Unmap().IsGlobalUnicast() {
			t.Fatalf("accepted non-global %v", a)
		}
	})
}

// FuzzParseIPv4Host checks the numeric host parser against net/netip
// where they must agree (dotted decimal without leading zeros), and its
// own invariants everywhere: no panic, an address only for a host that
// ends in a number, and an address that reads back as itself.
func FuzzParseIPv4Host(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "127.1", "2130706433", "0x7f000001", "017700000001",
		"127.0.0.1.", "256.0.0.1", "1.2.3.4.5", "example.123", "0x", "09",
		"4294967296", "1..2", "", ".", "0x7f.1", "1.2.3.4..", "001.2.3.4",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		addr, numeric, err := parseIPv4Host(host)
		if !numeric && (err != nil || addr.IsValid()) {
			t.Fatalf("%q: not numeric but got %v, %v", host, addr, err)
		}
		if numeric && (err == nil) != addr.IsValid() {
			t.Fatalf("%q: both or neither of address %v and error %v", host, addr, err)
		}
		if err == nil && addr.IsValid() {
			if !addr.Is4() {
				t.Fatalf("%q: %v is not IPv4", host, addr)
			}
			again, _, err := parseIPv4Host(addr.String())
			if err != nil || again != addr {
				t.Fatalf("%q: %v reads back as %v, %v", host, addr, again, err)
			}
		}
		// netip accepts exactly the dotted-decimal form without leading
		// zeros; there the two parsers must agree.
		if want, nerr := netip.ParseAddr(host); nerr == nil && want.Is4() {
			if err != nil || addr != want {
				t.Fatalf("%q: netip says %v, parseIPv4Host says %v, %v", host, want, addr, err)
			}
		}
		if dottedDecimal(host) {
			want, nerr := netip.ParseAddr(host)
			if (nerr == nil) != (err == nil) || (nerr == nil && want != addr) {
				t.Fatalf("%q: netip says %v, %v; parseIPv4Host says %v, %v", host, want, nerr, addr, err)
			}
		}
		_, _, _ = canonicalHost(host)
		_ = RedactURL("http://" + host + "/")
	})
}

// dottedDecimal reports whether s is four dot-separated decimal numbers
// of one to three digits without leading zeros, the form both parsers read.
func dottedDecimal(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" || (len(p) > 1 && p[0] == '0') {
			return false
		}
	}
	return true
}

// FuzzRedactURL: whatever the input, the redacted form has no query, no
// fragment and no control characters, and keeps nothing after an "@" of
// the authority.
func FuzzRedactURL(f *testing.F) {
	f.Add("http://user:pass@host/p?token=secret#f")
	f.Add("http://u:p@ho\x00st:pass/\x01?x")
	f.Add("//a@b@c/d")
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		if strings.ContainsAny(got, "?#") {
			t.Fatalf("RedactURL(%q) = %q keeps a query or fragment", raw, got)
		}
		for _, c := range []byte(got) {
			if c < 0x21 || c == 0x7f {
				t.Fatalf("RedactURL(%q) = %q has a control character", raw, got)
			}
		}
		if len(got) > 200+len("…") {
			t.Fatalf("RedactURL(%q) is %d bytes long", raw, len(got))
		}
	})
}
