package ckan

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewClientBaseURL(t *testing.T) {
	tests := []struct{ in, want, site, err string }{
		{"", "https://data.gov.il/api/3", "https://data.gov.il", ""},
		{"https://data.gov.il/api/3", "https://data.gov.il/api/3", "https://data.gov.il", ""},
		{"https://demo.ckan.org", "https://demo.ckan.org/api/3", "https://demo.ckan.org", ""},
		{"https://demo.ckan.org/", "https://demo.ckan.org/api/3", "https://demo.ckan.org", ""},
		{"https://catalog.data.gov/api/3/action/", "https://catalog.data.gov/api/3", "https://catalog.data.gov", ""},
		{"http://127.0.0.1:8080/ckan", "http://127.0.0.1:8080/ckan/api/3", "http://127.0.0.1:8080/ckan", ""},
		{"ftp://example.org", "", "", "scheme must be http or https"},
		{"example.org", "", "", "scheme must be http or https"},
		{"https://", "", "", "no host"},
		{"https://u:p@example.org", "", "", "credentials"},
		{"https://example.org/?x=1", "", "", "no query or fragment"},
		{"http://[::1", "", "", "invalid portal URL"},
	}
	for _, tt := range tests {
		c, err := NewClient(tt.in)
		if tt.err != "" {
			if err == nil || !errors.Is(err, ErrBaseURL) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("NewClient(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewClient(%q): %v", tt.in, err)
			continue
		}
		if c.BaseURL() != tt.want || c.SiteURL() != tt.site {
			t.Errorf("NewClient(%q): base %s site %s; want %s %s", tt.in, c.BaseURL(), c.SiteURL(), tt.want, tt.site)
		}
	}
}

func TestClientSendsUserAgentAndAccept(t *testing.T) {
	var ua, accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua, accept = r.Header.Get("User-Agent"), r.Header.Get("Accept")
		w.Write([]byte(`{"success":true,"result":[]}`))
	}))
	defer srv.Close()
	for _, tt := range []struct {
		opt  []Option
		want string
	}{
		{nil, DefaultUserAgent},
		{[]Option{WithUserAgent("my-agent/2")}, "my-agent/2"},
	} {
		c, err := NewClient(srv.URL, append(tt.opt, WithHTTPClient(srv.Client()))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.TagList(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if ua != tt.want || accept != "application/json" {
			t.Errorf("User-Agent %q Accept %q; want %q", ua, accept, tt.want)
		}
	}
}

// A BOM in front of the JSON (seen from some proxies) is tolerated.
func TestDecodeResponseBOM(t *testing.T) {
	var names []string
	err := decodeResponse("tag_list", 200, http.Header{}, []byte("\xEF\xBB\xBF{\"success\":true,\"result\":[\"a\"]}"), &names)
	if err != nil || len(names) != 1 {
		t.Errorf("names %v err %v", names, err)
	}
}
