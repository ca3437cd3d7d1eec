package main_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// /readyz requires Weaviate when TOOLPORT_VECTOR_URL is set, and only
// reports Redis (TOOLPORT_REDIS_URL): without it calls are uncached, not
// refused. The Redis password never shows.
func TestServeReadinessChecksTheConfiguredEngines(t *testing.T) {
	redisURL := "redis://:hunter2-redis@" + closedPort(t) + "/0"
	for _, tc := range []struct {
		name       string
		env        map[string]string
		readyz     int
		status     string
		wantChecks map[string]string
	}{
		{"no engines configured", nil, http.StatusOK, "ok",
			map[string]string{"store": "up required"}},
		{"Redis down", map[string]string{"TOOLPORT_REDIS_URL": redisURL}, http.StatusOK, "degraded",
			map[string]string{"store": "up required", "redis": "down optional"}},
		{"Weaviate and Redis down", map[string]string{"TOOLPORT_REDIS_URL": redisURL, "TOOLPORT_VECTOR_URL": "http://" + closedPort(t)},
			http.StatusServiceUnavailable, "unavailable",
			map[string]string{"store": "up required", "redis": "down optional", "weaviate": "down required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := serve(t, tc.env)
			for path, code := range map[string]int{"/healthz": http.StatusOK, "/readyz": tc.readyz} {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				body := readAll(t, resp)
				if resp.StatusCode != code || strings.Contains(body, "hunter2") {
					t.Errorf("GET %s = %d %s, want %d without the password", path, resp.StatusCode, body, code)
				}
				var h struct {
					Status string
					Checks []struct {
						Name, Status string
						Required     bool
					}
				}
				if err := json.Unmarshal([]byte(body), &h); err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				got := map[string]string{}
				for _, c := range h.Checks {
					if c.Name == "turn-notes" {
						continue // the store's own, tested with the server
					}
					got[c.Name] = c.Status + map[bool]string{true: " required", false: " optional"}[c.Required]
				}
				if path == "/healthz" && h.Status != tc.status {
					t.Errorf("/healthz status = %q, want %q", h.Status, tc.status)
				}
				if len(got) != len(tc.wantChecks) {
					t.Errorf("GET %s checks = %v, want %v", path, got, tc.wantChecks)
				}
				for k, v := range tc.wantChecks {
					if got[k] != v {
						t.Errorf("GET %s check %s = %q, want %q", path, k, got[k], v)
					}
				}
			}
		})
	}
}
