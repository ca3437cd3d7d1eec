package safehttp

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestPolicyCheckAddrRefusesSpecialRanges(t *testing.T) {
	tests := []struct {
		addr   string
		reason string // substring of BlockedError.Reason
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "link-local"}, // cloud metadata
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.254", "CGNAT"},
		{"fc00::1", "unique local"},
		{"fd12:3456:789a::1", "unique local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.10", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"2001:db8::1", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"192.0.0.170", "IETF"},
		{"fec0::1", "site-local"},
		{"100::1", "discard"},
		{"2001::1", "Teredo"},
		// IPv4-mapped IPv6 forms are judged as their IPv4 address.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:0.0.0.0", "unspecified"},
		// IPv4-compatible (deprecated) forms.
		{"::127.0.0.1", "IPv4-compatible"},
		{"::8.8.8.8", "IPv4-compatible"},
		// 6to4 and NAT64 forms embedding a refused IPv4 address.
		{"2002:7f00:1::1", "6to4 form of loopback 127.0.0.1"},
		{"2002:a9fe:a9fe::", "6to4 form of link-local"},
		{"64:ff9b::7f00:1", "NAT64 form of loopback 127.0.0.1"},
		{"64:ff9b::a00:1", "NAT64 form of private"},
		{"64:ff9b:1::1", "local-use NAT64"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			addr := netip.MustParseAddr(tt.addr)
			err := Policy{}.CheckAddr(addr)
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("CheckAddr(%s) = %v, want *BlockedError", tt.addr, err)
			}
			if !strings.Contains(be.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to mention %q", be.Reason, tt.reason)
			}
			if !be.Range.IsValid() || !be.Range.Contains(addr.WithZone("").Unmap()) && !be.Range.Contains(addr.WithZone("")) {
				t.Errorf("Range = %v does not contain %v", be.Range, addr)
			}
			if !strings.Contains(be.Error(), be.Range.String()) {
				t.Errorf("Error() = %q does not name the range %v", be.Error(), be.Range)
			}
			if err := (Policy{AllowPrivate: true}).CheckAddr(addr); err != nil {
				t.Errorf("AllowPrivate: CheckAddr(%s) = %v, want nil", tt.addr, err)
			}
		})
	}
}

func TestPolicyCheckAddrAllowsPublic(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8",
		"1.1.1.1",
		"93.184.216.34",
		"100.63.255.255",  // just below CGNAT
		"100.128.0.0",     // just above CGNAT
		"172.15.255.255",  // just below 172.16/12
		"172.32.0.0",      // just above
		"169.253.255.255", // just below link-local
		"::ffff:8.8.8.8",
		"2606:4700:4700::1111",
		"2a00:1450:4001:82a::200e",
		"2002:808:808::1",  // 6to4 of 8.8.8.8
		"64:ff9b::808:808", // NAT64 of 8.8.8.8
	} {
		if err := (Policy{}).CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want nil", s, err)
		}
	}
}

func TestPolicyAllowExceptions(t *testing.T) {
	p := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("fd00:1::/64")}}
	tests := []struct {
		addr    string
		allowed bool
	}{
		{"127.0.0.2", true},
		{"::ffff:127.0.0.2", true}, // mapped form matches the IPv4 prefix
		{"127.0.0.1", false},
		{"127.0.0.3", false},
		{"fd00:1::5", true},
		{"fd00:2::5", false},
	}
	for _, tt := range tests {
		err := p.CheckAddr(netip.MustParseAddr(tt.addr))
		if got := err == nil; got != tt.allowed {
			t.Errorf("CheckAddr(%s) = %v, want allowed=%v", tt.addr, err, tt.allowed)
		}
	}
}

func TestPolicyCheckURL(t *testing.T) {
	tests := []struct {
		url     string
		wantErr error // nil for OK; errBlocked for *BlockedError
	}{
		{"http://example.com/", nil},
		{"https://example.com:8443/a?b=c#d", nil},
		{"HTTPS://EXAMPLE.COM/", nil},
		{"http://8.8.8.8/", nil},
		{"http://[2606:4700:4700::1111]/", nil},
		{"ftp://example.com/", ErrUnsupportedScheme},
		{"file:///etc/passwd", ErrUnsupportedScheme},
		{"gopher://example.com/", ErrUnsupportedScheme},
		{"javascript:alert(1)", ErrUnsupportedScheme},
		{"example.com/path", ErrInvalidURL},
		{"//example.com/", ErrInvalidURL},
		{"http:///path", ErrInvalidURL},
		{"http://[::1", ErrInvalidURL},
		{"http://exa mple.com/", ErrInvalidURL},
		{"http://user:pw@example.com/", ErrUserinfo},
		{"http://user@example.com/", ErrUserinfo},
		{"http://127.0.0.1/", errBlocked},
		{"http://[::1]:8080/", errBlocked},
		{"http://[::ffff:127.0.0.1]/", errBlocked},
		{"http://169.254.169.254/latest/meta-data/", errBlocked},
		{"http://0.0.0.0:80/", errBlocked},
		{"http://[fe80::1%25eth0]/", errBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := Policy{}.CheckURL(tt.url)
			switch {
			case tt.wantErr == nil:
				if err != nil || u == nil {
					t.Fatalf("CheckURL = %v, %v; want a URL", u, err)
				}
			case tt.wantErr == errBlocked:
				var be *BlockedError
				if !errors.As(err, &be) {
					t.Fatalf("CheckURL err = %v, want *BlockedError", err)
				}
				if be.Host == "" {
					t.Errorf("BlockedError.Host is empty")
				}
			default:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("CheckURL err = %v, want %v", err, tt.wantErr)
				}
			}
		})
	}
}

// errBlocked stands for "a *BlockedError" in test tables.
var errBlocked = errors.New("blocked")

func TestCheckURLNeverEchoesCredentials(t *testing.T) {
	for _, raw := range []string{
		"http://alice:hunter2@example.com/",
		"ftp://alice:hunter2@example.com/",
		"http://alice:hunter2@[::1",
		"http://alice:hunter2@127.0.0.1/",
		"http://alice:hunter2@exa mple.com/",
		"http://alice:hunter2@%zz/",
	} {
		_, err := Policy{}.CheckURL(raw)
		if err == nil {
			t.Errorf("CheckURL(%q) = nil error", raw)
			continue
		}
		if strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURL(%q) error %q leaks credentials", raw, err)
		}
	}
}
