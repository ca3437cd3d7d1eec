// Package cluster holds the process-level test of a scaled-out deployment:
// three `toolport serve` replicas on one PostgreSQL database, one Redis and a
// three-node Weaviate cluster, all real engines on loopback, driven by many
// concurrent chat turns while a replica and a Weaviate node are killed.
//
// The test runs where TOOLPORT_TEST_DATABASE_URL, TOOLPORT_TEST_REDIS_URL and
// TOOLPORT_TEST_WEAVIATE_BIN are all set (.ci/run sets them) and is skipped,
// saying which is missing, elsewhere. BenchmarkCluster measures the same
// deployment with one and with three replicas taking the load.
package cluster
