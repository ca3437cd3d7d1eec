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
