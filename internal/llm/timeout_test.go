package llm_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/llm"
)

// SilentServer accepts connections and reads the requests, but never
// answers: a model server that hangs before its response headers.
func silentServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// silentTransport is a model server that never answers, without a socket:
// in a synctest bubble the request's wait is durable, so the bubble's fake
// clock runs on to the provider's timeout.
type silentTransport struct{}

func (silentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// The wait for the first byte ends at the first-byte timeout exactly (the
// clock is the bubble's), not at the idle timeout. TestTimeoutsFromConfig
// runs the same wait over a socket.
func TestFirstByteTimeout(t *testing.T) {
	const firstByte = 200 * time.Millisecond
	for _, p := range []string{"anthropic", "openai"} {
		t.Run(p, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { firstByteTimeout(t, p, firstByte) })
		})
	}
}

func firstByteTimeout(t *testing.T, p string, firstByte time.Duration) {
	const url = "http://model.invalid"
	// The idle timeout is far longer: it must not be the one that ends the wait.
	o := llm.Options{FirstByteTimeout: firstByte, IdleTimeout: time.Hour, HTTPClient: &http.Client{Transport: silentTransport{}}}
	var prov llm.Provider
	var err error
	if p == "anthropic" {
		o.APIKey, o.BaseURL = testKey, url
		prov, err = llm.NewAnthropic("claude-sonnet-4-5", o)
	} else {
		o.APIKey, o.BaseURL = openaiKey, url+"/v1"
		prov, err = llm.NewOpenAI("gpt-4.1", o)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A guard, so that a regression fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = prov.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	elapsed := time.Since(start)
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeTimeout || !e.Retryable {
		t.Fatalf("after %v: err = %v, want a retryable timeout", elapsed, err)
	}
	if !strings.Contains(e.Message, "first-byte timeout") || !strings.Contains(e.Message, "200ms") {
		t.Errorf("message %q does not say which wait ran out", e.Message)
	}
	if elapsed != firstByte {
		t.Errorf("the call failed after %v, want %v", elapsed, firstByte)
	}
}

func TestTimeoutsFromConfig(t *testing.T) {
	url := silentServer(t)
	env := map[string]string{
		"TOOLPORT_MODEL":                    "openai:m@" + url + "/v1",
		"TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT": "150ms",
	}
	c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prov, err := llm.FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = prov.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeTimeout || time.Since(start) > 3*time.Second {
		t.Fatalf("after %v: err = %v, want a timeout after about 150ms", time.Since(start), err)
	}
}

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"", 0, false}, {"30s", 30 * time.Second, false}, {" 10m ", 10 * time.Minute, false}, {"off", -1, false}, {"OFF", -1, false},
		{"0", 0, true}, {"-5s", 0, true}, {"30", 0, true}, {"25h", 0, true}, {"soon", 0, true},
	}
	for _, tt := range tests {
		got, err := llm.ParseTimeout("X", tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseTimeout(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "X=") {
			t.Errorf("error %q does not name the setting", err)
		}
	}
	c, _ := config.New(func(k string) string {
		return map[string]string{"TOOLPORT_MODEL": "openai:m@http://127.0.0.1:1/v1", "TOOLPORT_MODEL_IDLE_TIMEOUT": "forever"}[k]
	}, t.TempDir())
	if _, err := llm.FromConfig(c); err == nil || !strings.Contains(err.Error(), "TOOLPORT_MODEL_IDLE_TIMEOUT") {
		t.Errorf("FromConfig with a bad timeout: %v", err)
	}
}
