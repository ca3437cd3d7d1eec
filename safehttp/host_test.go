package safehttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestParseIPv4Host(t *testing.T) {
	tests := []struct {
		host    string
		want    string // dotted address; "" with numeric for errNotIPv4
		numeric bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1.", "127.0.0.1", true},
		{"127.1", "127.0.0.1", true},
		{"127.0.1", "127.0.0.1", true},
		{"2130706433", "127.0.0.1", true},
		{"0x7f000001", "127.0.0.1", true},
		{"0X7F000001", "127.0.0.1", true},
		{"017700000001", "127.0.0.1", true},
		{"0x7f.1", "127.0.0.1", true},
		{"0177.0.0.01", "127.0.0.1", true},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1", true},
		{"0xa9fea9fe", "169.254.169.254", true},
		{"0", "0.0.0.0", true},
		{"0x", "0.0.0.0", true},
		{"00", "0.0.0.0", true},
		{"4294967295", "255.255.255.255", true},
		{"1.2.65535", "1.2.255.255", true},
		{"1.16777215", "1.255.255.255", true},
		{"134744072", "8.8.8.8", true},

		{"4294967296", "", true},  // over 32 bits
		{"0x100000000", "", true}, // over 32 bits
		{"99999999999999999999", "", true},
		{"256.0.0.1", "", true},   // a leading part over 255
		{"1.2.3.256", "", true},   // the last part over its one byte
		{"1.2.65536", "", true},   // the last part over its two bytes
		{"1.2.3.4.5", "", true},   // five parts
		{"1..2", "", true},        // empty part
		{"example.123", "", true}, // a name that ends in a number
		{"09", "", true},          // 9 is no octal digit
		{"0x1g.1", "", true},      // g is no hex digit

		{"example.com", "", false},
		{"localhost", "", false},
		{"123.example", "", false},
		{"1e5", "", false},
		{".", "", false},
		{"", "", false},
		{"0xg", "", false},
		{"1.2.3.4..", "", false}, // two trailing dots: the last label is empty
	}
	for _, tt := range tests {
		addr, numeric, err := parseIPv4Host(tt.host)
		if numeric != tt.numeric {
			t.Errorf("parseIPv4Host(%q) numeric = %v, want %v", tt.host, numeric, tt.numeric)
			continue
		}
		switch {
		case tt.want != "":
			if err != nil || addr != netip.MustParseAddr(tt.want) {
				t.Errorf("parseIPv4Host(%q) = %v, %v; want %s", tt.host, addr, err, tt.want)
			}
		case numeric:
			if !errors.Is(err, errNotIPv4) {
				t.Errorf("parseIPv4Host(%q) = %v, %v; want errNotIPv4", tt.host, addr, err)
			}
		default:
			if err != nil || addr.IsValid() {
				t.Errorf("parseIPv4Host(%q) = %v, %v; want a name", tt.host, addr, err)
			}
		}
	}
}

// noDNS is a resolver that fails the test if it is ever asked anything.
func noDNS(t *testing.T) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			t.Errorf("DNS was consulted (%s %s)", network, address)
			return nil, errors.New("no DNS in this test")
		},
	}
}

// TestNumericHostsNeverReachDNS: the IPv4 forms browsers accept are the
// address they denote, refused like it, and a malformed numeric host or
// port is an invalid URL; none is ever looked up.
func TestNumericHostsNeverReachDNS(t *testing.T) {
	c := NewClient(Options{Resolver: noDNS(t)})
	blocked := []string{
		"http://127.1/",
		"http://2130706433/",
		"http://0x7f000001/",
		"http://017700000001/",
		"http://127.0.0.1./",
		"http://0x7f.1:8080/",
		"http://0xa9fea9fe/latest/meta-data/", // 169.254.169.254
		"http://0/",
		"http://10.1/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[::ffff:a9fe:a9fe]/",
	}
	for _, u := range blocked {
		_, err := c.Get(t.Context(), u, nil)
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Errorf("Get(%s) err = %v, want *BlockedError", u, err)
		}
	}
	invalid := []string{
		"http://example.com:65536/",
		"http://example.com:99999999999999999999/",
		"http://example.com:0/",
		"http://1.2.3.4.5/",
		"http://example.123/",
		"http://256.0.0.1/",
		"http://0x100000000/",
		"http://4294967296/",
		"http://1..2/",
	}
	for _, u := range invalid {
		_, err := c.Get(t.Context(), u, nil)
		if !errors.Is(err, ErrInvalidURL) {
			t.Errorf("Get(%s) err = %v, want ErrInvalidURL", u, err)
		}
	}
	// Non-numeric ports do not even parse.
	if _, err := c.Get(t.Context(), "http://example.com:http/", nil); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("non-numeric port: err = %v, want ErrInvalidURL", err)
	}
}

