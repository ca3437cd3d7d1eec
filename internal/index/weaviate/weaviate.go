// Package weaviate keeps the track index's search side in Weaviate, a
// distributed vector database, for Toolport deployments with several
// replicas: every replica searches the same sharded, replicated collection
// instead of a copy in its own memory.
//
// Toolport still computes the embeddings (the embedders of package
// embedding) and the lexical analysis (index.Terms): each track is stored
// with its vector and with its fields' analysed terms, so that Weaviate's
// hybrid query (BM25F over the terms fused with vector similarity) ranks as
// the embedded [index.Engine] does. Track metadata stays in the SQL store;
// Weaviate holds only what searching needs.
//
// It uses Weaviate's official Go client (weaviate-go-client v4, which
// supports Weaviate 1.28): writes go over gRPC when a gRPC address is given
// (REST otherwise), queries over GraphQL.
package weaviate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/go-openapi/strfmt"
	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/google/uuid"
	wv "github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	wvgrpc "github.com/weaviate/weaviate-go-client/v4/weaviate/grpc"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/textclip"
)

// Environment variables read by [ConfigFromEnv].
const (
	EnvURL         = "TOOLPORT_VECTOR_URL"
	EnvGRPCAddr    = "TOOLPORT_WEAVIATE_GRPC_ADDR"
	EnvCollection  = "TOOLPORT_WEAVIATE_COLLECTION"
	EnvReplication = "TOOLPORT_WEAVIATE_REPLICATION"
	EnvShards      = "TOOLPORT_WEAVIATE_SHARDS"
	EnvConsistency = "TOOLPORT_WEAVIATE_CONSISTENCY"
	EnvTimeout     = "TOOLPORT_WEAVIATE_TIMEOUT"
	EnvAPIKey      = "TOOLPORT_WEAVIATE_API_KEY"
)

// Defaults.
const (
	DefaultCollection = "ToolportTrack"
	DefaultTimeout    = 10 * time.Second
	// DefaultAlpha is the vector side's weight in the hybrid fusion.
	// Weaviate's relativeScoreFusion is a min-max normalisation followed by
	// (1−α)·BM25 + α·vector: at α = 0.2 the embedded engine's former
	// default. The embedded default now weighs 0.9·BM25 + 0.1·cosine,
	// expands queries through word vectors over the index's vocabulary and
	// adds the query's two-word phrases, which its index holds
	// (index.DefaultRankParams); Weaviate does none of these yet.
	DefaultAlpha = 0.2
	// MaxBatch bounds the objects sent in one batch request.
	MaxBatch = 256
)

// Consistency levels ([Config.Consistency]).
const (
	ConsistencyOne    = "ONE"
	ConsistencyQuorum = "QUORUM"
	ConsistencyAll    = "ALL"
)

// Config says where Weaviate is and how the collection is laid out.
type Config struct {
	// URL is Weaviate's REST address, http(s)://host:port, or several
	// nodes' addresses separated by commas: an operation that finds one
	// node down is tried on the next. Empty means Weaviate is not used.
	URL string
	// GRPCAddr is Weaviate's gRPC address, host:port (one per URL, in the
	// same order); writes and searches use it when set, REST otherwise.
	GRPCAddr string
	// Collection is the class name (DefaultCollection when empty).
	Collection string
	// Replication is the collection's replication factor (1 when 0). It is
	// fixed when the collection is created.
	Replication int
	// Shards is the desired shard count, 0 for Weaviate's default (one per
	// node). It is fixed when the collection is created.
	Shards int
	// Consistency is the level of every read and write (QUORUM when empty):
	// with replication factor 3, QUORUM keeps answering with one node down
	// and a read sees every write acknowledged before it.
	Consistency string
	// APIKey, when set, is sent as a bearer token (Weaviate's API key
	// authentication); without it requests are anonymous.
	APIKey string
	// Timeout bounds each request (DefaultTimeout when 0).
	Timeout time.Duration
	// Alpha is the vector weight of the hybrid fusion (DefaultAlpha when 0;
	// negative for pure BM25 is not supported: use a small value).
	Alpha float64
	// Pool, when above a query's K, is how many hits Weaviate is asked for
	// before the K best are kept. Weaviate fuses max(limit, 100) candidates
	// from each side; the embedded engine fuses 1000. On the MusicCaps dev
	// queries both depths rank alike (BENCHMARKS.md) and 1000 is seven
	// times slower, so 0, asking for K, is the default.
	Pool int
}

