package ckan

import (
	"context"
	"strconv"
	"testing"
)

func TestPagesStopsAtMaxPages(t *testing.T) {
	calls := 0
	got, n, err := Pages(context.Background(), 1000, 0, 1, func(i int) string { return strconv.Itoa(i) },
		func(ctx context.Context, limit, offset int) ([]int, error) {
			calls++
			return []int{offset}, nil
		})
	if err != nil || n != maxPages || calls != maxPages || len(got) != maxPages {
		t.Errorf("got %d items in %d calls (err %v); want %d", len(got), n, err, maxPages)
	}
}
