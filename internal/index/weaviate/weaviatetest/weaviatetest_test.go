package weaviatetest

import (
	"net/http"
	"testing"
)

func TestStartClusterOfThreeAndKillOne(t *testing.T) {
	c := Start(t, 3)
	if len(c.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(c.Nodes))
	}
	c.Nodes[2].Kill()
	for _, n := range c.Nodes[:2] {
		resp, err := http.Get(n.URL() + "/v1/.well-known/live")
		if err != nil {
			t.Fatalf("%s after node3 was killed: %v", n.Name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s live: %d", n.Name, resp.StatusCode)
		}
	}
	if _, err := http.Get(c.Nodes[2].URL() + "/v1/.well-known/live"); err == nil {
		t.Error("node3 still answers after Kill")
	}
}
