package opendata

import (
	"fmt"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
)

// maxSummaryName bounds one name quoted in a summary.
const maxSummaryName = 60

// listTitles names the first n items for a summary, each quoted and
// clipped, and says how many more there are: a summary is what a person
// reads, so it names what was found rather than only counting it.
func listTitles[T any](items []T, name func(T) string, n int) string {
	var parts []string
	for _, it := range items[:min(len(items), n)] {
		parts = append(parts, fmt.Sprintf("%q", httpclient.ClipRunes(strings.TrimSpace(name(it)), maxSummaryName)))
	}
	s := strings.Join(parts, ", ")
	if rest := len(items) - n; rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}
