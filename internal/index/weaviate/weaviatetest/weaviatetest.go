// Package weaviatetest starts real Weaviate servers for tests: one node, or a
// cluster of several on loopback, each with its own data directory and free
// ports chosen at run time.
//
// The server binary is named by TOOLPORT_TEST_WEAVIATE_BIN (.ci/run builds
// weaviate-server v1.28.4 and sets it). Where it is set the tests that need
// Weaviate run and must pass; where it is not they are skipped with a message
// saying so.
package weaviatetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/testexec"
)

// EnvBinary names the variable holding the weaviate-server binary's path.
const EnvBinary = "TOOLPORT_TEST_WEAVIATE_BIN"

// startTimeout bounds how long a cluster may take to become ready: Raft
// elects a leader and every node must report ready.
const startTimeout = 90 * time.Second

// Binary returns the weaviate-server binary, skipping the test when
// TOOLPORT_TEST_WEAVIATE_BIN is unset. A set variable naming a missing file
// fails the test: CI asked for the tests to run.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		t.Skip(EnvBinary + " is not set: no Weaviate server to test against (.ci/run builds one)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", EnvBinary, err)
	}
	return bin
}

// Node is one running weaviate-server.
type Node struct {
	Name     string
	HTTPAddr string // host:port of the REST and GraphQL API
	GRPCAddr string // host:port of the gRPC API

	apiKey string // for the readiness check, when the node requires one

	cmd  *exec.Cmd
	log  *testexec.Buffer
	done chan struct{}
	once sync.Once
}

// URL is the node's REST base URL, http://host:port.
func (n *Node) URL() string { return "http://" + n.HTTPAddr }

// Log returns what the node has written so far.
func (n *Node) Log() string { return n.log.String() }

// Kill stops the node at once (SIGKILL), as a crash would, and waits for it.
// Killing a node twice is harmless.
func (n *Node) Kill() {
	n.once.Do(func() {
		_ = n.cmd.Process.Kill()
		<-n.done
	})
}

// Cluster is a set of nodes that joined one another.
type Cluster struct {
	Nodes []*Node
}

// URLs lists every node's REST base URL.
func (c *Cluster) URLs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.URL())
	}
	return out
}

// GRPCAddrs lists every node's gRPC address, in the order of URLs.
func (c *Cluster) GRPCAddrs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.GRPCAddr)
	}
	return out
}

// ToolportEnv is the environment that points a Toolport process at the
// cluster: every node (so that it fails over when one dies), its gRPC
// addresses, the given collection, and a replication factor of the
// cluster's size.
func (c *Cluster) ToolportEnv(collection string) map[string]string {
	return map[string]string{
		"TOOLPORT_VECTOR_URL":           strings.Join(c.URLs(), ","),
		"TOOLPORT_WEAVIATE_GRPC_ADDR":   strings.Join(c.GRPCAddrs(), ","),
		"TOOLPORT_WEAVIATE_COLLECTION":  collection,
		"TOOLPORT_WEAVIATE_REPLICATION": strconv.Itoa(len(c.Nodes)),
	}
}

