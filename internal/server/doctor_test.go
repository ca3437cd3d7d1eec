package server_test

import (
	"context"
	"encoding/json"
	"net/http"
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
		path   string
		status int
		quota  []bool
	}{
		{"/api/doctor", 200, []bool{false}},
		{"/api/doctor?quota=1", 200, []bool{false, true}},
		{"/api/doctor?quota=maybe", 400, []bool{false, true}},
	}
	for _, tt := range tests {
		status, body := e.do(t, "GET", tt.path, "")
		if status != tt.status {
			t.Fatalf("GET %s = %d %s, want %d", tt.path, status, body, tt.status)
		}
		mu.Lock()
		got := append([]bool(nil), calls...)
		mu.Unlock()
		if len(got) != len(tt.quota) || got[len(got)-1] != tt.quota[len(tt.quota)-1] {
			t.Errorf("after GET %s the doctor ran with %v, want %v", tt.path, got, tt.quota)
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
	mu.Lock()
	busy = true
	mu.Unlock()
	if status, body := e.do(t, "GET", "/api/doctor", ""); status != http.StatusTooManyRequests {
		t.Errorf("busy: %d %s", status, body)
	}

	// The token is required, as on every /api route.
	res, err := http.Get(e.url + "/api/doctor")
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
