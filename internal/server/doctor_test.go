package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/server"
)

func TestDoctorEndpoint(t *testing.T) {
	var mu sync.Mutex
	var calls []bool
	busy := false
	e := newEnv(t, envOptions{token: "s3cret-token", config: func(c *server.Config) {
		c.Doctor = func(_ context.Context, allowQuota bool) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			if busy {
				return nil, server.ErrDoctorBusy
			}
			calls = append(calls, allowQuota)
			return map[string]any{"ok": true, "results": []any{map[string]any{"name": "brave", "status": "skipped"}}}, nil
		}
	}})
	tests := []struct {
		method, path, body string
		status             int
		quota              []bool // every run so far
	}{
		{"GET", "/api/doctor", "", 200, []bool{false}},
		{"POST", "/api/doctor", `{"quota":true}`, 200, []bool{false, true}},
		{"POST", "/api/doctor", "", 200, []bool{false, true, false}},
		{"POST", "/api/doctor", `{"quota":false}`, 200, []bool{false, true, false, false}},
		// Spending quota is never a GET: a GET is outside the cross-origin guard.
		{"GET", "/api/doctor?quota=1", "", 405, []bool{false, true, false, false}},
		{"POST", "/api/doctor", `{"quota":"maybe"}`, 400, []bool{false, true, false, false}},
	}
	for _, tt := range tests {
		status, body := e.do(t, tt.method, tt.path, tt.body)
		if status != tt.status {
			t.Fatalf("%s %s %s = %d %s, want %d", tt.method, tt.path, tt.body, status, body, tt.status)
		}
		mu.Lock()
		got := append([]bool(nil), calls...)
		mu.Unlock()
		if !slices.Equal(got, tt.quota) {
			t.Errorf("after %s %s %s the doctor ran with %v, want %v", tt.method, tt.path, tt.body, got, tt.quota)
		}
		if status == 200 {
			var rep struct {
				Results []struct{ Name, Status string }
			}
			if err := json.Unmarshal(body, &rep); err != nil || len(rep.Results) != 1 || rep.Results[0].Name != "brave" {
				t.Errorf("body = %s (%v)", body, err)
			}
		}
	}

	// A page on another site cannot make the server spend quota: the POST
	// is refused by the cross-origin guard before the doctor runs.
	req, err := http.NewRequest("POST", e.url+"/api/doctor", strings.NewReader(`{"quota":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer s3cret-token")
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: %d, want 403", res.StatusCode)
	}
	mu.Lock()
	if len(calls) != 4 {
		t.Errorf("a cross-site POST ran the doctor: %v", calls)
	}
	mu.Unlock()

	mu.Lock()
	busy = true
	mu.Unlock()
	if status, body := e.do(t, "GET", "/api/doctor", ""); status != http.StatusTooManyRequests {
		t.Errorf("busy: %d %s", status, body)
	}

	// The token is required, as on every /api route.
	res, err = http.Get(e.url + "/api/doctor")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", res.StatusCode)
	}
}

func TestDoctorEndpointWithoutDoctor(t *testing.T) {
	e := newEnv(t, envOptions{})
	if status, _ := e.do(t, "GET", "/api/doctor", ""); status != http.StatusNotFound {
		t.Errorf("status %d", status)
	}
}