// Load opens a backend for cfg, creates its collection and writes tracks to
// it, failing the test on any error.
func Load(t testing.TB, cfg weaviate.Config, tracks []weaviate.Track) *weaviate.Backend {
	t.Helper()
	b, err := weaviate.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.EnsureCollection(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Upsert(ctx, tracks); err != nil {
		t.Fatal(err)
	}
	return b
}

// Start starts a cluster of size nodes (1 for a single server) on loopback
// and waits until every node is ready and sees the others. The nodes are
// killed when the test ends.
func Start(t testing.TB, size int) *Cluster {
	t.Helper()
	return StartWith(t, size, nil)
}

// StartWith is [Start] with more environment for every node, such as
// Weaviate's API key settings; it overrides the defaults.
func StartWith(t testing.TB, size int, extra map[string]string) *Cluster {
	t.Helper()
	bin := Binary(t)
	if size < 1 {
		t.Fatalf("weaviatetest: cluster size %d", size)
	}
	// Ports are chosen free but may be taken by another process before the
	// server binds them; such a start is retried on new ports.
	const attempts = 3
	for attempt := 1; ; attempt++ {
		c, err := start(t, bin, size, extra)
		if err == nil {
			return c
		}
		portClash := false
		for _, n := range c.Nodes {
			n.Kill()
			portClash = portClash || strings.Contains(n.Log(), "address already in use")
		}
		if !portClash || attempt == attempts {
			for _, n := range c.Nodes {
				t.Logf("weaviatetest: %s log:\n%s", n.Name, tail(n.Log(), 4000))
			}
			t.Fatalf("weaviatetest: %v", err)
		}
		t.Logf("weaviatetest: a port was taken meanwhile (%v); starting again on other ports", err)
	}
}

// start starts the nodes and waits for them; on error the nodes started so
// far are in the returned cluster.
func start(t testing.TB, bin string, size int, extra map[string]string) (*Cluster, error) {
	type ports struct{ http, grpc, gossip, raft int }
	var ps []ports
	taken := map[int]bool{}
	for range size {
		// Weaviate takes a node's data port to be its gossip port + 1 and,
		// on one host, its Raft RPC port to be its Raft port + 1.
		ps = append(ps, ports{http: freePort(t, taken, 1), grpc: freePort(t, taken, 1),
			gossip: freePort(t, taken, 2), raft: freePort(t, taken, 2)})
	}
	// Clusters started by tests running at once share loopback, and a
	// node's gossip keeps calling the address of a member that was killed:
	// when another cluster's node takes that port, memberlist (which has no
	// cluster label in this version) merges the two. With the same node
	// names, queries for the killed node's replicas then reach the stranger,
	// which answers with no objects. So each cluster has its own node names,
	// and its nodes' internal API a password of its own, so that any
	// cross-talk left is refused rather than answered.
	id := rand.Text()[:8]
	secret := rand.Text()
	nodeName := func(i int) string { return fmt.Sprintf("node%d-%s", i+1, strings.ToLower(id)) }
	var join []string
	for i := range size {
		join = append(join, fmt.Sprintf("%s:%d", nodeName(i), ps[i].raft))
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c := &Cluster{}
	for i := range size {
		p := ps[i]
		name := nodeName(i)
		env := map[string]string{
			"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
			"DEFAULT_VECTORIZER_MODULE":               "none",
			"ENABLE_MODULES":                          "",
			"DISABLE_TELEMETRY":                       "true",
			"PERSISTENCE_DATA_PATH":                   filepath.Join(t.TempDir(), "data"),
			"CLUSTER_HOSTNAME":                        name,
			"CLUSTER_IN_LOCALHOST":                    "true",
			"CLUSTER_ADVERTISE_ADDR":                  "127.0.0.1",
			"CLUSTER_ADVERTISE_PORT":                  strconv.Itoa(p.gossip),
			"GO_PROFILING_DISABLE":                    "true",
			"CLUSTER_BASIC_AUTH_USERNAME":             "cluster-" + id,
			"CLUSTER_BASIC_AUTH_PASSWORD":             secret,
			"CLUSTER_GOSSIP_BIND_PORT":                strconv.Itoa(p.gossip),
			"CLUSTER_DATA_BIND_PORT":                  strconv.Itoa(p.gossip + 1),
			"RAFT_PORT":                               strconv.Itoa(p.raft),
			"RAFT_INTERNAL_RPC_PORT":                  strconv.Itoa(p.raft + 1),
			"RAFT_JOIN":                               strings.Join(join, ","),
			"RAFT_BOOTSTRAP_EXPECT":                   strconv.Itoa(size),
			"GRPC_PORT":                               strconv.Itoa(p.grpc),
			"LOG_LEVEL":                               "warning",
			"QUERY_DEFAULTS_LIMIT":                    "25",
		}
		for k, v := range extra {
			env[k] = v
		}
		if i > 0 {
			env["CLUSTER_JOIN"] = fmt.Sprintf("127.0.0.1:%d", ps[0].gossip)
		}
		n := &Node{Name: name, HTTPAddr: fmt.Sprintf("127.0.0.1:%d", p.http),
			apiKey:   strings.Split(env["AUTHENTICATION_APIKEY_ALLOWED_KEYS"], ",")[0],
			GRPCAddr: fmt.Sprintf("127.0.0.1:%d", p.grpc), log: &testexec.Buffer{}, done: make(chan struct{})}
		n.cmd = exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(p.http), "--scheme", "http")
		n.cmd.Env = os.Environ()
		for k, v := range env {
			n.cmd.Env = append(n.cmd.Env, k+"="+v)
		}
		n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
		if err := n.cmd.Start(); err != nil {
			return c, fmt.Errorf("starting %s: %w", name, err)
		}
		go func() { _ = n.cmd.Wait(); close(n.done) }()
		t.Cleanup(n.Kill)
		c.Nodes = append(c.Nodes, n)
		// A node that cannot reach the first one's gossip port at start
		// stays alone, so the others start once it listens.
		if i == 0 && size > 1 {
			if err := waitListening(ctx, n, p.gossip); err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	for _, n := range c.Nodes {
		if err := waitReady(ctx, n, size); err != nil {
			return c, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return c, nil
}

// waitReady polls the node's readiness endpoint, then its node list until
// it sees the whole cluster.
func waitReady(ctx context.Context, n *Node, size int) error {
	client := &http.Client{Timeout: 2 * time.Second}
	get := func(path string) (string, int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL()+path, nil)
		if err != nil {
			return "", 0, err
		}
		if n.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+n.apiKey)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			k, err := resp.Body.Read(buf)
			b.Write(buf[:k])
			if err != nil {
				break
			}
		}
		return b.String(), resp.StatusCode, nil
	}
	var last error
	for {
		select {
		case <-n.done:
			return errors.New("the server exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %v", startTimeout, last)
		case <-time.After(200 * time.Millisecond):
		}
		_, code, err := get("/v1/.well-known/ready")
		if err != nil || code != http.StatusOK {
			last = fmt.Errorf("ready: %d %v", code, err)
			continue
		}
		body, code, err := get("/v1/nodes")
		if err != nil || code != http.StatusOK {
			last = fmt.Errorf("nodes: %d %v", code, err)
			continue
		}
		if got := strings.Count(body, `"status":"HEALTHY"`); got < size {
			last = fmt.Errorf("%d of %d nodes healthy", got, size)
			continue
		}
		return nil
	}
}

// waitListening waits until the node accepts TCP connections on port.
func waitListening(ctx context.Context, n *Node, port int) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-n.done:
			return errors.New("the server exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("gossip port %d not listening after %v", port, startTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort returns a port p such that p … p+span-1 are all free on loopback
// for TCP and UDP (gossip uses both) and not handed out before in taken.
func freePort(t testing.TB, taken map[int]bool, span int) int {
	t.Helper()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+span > 65535 {
			continue
		}
		ok := true
		for q := p; q < p+span && ok; q++ {
			ok = !taken[q] && bindable(q)
		}
		if ok {
			for q := p; q < p+span; q++ {
				taken[q] = true
			}
			return p
		}
	}
	t.Fatal("weaviatetest: no free port range")
	return 0
}

func bindable(port int) bool {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	u.Close()
	return true
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
