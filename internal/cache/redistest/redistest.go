// Package redistest gives tests the Redis named by TOOLPORT_TEST_REDIS_URL:
// a client, and a key prefix of their own that is deleted when they end.
// Without the variable the tests that need Redis are skipped; with it they
// run, and fail if Redis does not answer.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvVar names the Redis the tests use, e.g. redis://127.0.0.1:6379/0.
const EnvVar = "TOOLPORT_TEST_REDIS_URL"

// URL returns the test Redis URL, skipping t when none is configured.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvVar)
	if u == "" {
		t.Skip(EnvVar + " is not set")
	}
	return u
}

// Client returns a client of the test Redis (closed when t ends) and a key
// prefix unique to t; every key under the prefix is deleted when t ends.
// It fails t if Redis does not answer a PING.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseURL(URL(t))
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		t.Fatalf("%s is set but Redis does not answer: %v", EnvVar, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "toolport-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("cleaning %s*: %v", prefix, err)
		}
		c.Close()
	})
	return c, prefix
}
