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
	env := c.ToolportEnv("Tracks")
	if got := env["TOOLPORT_VECTOR_URL"]; got != c.Nodes[0].URL()+","+c.Nodes[1].URL()+","+c.Nodes[2].URL() {
		t.Errorf("TOOLPORT_VECTOR_URL = %q", got)
	}
	if env["TOOLPORT_WEAVIATE_REPLICATION"] != "3" {
		t.Errorf("TOOLPORT_WEAVIATE_REPLICATION = %q, want 3", env["TOOLPORT_WEAVIATE_REPLICATION"])
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