// Enabled reports whether Weaviate is configured.
func (c Config) Enabled() bool { return c.URL != "" }

// ConfigFromEnv reads the TOOLPORT_VECTOR_URL and TOOLPORT_WEAVIATE_*
// variables. Malformed numbers are errors, so that a typo does not silently
// leave a cluster unreplicated.
func ConfigFromEnv(c *config.Config) (Config, error) {
	cfg := Config{
		URL:         strings.TrimSpace(c.Env(EnvURL)),
		GRPCAddr:    strings.TrimSpace(c.Env(EnvGRPCAddr)),
		Collection:  strings.TrimSpace(c.Env(EnvCollection)),
		Consistency: strings.ToUpper(strings.TrimSpace(c.Env(EnvConsistency))),
		APIKey:      strings.TrimSpace(c.Secret(EnvAPIKey, "weaviate.api_key")),
	}
	for _, n := range []struct {
		env string
		dst *int
	}{{EnvReplication, &cfg.Replication}, {EnvShards, &cfg.Shards}} {
		if v := strings.TrimSpace(c.Env(n.env)); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 || i > 64 {
				return Config{}, fmt.Errorf("%s: want a whole number from 1 to 64, got %q", n.env, v)
			}
			*n.dst = i
		}
	}
	if v := strings.TrimSpace(c.Env(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s: want a duration such as 10s, got %q", EnvTimeout, v)
		}
		cfg.Timeout = d
	}
	return cfg, cfg.normalise()
}

// normalise fills defaults and checks the values.
func (c *Config) normalise() error {
	if c.URL == "" {
		return nil
	}
	urls, grpcs := splitList(c.URL), splitList(c.GRPCAddr)
	if len(urls) == 0 || len(urls) > 16 {
		return fmt.Errorf("%s: want 1 to 16 comma-separated http(s)://host:port", EnvURL)
	}
	// The URLs are not quoted back: a mistyped one may hold a password.
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.User != nil || u.RawQuery != "" {
			return fmt.Errorf("%s: URL %d of %d is not http(s)://host:port (no path, query or credentials: the key goes in %s)",
				EnvURL, i+1, len(urls), EnvAPIKey)
		}
	}
	if len(grpcs) > 0 && len(grpcs) != len(urls) {
		return fmt.Errorf("%s: want one gRPC address per URL in %s (%d), got %d", EnvGRPCAddr, EnvURL, len(urls), len(grpcs))
	}
	for _, a := range grpcs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%s: want host:port, got %q", EnvGRPCAddr, a)
		}
	}
	if c.Collection == "" {
		c.Collection = DefaultCollection
	}
	if !validClassName(c.Collection) {
		return fmt.Errorf("%s: want a class name (a capital letter, then letters, digits or _), got %q", EnvCollection, c.Collection)
	}
	if c.Replication == 0 {
		c.Replication = 1
	}
	switch c.Consistency {
	case "":
		c.Consistency = ConsistencyQuorum
	case ConsistencyOne, ConsistencyQuorum, ConsistencyAll:
	default:
		return fmt.Errorf("%s: want ONE, QUORUM or ALL, got %q", EnvConsistency, c.Consistency)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Alpha < 0 || c.Alpha > 1 {
		return fmt.Errorf("weaviate: alpha %v is not within 0…1", c.Alpha)
	}
	if c.Pool < 0 {
		return fmt.Errorf("weaviate: pool %d is negative", c.Pool)
	}
	return nil
}

