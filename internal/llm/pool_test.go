package llm_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/httpclient/httpclienttest"
	"github.com/toolport/toolport/internal/llm"
)

// Concurrent chat turns calling one model host reuse their connections: the
// providers' default client keeps as many idle as a burst used.
func TestProvidersReuseConnections(t *testing.T) {
	serve := func(reply string) *httpclienttest.Server {
		// Each burst's 16 turns are all in the handler at once before any
		// is answered, so the provider needs 16 connections and must keep
		// them.
		return httpclienttest.NewServer(t, httpclienttest.Overlap(16, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, reply)
		})))
	}
	oaSrv, anSrv := serve(benchOpenAIReply), serve(benchAnthropicReply)
	oa, err := llm.NewOpenAI("m", llm.Options{BaseURL: oaSrv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	an, err := llm.NewAnthropic("m", llm.Options{APIKey: "k", BaseURL: anSrv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		p   llm.Provider
		srv *httpclienttest.Server
	}{"openai": {oa, oaSrv}, "anthropic": {an, anSrv}} {
		t.Run(name, func(t *testing.T) {
			httpclienttest.CheckReuse(t, c.srv, 16, 8, 4, func() error {
				s, err := c.p.Stream(context.Background(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
				if err != nil {
					return err
				}
				_, err = llm.Collect(s)
				return err
			})
		})
	}
}
