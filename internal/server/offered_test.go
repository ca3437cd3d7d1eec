package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/tool"
)

// offeredRegistry is testRegistry plus "keyed", unavailable: its key is not
// set.
func offeredRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	reg := testRegistry(t)
	keyed := tool.Must(tool.New(tool.Spec{Name: "keyed", Description: "Needs a key.", Pack: "test",
		Available: func() error { return errors.New("KEYED_API_KEY is not set") }},
		func(ctx context.Context, in queryIn) (itemsOut, error) { return itemsOut{}, nil }))
	if err := reg.Register(keyed); err != nil {
		t.Fatal(err)
	}
	return reg
}

// requestTools returns the names of the tools a model request offered.
func requestTools(t *testing.T, req servertest.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("model request: %v", err)
	}
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestModelIsOfferedOnlyAvailableTools: the model's request carries only
// the tools that can work, /api/tools still lists them all, saying which are
// offered and why not, and /api/info names the offered ones; with
// OfferUnconfigured the model gets them all.
func TestModelIsOfferedOnlyAvailableTools(t *testing.T) {
	for _, offerAll := range []bool{false, true} {
		t.Run(fmt.Sprint("OfferUnconfigured=", offerAll), func(t *testing.T) {
			e := newEnv(t, envOptions{reg: offeredRegistry(t),
				turns:    []servertest.Turn{{Events: []servertest.Event{servertest.Text("Hello.")}}},
				offerAll: offerAll})
			want := []string{"lookup", "flaky", "slow"}
			if offerAll {
				want = append(want, "keyed")
			}

			e.chat(t, context.Background(), e.newConversation(t), "hello", nil)
			reqs := e.model.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests, want 1", len(reqs))
			}
			if got := requestTools(t, reqs[0]); !slices.Equal(got, want) {
				t.Errorf("the model was offered %v, want %v", got, want)
			}

			_, body := e.do(t, "GET", "/api/info", "")
			var info struct {
				Tools        int
				OfferedTools []string
			}
			if err := json.Unmarshal(body, &info); err != nil {
				t.Fatal(err)
			}
			if info.Tools != 4 || !slices.Equal(info.OfferedTools, want) {
				t.Errorf("/api/info: %s", body)
			}

			_, body = e.do(t, "GET", "/api/tools", "")
			var list struct {
				Tools []struct {
					Name        string
					Offered     *bool
					Unavailable string
				}
			}
			if err := json.Unmarshal(body, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != 4 {
				t.Fatalf("/api/tools lists %d tools, want 4: %s", len(list.Tools), body)
			}
			for _, tl := range list.Tools {
				wantWhy := map[string]string{"keyed": "KEYED_API_KEY is not set"}[tl.Name]
				if tl.Offered == nil || *tl.Offered != slices.Contains(want, tl.Name) || tl.Unavailable != wantWhy {
					t.Errorf("/api/tools: %s offered %v, unavailable %q; want %v, %q", tl.Name, tl.Offered, tl.Unavailable,
						slices.Contains(want, tl.Name), wantWhy)
				}
			}
			// The bench can still call it, and hear why it fails.
			if status, body := e.do(t, "POST", "/api/tools/keyed", `{"query":"x"}`); status != 200 {
				t.Errorf("POST /api/tools/keyed = %d %s", status, body)
			}
		})
	}
}