// TestNumericHostIsDialledAsAddress: an allowed address written in a
// numeric form is fetched from that address, by Get, by a redirect and by
// a request built on HTTPClient, without DNS.
func TestNumericHostIsDialledAsAddress(t *testing.T) {
	var hits atomic.Int32
	var mu sync.Mutex
	var hosts []string
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		hits.Add(1)
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := NewClient(Options{Policy: allow2, Resolver: noDNS(t)})

	for _, u := range []string{
		"http://2130706434:" + port + "/",            // 127.0.0.2
		"http://127.2:" + port + "/",                 // 127.0.0.2
		"http://0x7f.0.0.2.:" + port + "/",           // 127.0.0.2
		srv.URL + "/?to=http://017700000002:" + port, // a redirect to 127.0.0.2
	} {
		resp, err := c.Get(t.Context(), u, nil)
		if err != nil || string(resp.Body) != "ok" {
			t.Errorf("Get(%s) = %v; want ok", u, err)
			continue
		}
		if resp.URL.Hostname() != "127.0.0.2" {
			t.Errorf("Get(%s) final URL %s, want host 127.0.0.2", u, resp.URL)
		}
	}
	mu.Lock()
	for _, h := range hosts {
		if h != "127.0.0.2:"+port {
			t.Errorf("server saw Host %q, want the dotted address", h)
		}
	}
	mu.Unlock()

	// A redirect to a numeric form of a refused address is refused.
	_, err := c.Get(t.Context(), srv.URL+"/?to=http://2130706433:"+port+"/", nil)
	wantBlocked(t, err, "2130706433")

	// HTTPClient requests skip Get's URL check; the dialer still reads the
	// numeric host as the address it is.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://2130706433:"+port+"/", nil)
	if resp, err := c.HTTPClient().Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("HTTPClient reached 2130706433 (127.0.0.1)")
	} else {
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Errorf("HTTPClient err = %v, want *BlockedError", err)
		}
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, "http://2130706434:"+port+"/", nil)
	if resp, err := c.HTTPClient().Do(req); err != nil {
		t.Errorf("HTTPClient to 2130706434 (127.0.0.2): %v", err)
	} else {
		resp.Body.Close()
	}
	if hits.Load() != 5 {
		t.Errorf("server served %d pages, want 5", hits.Load())
	}
}

// rawServer answers every request on 127.0.0.2 with the bytes head, so that
// tests can send headers net/http's server would refuse to write.
func rawServer(t *testing.T, head func(path string) string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			req, err := http.ReadRequest(bufio.NewReader(conn))
			if err == nil {
				io.WriteString(conn, head(req.URL.Path))
			}
			conn.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return "http://" + l.Addr().String()
}

// TestLocationNeverLeaksIntoErrors: whatever a redirect's Location holds,
// well-formed or not, the error names at most its scheme, host and path.
func TestLocationNeverLeaksIntoErrors(t *testing.T) {
	locations := map[string]string{
		"/userinfo":     "http://user:pass@host.example/p?token=secret",
		"/space":        "http://user:pass@ho st.example/p?token=secret",
		"/percent":      "http://user:pass@host.example/p%zz?token=secret",
		"/percent-host": "http://user:pass@h%zzost.example/p?token=secret",
		"/control":      "http://user:pass@host.example/\x01p?token=secret",
		"/control-host": "http://user:pass@ho\x7fst.example/p?token=secret",
		"/port":         "http://user:pass@host.example:pass/p?token=secret",
		"/ipv6":         "http://user:pass@[::1/p?token=secret",
		"/relative":     "//user:pass@host.example/p?token=secret#frag",
		"/numeric":      "http://user:pass@1.2.3.4.5/p?token=secret",
		"/bigport":      "http://host.example:65536/p?token=secret",
	}
	base := rawServer(t, func(path string) string {
		return "HTTP/1.1 302 Found\r\nLocation: " + locations[path] + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	})
	c := NewClient(Options{Policy: allow2, Resolver: noDNS(t)})
	for path := range locations {
		_, err := c.Get(t.Context(), base+path, nil)
		if err == nil {
			t.Errorf("%s: followed a redirect to %q", path, locations[path])
			continue
		}
		msg := err.Error()
		for _, leak := range []string{"pass", "secret", "token", "?", "frag", "\x01", "\x7f"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: error %q contains %q", path, msg, leak)
			}
		}
		// A control character breaks the header itself, before the
		// Location is read as a URL.
		if !errors.Is(err, ErrInvalidURL) && !errors.Is(err, ErrUserinfo) && !strings.Contains(msg, "malformed") {
			t.Errorf("%s: err = %v, want ErrInvalidURL, ErrUserinfo or a malformed response", path, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://user:pass@host/p?token=secret", "http://host/p"},
		{"https://host:8443/a/b#frag", "https://host:8443/a/b"},
		{"http://host/p#f?x", "http://host/p"},
		{"http://u:p@w@host/p", "http://host/p"},
		{"//user:pass@host/p?q", "//host/p"},
		{"http:user:pass@host/p", "http:host/p"},
		{"user:pass@host/p", "user:host/p"}, // "user" reads as a scheme
		{"http://host/a@b?c", "http://host/a@b"},
		{`http://u:p@host\p`, `http://host\p`},
		{"http://ho\x00st/\x01p q", "http://ho%00st/%01p%20q"},
		{"http://host/\xff", "http://host/%FF"},
		{"http://u:p@host:pass/p", "http://host/p"}, // a port that is no number may be anything
		{"http://[::1]:8080/p", "http://[::1]:8080/p"},
		{"http://[::1/p", "http://[::1/p"},
		{"http://host/ünï", "http://host/ünï"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := RedactURL("http://host/" + strings.Repeat("ä", 300)); len(got) > 210 || !strings.HasSuffix(got, "…") {
		t.Errorf("long URL not bounded: %d bytes", len(got))
	}
}
