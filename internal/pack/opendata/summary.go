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

// morePhrase says how to get the next page, when the page was full.
func morePhrase(param string, next int, hasMore bool) string {
	if !hasMore {
		return ""
	}
	return fmt.Sprintf("; more with %s=%d", param, next)
}

// humanBytes writes a size for people: 1.2 MB.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTP"[exp])
}

// plural counts things in English: "1 dataset", "2 datasets".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
