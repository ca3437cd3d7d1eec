package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/index/weaviate/weaviatetest"
)

// TestIndexAddAndSearchThroughWeaviate: with TOOLPORT_VECTOR_URL set,
// `toolport index add` writes to Weaviate and `toolport call
// semanticSearch`, another process with no index in memory, finds the
// tracks there; with Weaviate down the call fails with a retryable error.
func TestIndexAddAndSearchThroughWeaviate(t *testing.T) {
	c := weaviatetest.Start(t, 1)
	dir := t.TempDir()
	env := map[string]string{
		"TOOLPORT_DATABASE_URL":        filepath.Join(dir, "toolport.db"),
		"TOOLPORT_VECTOR_URL":          c.Nodes[0].URL(),
		"TOOLPORT_WEAVIATE_GRPC_ADDR":  c.Nodes[0].GRPCAddr,
		"TOOLPORT_WEAVIATE_COLLECTION": fmt.Sprintf("CliTest%d", time.Now().UnixNano()),
	}
	jsonl := filepath.Join(dir, "tracks.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"isrc":"AUNMG2400013","title":"BLADE WALKER","artist":"Air Max '97","interpretation":"Calm ambient piano, melancholic and slow"}
{"isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","interpretation":"A restless late-night club track, dark and driving"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runMusic(t, env, "", "index", "add", jsonl); code != 0 || !strings.Contains(out, "2 added") {
		t.Fatalf("index add: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runMusic(t, env, "", "call", "semanticSearch", `{"query":"melancholic piano"}`)
	var res struct {
		Success bool
		Tracks  []struct{ ISRC string }
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || !res.Success || len(res.Tracks) == 0 || res.Tracks[0].ISRC != "AUNMG2400013" {
		t.Fatalf("call: %d %v\n%.500s\n%s", code, err, out, errOut)
	}

	c.Nodes[0].Kill()
	code, out, _ = runMusic(t, env, "", "call", "semanticSearch", `{"query":"melancholic piano"}`)
	var failed struct {
		Success   bool
		ErrorCode string `json:"error_code"`
		Retryable bool
	}
	if err := json.Unmarshal([]byte(out), &failed); code == 0 || err != nil || failed.Success || failed.ErrorCode != "NETWORK_ERROR" || !failed.Retryable {
		t.Errorf("call with Weaviate down: exit %d, %v\n%.500s", code, err, out)
	}
}