func validClassName(s string) bool {
	if s == "" || len(s) > 100 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// ErrUnavailable reports that Weaviate did not answer, or answered that it
// cannot serve now (a 5xx, or too few replicas for the consistency level):
// the same call may succeed later. Errors wrap it; test with [errors.Is].
var ErrUnavailable = errors.New("weaviate: unavailable")

// Track is what Weaviate stores of an indexed track.
type Track struct {
	ISRC     string
	Fields   index.Fields
	Vector   []float32
	Embedder string // the model that made Vector
	// Features are audio features by name (energy, valence, danceability,
	// acousticness, instrumentalness, speechiness, tempo); an absent one is
	// unknown and fails every bound on it, as in the embedded filter.
	Features map[string]float64
}

// FeatureNames are the audio features a search may bound.
var FeatureNames = []string{"energy", "valence", "danceability", "acousticness", "instrumentalness", "speechiness", "tempo"}

// Bound keeps hits whose feature is within [Min, Max]; use ±Inf for an open side.
type Bound struct {
	Feature  string
	Min, Max float64
}

// Query is a hybrid search.
type Query struct {
	// Text is what to search for, analysed with index.Terms: the user's
	// words, less those the query negates ([index.DropNegation]).
	Text     string
	Vector   []float32 // Text's embedding
	Embedder string    // only tracks embedded by this model are searched
	K        int
	Bounds   []Bound
	// Negated are the words the query asks to be without ("vocals" of
	// "piano without vocals"), not searched for: the index.NegationPool
	// best hits are ranked and those whose terms hold a negated word's are
	// demoted as the embedded engine demotes them ([index.Demote]).
	Negated string
}

// Backend is a Weaviate collection of tracks. It is safe for concurrent use.
type Backend struct {
	cfg Config
	eps []*endpoint
	cur atomic.Int32 // the endpoint that answered last
}

// endpoint is one Weaviate node (or load balancer) to talk to.
type endpoint struct {
	client *wv.Client
	// grpc, when a gRPC address is configured, runs searches (grpcsearch.go).
	grpc     pb.WeaviateClient
	grpcConn *grpc.ClientConn
}

// Open returns a backend for cfg. It contacts nothing yet beyond asking the
// server's version (which the client needs, and which fails quietly when the
// server is down): the collection is created by [Backend.EnsureCollection].
func Open(cfg Config) (*Backend, error) {
	if err := cfg.normalise(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errors.New("weaviate: no URL configured")
	}
	urls, grpcs := splitList(cfg.URL), splitList(cfg.GRPCAddr)
	b := &Backend{cfg: cfg}
	for i, raw := range urls {
		u, _ := url.Parse(raw)
		wc := wv.Config{Scheme: u.Scheme, Host: u.Host, Timeout: cfg.Timeout}
		if cfg.APIKey != "" {
			// Headers go with REST and the client's gRPC writes alike.
			wc.Headers = map[string]string{"authorization": "Bearer " + cfg.APIKey}
		}
		ep := &endpoint{}
		if len(grpcs) > 0 {
			wc.GrpcConfig = &wvgrpc.Config{Host: grpcs[i], Secured: u.Scheme == "https"}
			var err error
			if ep.grpc, ep.grpcConn, err = dialSearch(grpcs[i], u.Scheme == "https"); err != nil {
				b.Close()
				return nil, err
			}
		}
		client, err := wv.NewClient(wc)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("weaviate: client: %w", err)
		}
		ep.client = client
		b.eps = append(b.eps, ep)
	}
	return b, nil
}

// Close releases the search connections. The official client keeps its own
// connections for the life of the process.
func (b *Backend) Close() error {
	var errs []error
	for _, ep := range b.eps {
		if ep.grpcConn != nil {
			errs = append(errs, ep.grpcConn.Close())
		}
	}
	return errors.Join(errs...)
}

