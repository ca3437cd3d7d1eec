package ckan

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// SolrQuote returns v as a quoted Solr phrase, with the two characters that
// are special inside quotes (backslash and double quote) escaped. A quoted
// value cannot break out of its field clause, whatever it contains.
func SolrQuote(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for _, r := range v {
		if r == '\\' || r == '"' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// FilterQuery builds a Solr filter query (package_search's fq) from field
// filters, every value quoted with [SolrQuote]. Clauses are ANDed; empty
// values are skipped. The zero value is an empty query, ready to use.
type FilterQuery struct {
	clauses []string
}

// All requires every value of field (e.g. every tag).
func (q *FilterQuery) All(field string, values ...string) {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			q.clauses = append(q.clauses, field+":"+SolrQuote(v))
		}
	}
}

// Any requires at least one value of field (e.g. any of the formats).
func (q *FilterQuery) Any(field string, values ...string) {
	var quoted []string
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			quoted = append(quoted, SolrQuote(v))
		}
	}
	switch len(quoted) {
	case 0:
	case 1:
		q.clauses = append(q.clauses, field+":"+quoted[0])
	default:
		q.clauses = append(q.clauses, field+":("+strings.Join(quoted, " OR ")+")")
	}
}

// String returns the filter query, or "" if no clause was added.
func (q *FilterQuery) String() string { return strings.Join(q.clauses, " AND ") }

// maxSortClauses bounds a sort specification.
const maxSortClauses = 5

// The sort grammars, compiled on first use rather than at the start of
// every binary that links this package (BENCHMARKS.md, start-up).
var (
	solrSortClause = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\s+(?i:(asc|desc))$`)
	})
	// A datastore column may be any name, Hebrew and spaces included, but
	// not a comma (the clause separator) or a double quote.
	datastoreSortClause = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([^,"]+?)(?:\s+(?i:(asc|desc)))?$`)
	})
)

// ParseSort validates a package_search sort against CKAN's grammar,
// "field asc|desc[, field asc|desc…]" (e.g. "metadata_modified desc" or
// "score desc, name asc"), and returns it normalised: single spaces,
// lowercase directions.
func ParseSort(s string) (string, error) {
	return parseSort(s, solrSortClause(), true)
}

// ParseDatastoreSort validates a datastore_search sort:
// "column [asc|desc][, …]", where a column may hold spaces and any script.
func ParseDatastoreSort(s string) (string, error) {
	return parseSort(s, datastoreSortClause(), false)
}

func parseSort(s string, clause *regexp.Regexp, needDir bool) (string, error) {
	want := `"field asc" or "field desc", comma-separated`
	if !needDir {
		want = `"column", "column asc" or "column desc", comma-separated`
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxSortClauses {
		return "", fmt.Errorf("at most %d sort clauses, got %d", maxSortClauses, len(parts))
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		m := clause.FindStringSubmatch(p)
		if m == nil || strings.TrimSpace(m[1]) == "" {
			return "", fmt.Errorf("must be %s, got %q", want, s)
		}
		if m[2] == "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[1]+" "+strings.ToLower(m[2]))
		}
	}
	return strings.Join(out, ", "), nil
}