// do runs fn against the endpoint that answered last, each attempt under the
// request timeout. When it reports ErrUnavailable (a node down) the next
// endpoint is tried, each at most once: every operation here is idempotent,
// so running it again on another node is safe.
func (b *Backend) do(ctx context.Context, fn func(ctx context.Context, ep *endpoint) error) error {
	start := int(b.cur.Load())
	var err error
	for i := range b.eps {
		k := (start + i) % len(b.eps)
		actx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
		err = fn(actx, b.eps[k])
		cancel()
		if err == nil {
			b.cur.Store(int32(k))
			return nil
		}
		if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// errEmptyAnswer makes do try the next node after an empty search answer.
var errEmptyAnswer = fmt.Errorf("weaviate: a search answered empty, asking the next node: %w", ErrUnavailable)

// searchNodes runs a search as do runs any call, but with several nodes
// listed it believes an empty answer only once every node has given one.
// Weaviate 1.28 can answer a replicated search with no hits and no error
// while its coordinator still routes part of the query to a replica that
// died: on a loaded machine one node kept doing so for over three minutes
// after another's kill (TestReplicatedClusterSurvivesANode). fn returns how
// many hits its answer had. A search that truly matches nothing costs one
// round trip per node listed.
func (b *Backend) searchNodes(ctx context.Context, fn func(ctx context.Context, ep *endpoint) (int, error)) error {
	tries, empty := 0, false
	err := b.do(ctx, func(ctx context.Context, ep *endpoint) error {
		tries++
		n, err := fn(ctx, ep)
		if err == nil && n == 0 && tries < len(b.eps) {
			empty = true
			return errEmptyAnswer
		}
		return err
	})
	if err != nil && empty && errors.Is(err, ErrUnavailable) && ctx.Err() == nil {
		// A node answered (empty) and the rest are down: the empty answer
		// stands, as it would have with that node alone.
		return nil
	}
	return err
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Config returns the backend's configuration with defaults filled in.
func (b *Backend) Config() Config { return b.cfg }

// Ping checks that Weaviate can serve Toolport, for readiness probes. With
// one URL (one node, or a load balancer in front of a cluster) that is
// Weaviate's own readiness. With the nodes listed, it is that enough of them
// answer for the configured consistency level (one, a quorum of the
// replication factor, or all of it), asked all at once: a node is not
// "ready" while its failure detector still probes a peer that died, yet
// searches and QUORUM writes go on meanwhile (were that enough to fail, one
// dead Weaviate node would take every Toolport replica out of a load
// balancer); and its node list fails while a member does not answer.
func (b *Backend) Ping(ctx context.Context) error {
	if len(b.eps) == 1 {
		return b.do(ctx, func(ctx context.Context, ep *endpoint) error {
			ok, err := ep.client.Misc().ReadyChecker().Do(ctx)
			if err != nil {
				return wrap("ping", err)
			}
			if !ok {
				return fmt.Errorf("weaviate ping: not ready: %w", ErrUnavailable)
			}
			return nil
		})
	}
	errs := make([]error, len(b.eps))
	var wg sync.WaitGroup
	for i, ep := range b.eps {
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
			defer cancel()
			ok, err := ep.client.Misc().LiveChecker().Do(actx)
			switch {
			case err != nil:
				errs[i] = wrap("ping", err)
			case !ok:
				errs[i] = fmt.Errorf("weaviate ping: node %d not live: %w", i+1, ErrUnavailable)
			}
		})
	}
	wg.Wait()
	live, need := 0, min(b.healthyNeeded(), len(b.eps))
	var first error
	for _, err := range errs {
		if err == nil {
			live++
		} else if first == nil {
			first = err
		}
	}
	if live >= need {
		return nil
	}
	return fmt.Errorf("weaviate ping: %d of %d nodes answer, consistency %s needs %d: %w", live, len(b.eps), b.cfg.Consistency, need, first)
}

// healthyNeeded is how many healthy replicas reads and writes at the
// configured consistency level need.
func (b *Backend) healthyNeeded() int {
	switch b.cfg.Consistency {
	case ConsistencyOne:
		return 1
	case ConsistencyAll:
		return b.cfg.Replication
	default:
		return b.cfg.Replication/2 + 1
	}
}

// Property names.
const (
	propISRC     = "isrc"
	propEmbedder = "embedder"
	propTitle    = "title"
	propArtist   = "artist"
)

// termProps are the analysed text properties BM25 searches, with the field
// weights of the embedded BM25F.
var termProps = []struct {
	name   string
	boost  int
	field  func(index.Fields) string
	stored bool
}{
	{"titleTerms", 2, func(f index.Fields) string { return f.Title }, true},
	{"artistTerms", 2, func(f index.Fields) string { return f.Artist }, true},
	{"albumTerms", 1, func(f index.Fields) string { return f.Album }, true},
	{"interpretationTerms", 1, func(f index.Fields) string { return f.Interpretation }, true},
	{"lyricsTerms", 1, func(f index.Fields) string { return f.Lyrics }, true},
}

// maxFieldBytes bounds the text indexed per field, as the embedded BM25 does.
const maxFieldBytes = 64 << 10

// searchProps is the hybrid query's property list with boosts.
func searchProps() []string {
	var out []string
	for _, p := range termProps {
		if p.boost != 1 {
			out = append(out, fmt.Sprintf("%s^%d", p.name, p.boost))
		} else {
			out = append(out, p.name)
		}
	}
	return out
}

// EnsureCollection creates the collection if it does not exist. The terms
// are analysed by Toolport, so Weaviate splits them on whitespace only and
// removes no stopwords; BM25's k1 and b are the embedded engine's.
func (b *Backend) EnsureCollection(ctx context.Context) error {
	return b.do(ctx, func(ctx context.Context, ep *endpoint) error { return b.ensureCollection(ctx, ep) })
}

func (b *Backend) ensureCollection(ctx context.Context, ep *endpoint) error {
	exists, err := ep.client.Schema().ClassExistenceChecker().WithClassName(b.cfg.Collection).Do(ctx)
	if err != nil {
		return wrap("checking the collection", err)
	}
	if exists {
		return nil
	}
	yes, no := true, false
	props := []*models.Property{
		{Name: propISRC, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: &yes, IndexSearchable: &no},
		{Name: propEmbedder, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: &yes, IndexSearchable: &no},
		{Name: propTitle, DataType: []string{"text"}, IndexFilterable: &no, IndexSearchable: &no},
		{Name: propArtist, DataType: []string{"text"}, IndexFilterable: &no, IndexSearchable: &no},
	}
	for _, p := range termProps {
		props = append(props, &models.Property{Name: p.name, DataType: []string{"text"}, Tokenization: "whitespace",
			IndexFilterable: &no, IndexSearchable: &yes})
	}
	for _, f := range FeatureNames {
		props = append(props, &models.Property{Name: f, DataType: []string{"number"}, IndexFilterable: &yes})
	}
	class := &models.Class{
		Class:             b.cfg.Collection,
		Description:       "Toolport track index: analysed terms and vectors for hybrid search",
		Vectorizer:        "none",
		VectorIndexType:   "hnsw",
		VectorIndexConfig: map[string]any{"distance": "cosine"},
		InvertedIndexConfig: &models.InvertedIndexConfig{
			Bm25:      &models.BM25Config{K1: 1.2, B: 0.75},
			Stopwords: &models.StopwordConfig{Preset: "none"},
		},
		ReplicationConfig: &models.ReplicationConfig{Factor: int64(b.cfg.Replication)},
		Properties:        props,
	}
	if b.cfg.Shards > 0 {
		class.ShardingConfig = map[string]any{"desiredCount": b.cfg.Shards}
	}
	if err := ep.client.Schema().ClassCreator().WithClass(class).Do(ctx); err != nil {
		// Another replica may have created it meanwhile.
		if again, err2 := ep.client.Schema().ClassExistenceChecker().WithClassName(b.cfg.Collection).Do(ctx); err2 == nil && again {
			return nil
		}
		return wrap("creating the collection", err)
	}
	return nil
}

// ObjectID is the object UUID of a track: a name-based (SHA-1) UUID of its
// ISRC, so that writing a track again replaces it.
func ObjectID(isrc string) string {
	return uuid.NewSHA1(idSpace, []byte(isrc)).String()
}

// idSpace is the namespace of track object ids.
var idSpace = uuid.MustParse("6f2b8f1e-5c1a-4e0b-9d59-0f6f2f7a1c3e")

// Upsert writes tracks by ISRC, in batches: writing the same track twice
// leaves one object. Every track needs a vector.
func (b *Backend) Upsert(ctx context.Context, tracks []Track) error {
	for start := 0; start < len(tracks); start += MaxBatch {
		batch := tracks[start:min(start+MaxBatch, len(tracks))]
		objs := make([]*models.Object, len(batch))
		for i, t := range batch {
			if t.ISRC == "" || len(t.Vector) == 0 {
				return fmt.Errorf("weaviate upsert: track %q has no ISRC or no vector", t.ISRC)
			}
			props := map[string]any{propISRC: t.ISRC, propEmbedder: t.Embedder,
				propTitle: t.Fields.Title, propArtist: t.Fields.Artist}
			for _, p := range termProps {
				text := p.field(t.Fields)
				text = textclip.Prefix(text, maxFieldBytes)
				props[p.name] = analysed(text)
			}
			for _, f := range FeatureNames {
				if v, ok := t.Features[f]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					props[f] = v
				}
			}
			objs[i] = &models.Object{Class: b.cfg.Collection, ID: strfmt.UUID(ObjectID(t.ISRC)), Properties: props, Vector: t.Vector}
		}
		err := b.do(ctx, func(ctx context.Context, ep *endpoint) error {
			res, err := ep.client.Batch().ObjectsBatcher().WithObjects(objs...).WithConsistencyLevel(b.cfg.Consistency).Do(ctx)
			if err != nil {
				return wrap("upsert", err)
			}
			for _, r := range res {
				if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 {
					return batchError("upsert", r.Result.Errors.Error[0].Message)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Delete removes tracks by ISRC; ISRCs not stored are ignored. It returns how
// many objects were deleted.
func (b *Backend) Delete(ctx context.Context, isrcs []string) (int, error) {
	deleted := 0
	for start := 0; start < len(isrcs); start += MaxBatch {
		part := isrcs[start:min(start+MaxBatch, len(isrcs))]
		err := b.do(ctx, func(ctx context.Context, ep *endpoint) error {
			where := filters.Where().WithPath([]string{propISRC}).WithOperator(filters.ContainsAny).WithValueText(part...)
			res, err := ep.client.Batch().ObjectsBatchDeleter().WithClassName(b.cfg.Collection).WithWhere(where).
				WithConsistencyLevel(b.cfg.Consistency).WithOutput("minimal").Do(ctx)
			if err != nil {
				return wrap("delete", err)
			}
			if res != nil && res.Results != nil {
				if res.Results.Failed > 0 {
					return batchError("delete", fmt.Sprintf("%d of %d deletions failed", res.Results.Failed, res.Results.Matches))
				}
				deleted += int(res.Results.Successful)
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// Count returns how many tracks the collection holds: all of them when
// embedder is "", else those whose vector that embedder made.
func (b *Backend) Count(ctx context.Context, embedder string) (int, error) {
	var n int
	err := b.do(ctx, func(ctx context.Context, ep *endpoint) error {
		agg := ep.client.GraphQL().Aggregate().WithClassName(b.cfg.Collection).
			WithFields(graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}})
		if embedder != "" {
			agg = agg.WithWhere(filters.Where().WithPath([]string{propEmbedder}).WithOperator(filters.Equal).WithValueText(embedder))
		}
		resp, err := agg.Do(ctx)
		if err != nil {
			return wrap("count", err)
		}
		if err := gqlError("count", resp); err != nil {
			return err
		}
		rows, err := classRows(resp, "Aggregate", b.cfg.Collection)
		if err != nil || len(rows) != 1 {
			return fmt.Errorf("weaviate count: unexpected answer (%v)", err)
		}
		meta, _ := rows[0]["meta"].(map[string]any)
		c, ok := meta["count"].(float64)
		if !ok {
			return errors.New("weaviate count: unexpected answer")
		}
		n = int(c)
		return nil
	})
	return n, err
}

// Search runs a hybrid query and returns up to q.K hits, best first, with
// Weaviate's fused scores (lowered for a track that holds a negated word):
// over gRPC at the configured consistency level when a gRPC address is
// configured, else over GraphQL (which reads one replica per shard). A query
// without a single term after analysis (only stopwords or punctuation) is
// ranked by the vector alone.
func (b *Backend) Search(ctx context.Context, q Query) ([]index.Hit, error) {
	if q.K <= 0 {
		return []index.Hit{}, nil
	}
	if len(q.Vector) == 0 {
		return nil, errors.New("weaviate search: no query vector")
	}
	text := index.ClipQuery(q.Text)
	terms := analysed(text)
	limit := max(q.K, b.cfg.Pool)
	if q.Negated != "" {
		limit = max(limit, index.NegationPool)
	}
	var hits []index.Hit
	var err error
	if b.eps[0].grpc != nil {
		hits, err = b.searchGRPC(ctx, q, terms, limit)
	} else {
		err = b.searchNodes(ctx, func(ctx context.Context, ep *endpoint) (int, error) {
			var err error
			hits, err = b.searchGraphQL(ctx, ep, q, terms, limit)
			return len(hits), err
		})
	}
	if err != nil {
		return nil, err
	}
	if q.Negated != "" && len(hits) > 0 {
		if hits, err = b.demote(ctx, q, text, hits); err != nil {
			return nil, err
		}
	}
	if hits == nil {
		hits = []index.Hit{}
	}
	return hits[:min(len(hits), q.K)], nil
}

// maxNegatedTerms bounds the negated terms demoted, each one query: a query
// negates one to three words, and a text that negates dozens is not worth
// dozens of queries.
const maxNegatedTerms = 8

// demote is [index.Demote] over the pool hits: Weaviate says which pooled
// tracks hold each negated term (a BM25 query of the term over the pool's
// ISRCs; the queries run at once). The negated words are not expanded
// through word vectors, as the engine's are: the engine draws the
// expansion from its index's terms, which Weaviate does not list, and
// drawing it from the embedder's whole vocabulary instead (tried on the
// judged queries through Weaviate) won one negation query of ten and lost
// another ("piano without vocals": "vocals" brought "solo"), at two to
// five times the time.
func (b *Backend) demote(ctx context.Context, q Query, text string, hits []index.Hit) ([]index.Hit, error) {
	kept := termWeights(text)
	var terms []string // the negated terms asked about: not kept, at most maxNegatedTerms
	for _, t := range slices.Sorted(maps.Keys(termWeights(index.ClipQuery(q.Negated)))) {
		if _, ok := kept[t]; !ok && len(terms) < maxNegatedTerms {
			terms = append(terms, t)
		}
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	holding := make([][]string, len(terms))
	errs := make([]error, len(terms))
	var wg sync.WaitGroup
	for i, t := range terms {
		wg.Go(func() { holding[i], errs[i] = b.holding(ctx, t, ids) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	negated := make(map[string]float64, len(terms))
	held := make(map[string][]string, len(terms))
	for i, t := range terms {
		negated[t], held[t] = 1, holding[i]
	}
	holders := func(t string) iter.Seq[string] { return slices.Values(held[t]) }
	return index.Demote(hits, negated, kept, holders, index.DefaultRankParams().Negation.Demote, len(hits)), nil
}

// holding returns those of isrcs whose terms hold term. An empty answer is
// believed (most pools have tracks without the word), so it is asked of one
// node, as writes are.
func (b *Backend) holding(ctx context.Context, term string, isrcs []string) ([]string, error) {
	if b.eps[0].grpc != nil {
		return b.holdingGRPC(ctx, term, isrcs)
	}
	var out []string
	err := b.do(ctx, func(ctx context.Context, ep *endpoint) error {
		get := ep.client.GraphQL().Get().WithClassName(b.cfg.Collection).WithFields(graphql.Field{Name: propISRC}).
			WithLimit(len(isrcs)).WithWhere(filters.Where().WithPath([]string{propISRC}).WithOperator(filters.ContainsAny).WithValueText(isrcs...)).
			WithBM25((&graphql.BM25ArgumentBuilder{}).WithQuery(term).WithProperties(searchProps()...))
		rows, err := b.getRows(ctx, get, "negation search")
		if err != nil {
			return err
		}
		out = out[:0]
		for _, r := range rows {
			if isrc, _ := r[propISRC].(string); isrc != "" {
				out = append(out, isrc)
			}
		}
		return nil
	})
	return out, err
}

// termWeights are text's terms, each weighing 1.
func termWeights(text string) map[string]float64 {
	out := map[string]float64{}
	for _, t := range index.Terms(text) {
		out[t] = 1
	}
	return out
}

func (b *Backend) searchGraphQL(ctx context.Context, ep *endpoint, q Query, terms string, limit int) ([]index.Hit, error) {
	get := ep.client.GraphQL().Get().WithClassName(b.cfg.Collection).
		WithFields(graphql.Field{Name: propISRC}, graphql.Field{Name: "_additional", Fields: []graphql.Field{{Name: "score"}, {Name: "distance"}}}).
		WithLimit(limit).WithWhere(b.filter(q))
	if terms == "" {
		get = get.WithNearVector((&graphql.NearVectorArgumentBuilder{}).WithVector(q.Vector))
	} else {
		get = get.WithHybrid((&graphql.HybridArgumentBuilder{}).WithQuery(terms).WithVector(q.Vector).
			WithAlpha(float32(b.cfg.Alpha)).WithFusionType(graphql.RelativeScore).WithProperties(searchProps()))
	}
	var hits []index.Hit
	err := func() error {
		rows, err := b.getRows(ctx, get, "search")
		if err != nil {
			return err
		}
		hits = make([]index.Hit, 0, len(rows))
		for _, r := range rows {
			isrc, _ := r[propISRC].(string)
			add, _ := r["_additional"].(map[string]any)
			var score float64
			if s, ok := add["score"].(string); ok && s != "" {
				score, _ = strconv.ParseFloat(s, 64)
			} else if d, ok := add["distance"].(float64); ok {
				score = 1 - d // cosine similarity, as the embedded engine reports
			}
			if isrc != "" {
				hits = append(hits, index.Hit{ID: isrc, Score: score})
			}
		}
		return nil
	}()
	return hits, err
}

// getRows runs a GraphQL Get (op names it in errors) and returns its
// objects.
func (b *Backend) getRows(ctx context.Context, get *graphql.GetBuilder, op string) ([]map[string]any, error) {
	resp, err := get.Do(ctx)
	if err != nil {
		return nil, wrap(op, err)
	}
	if err := gqlError(op, resp); err != nil {
		return nil, err
	}
	return classRows(resp, "Get", b.cfg.Collection)
}

// filter keeps the query's embedder's vectors and applies the bounds.
func (b *Backend) filter(q Query) *filters.WhereBuilder {
	ops := []*filters.WhereBuilder{filters.Where().WithPath([]string{propEmbedder}).WithOperator(filters.Equal).WithValueText(q.Embedder)}
	for _, bd := range q.Bounds {
		if !math.IsInf(bd.Min, -1) {
			ops = append(ops, filters.Where().WithPath([]string{bd.Feature}).WithOperator(filters.GreaterThanEqual).WithValueNumber(bd.Min))
		}
		if !math.IsInf(bd.Max, 1) {
			ops = append(ops, filters.Where().WithPath([]string{bd.Feature}).WithOperator(filters.LessThanEqual).WithValueNumber(bd.Max))
		}
	}
	if len(ops) == 1 {
		return ops[0]
	}
	return filters.Where().WithOperator(filters.And).WithOperands(ops)
}

// analysed is text as Toolport's analyzer sees it: its terms, space-separated
// (Weaviate's whitespace tokenizer splits them back).
func analysed(text string) string {
	return strings.Join(index.Terms(text), " ")
}

// classRows returns the objects of op (Get or Aggregate) for class.
func classRows(resp *models.GraphQLResponse, op, class string) ([]map[string]any, error) {
	if resp == nil {
		return nil, fmt.Errorf("weaviate: empty %s answer", op)
	}
	top, _ := resp.Data[op].(map[string]any)
	raw, ok := top[class].([]any)
	if !ok && top[class] != nil {
		return nil, fmt.Errorf("weaviate: unexpected %s answer", op)
	}
	rows := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	return rows, nil
}

// gqlError turns GraphQL errors into an error. Weaviate reports replicas it
// could not reach for the consistency level this way, so those count as
// unavailable.
func gqlError(op string, resp *models.GraphQLResponse) error {
	if resp == nil || len(resp.Errors) == 0 {
		return nil
	}
	msg := resp.Errors[0].Message
	return batchError(op, msg)
}

// batchError classifies an error message from Weaviate's answer body.
func batchError(op, msg string) error {
	msg = textclip.Bytes(msg, 300)
	lower := strings.ToLower(msg)
	// "no graphql provider present" is a node whose schema has not caught up
	// with the cluster's (just after the collection was made, or while a
	// dead peer is being replaced): 422, but another node can answer.
	for _, s := range []string{"replica", "quorum", "connection refused", "unavailable", "timeout", "deadline", "not ready", "leader", "no graphql provider present"} {
		if strings.Contains(lower, s) {
			return fmt.Errorf("weaviate %s: %s: %w", op, msg, ErrUnavailable)
		}
	}
	return fmt.Errorf("weaviate %s: %s", op, msg)
}

// wrap classifies a client error: transport failures, timeouts, gRPC
// Unavailable and 5xx or 429 answers are ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("weaviate %s: %w", op, err)
	}
	cause := err
	var ce *fault.WeaviateClientError
	if errors.As(err, &ce) {
		if ce.DerivedFromError == nil {
			msg := fmt.Sprintf("HTTP %d: %s", ce.StatusCode, ce.Msg)
			if ce.StatusCode >= 500 || ce.StatusCode == 429 {
				return fmt.Errorf("weaviate %s: %s: %w", op, textclip.Bytes(msg, 300), ErrUnavailable)
			}
			return batchError(op, msg)
		}
		cause = ce.DerivedFromError
	}
	if st, ok := status.FromError(cause); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
			return fmt.Errorf("weaviate %s: %s: %w", op, textclip.Bytes(st.Message(), 300), ErrUnavailable)
		}
	}
	var ne net.Error
	if errors.As(cause, &ne) || errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, syscall.ECONNREFUSED) {
		return fmt.Errorf("weaviate %s: %s: %w", op, textclip.Bytes(cause.Error(), 300), ErrUnavailable)
	}
	return batchError(op, cause.Error())
}
