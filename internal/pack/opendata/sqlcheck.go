package opendata

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxSQLBytes bounds a SQL query an agent may send.
const maxSQLBytes = 8000

// sqlStatementWords are key words refused as bare words anywhere: those
// that write inside a SELECT (a data-modifying WITH, SELECT … INTO) and, as
// a defence in depth behind the single-statement rule, those that begin
// other statements. A quoted identifier is never a key word, so a column of
// such a name is written "update".
var sqlStatementWords = setOf(
	"insert", "update", "delete", "merge", "into", "returning",
	"drop", "create", "alter", "truncate", "grant", "revoke", "copy", "vacuum", "analyze", "analyse",
	"reindex", "cluster", "comment", "lock", "call", "do", "execute", "prepare", "deallocate", "listen",
	"notify", "unlisten", "set", "reset", "begin", "commit", "rollback", "savepoint", "release",
	"refresh", "import", "load", "discard", "checkpoint", "security",
)

// sqlLockStrength are the words after FOR that make a locking clause (FOR
// UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE, FOR READ ONLY).
var sqlLockStrength = setOf("update", "no", "share", "key", "read")

// sqlFunctions is the allow-list of functions a query may call, by the name
// PostgreSQL resolves (an unquoted name lower-cased; a quoted one as
// written): aggregates and window functions, string, math, date and time,
// JSON, arrays, text search, and casts written as calls. None of them
// writes, sleeps, locks, signals, reads files or reaches another server.
var sqlFunctions = setOf(
	// aggregates and window functions
	"count", "sum", "avg", "min", "max", "array_agg", "string_agg", "bool_and", "bool_or", "every",
	"bit_and", "bit_or", "bit_xor", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
	"corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2",
	"regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "mode", "percentile_cont", "percentile_disc", "any_value",
	"json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg",
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
	"first_value", "last_value", "nth_value",
	// conditionals
	"coalesce", "nullif", "greatest", "least", "num_nulls", "num_nonnulls",
	// strings
	"length", "char_length", "character_length", "octet_length", "bit_length", "lower", "upper", "initcap",
	"trim", "btrim", "ltrim", "rtrim", "substring", "substr", "position", "strpos", "replace", "split_part",
	"concat", "concat_ws", "left", "right", "lpad", "rpad", "repeat", "reverse", "translate", "overlay",
	"regexp_replace", "regexp_match", "regexp_matches", "regexp_split_to_array", "regexp_split_to_table",
	"regexp_like", "regexp_count", "regexp_instr", "regexp_substr", "starts_with", "like", "format",
	"ascii", "chr", "md5", "to_hex", "normalize", "string_to_array", "string_to_table", "array_to_string",
	"to_char", "to_number", "quote_literal", "quote_ident", "quote_nullable",
	// math
	"abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "power", "pow", "exp", "ln",
	"log", "log10", "mod", "div", "pi", "degrees", "radians", "sin", "cos", "tan", "asin", "acos", "atan",
	"atan2", "width_bucket", "random", "gcd", "lcm", "scale", "min_scale", "trim_scale",
	// date and time
	"now", "date_trunc", "date_part", "extract", "age", "make_date", "make_time", "make_timestamp",
	"make_timestamptz", "make_interval", "to_timestamp", "to_date", "date_bin", "justify_days",
	"justify_hours", "justify_interval", "isfinite", "overlaps", "timezone", "clock_timestamp",
	"statement_timestamp", "transaction_timestamp", "generate_series",
	// JSON
	"to_json", "to_jsonb", "row_to_json", "array_to_json", "json_build_object", "jsonb_build_object",
	"json_build_array", "jsonb_build_array", "json_object", "jsonb_object", "json_array_length",
	"jsonb_array_length", "json_extract_path", "json_extract_path_text", "jsonb_extract_path",
	"jsonb_extract_path_text", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text",
	"json_array_elements", "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text",
	"json_object_keys", "jsonb_object_keys", "json_typeof", "jsonb_typeof", "json_strip_nulls",
	"jsonb_strip_nulls", "jsonb_pretty", "jsonb_set", "jsonb_insert", "jsonb_path_query",
	"jsonb_path_query_array", "jsonb_path_query_first", "jsonb_path_exists", "jsonb_path_match",
	"json_array", "json_arrayagg", "json_objectagg", "json_scalar", "json_serialize", "json_query",
	"json_value", "json_exists", "json_table", "json",
	// arrays
	"unnest", "array_length", "array_upper", "array_lower", "cardinality", "array_append", "array_prepend",
	"array_cat", "array_position", "array_positions", "array_remove", "array_replace",
	// text search (the datastore's _full_text column)
	"to_tsvector", "to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery", "ts_rank",
	"ts_rank_cd", "ts_headline",
	// casts written as calls, and types with modifiers: numeric(10, 2)
	"cast", "int", "integer", "int2", "int4", "int8", "smallint", "bigint", "numeric", "decimal", "dec",
	"real", "float", "float4", "float8", "text", "varchar", "char", "character", "bpchar", "bool",
	"boolean", "date", "time", "timestamp", "timestamptz", "timetz", "interval", "jsonb", "uuid", "bit",
	"varbit", "nchar",
)

// sqlSyntaxWords are key words that may stand before "(" without naming a
// function: PostgreSQL's reserved key words (never a function's name), the
// non-XML column-name key words (each its own construct: EXISTS (…),
// VALUES (…), ROW (…), BETWEEN (…), …) and the few others that open a
// parenthesised clause (OVER (…), FILTER (…), GROUP BY CUBE (…), …).
// Quoted, they are identifiers, and so function names.
// TestSQLSyntaxWordsCallNothing checks against the server that none of
// them names a function outside sqlFunctions.
var sqlSyntaxWords = setOf(
	// reserved
	"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast",
	"check", "collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role",
	"current_time", "current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do",
	"else", "end", "except", "false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in",
	"initially", "intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not",
	"null", "offset", "on", "only", "or", "order", "placing", "primary", "references", "returning",
	"select", "session_user", "some", "symmetric", "system_user", "table", "then", "to", "trailing", "true",
	"union", "unique", "user", "using", "variadic", "when", "where", "window", "with",
	// column-name key words
	"between", "bigint", "bit", "boolean", "char", "character", "coalesce", "dec", "decimal", "exists",
	"extract", "float", "greatest", "grouping", "inout", "int", "integer", "interval", "json", "json_array",
	"json_arrayagg", "json_exists", "json_object", "json_objectagg", "json_query", "json_scalar",
	"json_serialize", "json_table", "json_value", "least", "national", "nchar", "none", "normalize",
	"nullif", "numeric", "out", "overlay", "position", "precision", "real", "row", "setof", "smallint",
	"substring", "time", "timestamp", "treat", "trim", "values", "varchar",
	// type and function name key words that are operators or joins
	"ilike", "is", "isnull", "notnull", "similar", "join", "inner", "outer", "full", "cross", "natural",
	// unreserved key words that open a clause
	"over", "filter", "within", "by", "rows", "range", "groups", "cube", "rollup", "sets", "columns",
	"materialized", "varying", "zone", "first", "next",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// checkSelectSQL accepts exactly one read-only query, SELECT … or
// WITH … SELECT …, and returns the text to send: the query rebuilt from its
// tokens (comments dropped, one space between tokens where one is needed,
// constants written canonically), so that what the portal runs is exactly
// what was checked, whatever its PostgreSQL version or settings. It
// tokenizes as PostgreSQL does (lexSQL) and refuses:
//   - any semicolon but trailing ones (a second statement), and brackets
//     that do not balance (which could close the subquery a portal wraps
//     the query in);
//   - a call of any function not in sqlFunctions, compared by the name
//     PostgreSQL resolves (quotes and U& escapes removed; unquoted names
//     lower-cased), schema-qualified only by pg_catalog;
//   - field notation that PostgreSQL reads as a call of a function not in
//     sqlFunctions ((30::float8).pg_sleep; g.pg_sleep where g names a
//     function in FROM);
//   - locking clauses (FOR UPDATE, FOR SHARE, …) and the words in
//     sqlStatementWords outside quotes;
//   - lexical errors, text that is not UTF-8, NUL bytes, and queries longer
//     than maxSQLBytes.
func checkSelectSQL(sql string) (string, error) {
	if len(sql) > maxSQLBytes {
		return "", fmt.Errorf("at most %d bytes, got %d", maxSQLBytes, len(sql))
	}
	if !utf8.ValidString(sql) || strings.ContainsRune(sql, 0) {
		return "", errors.New("must be UTF-8 text without NUL bytes")
	}
	toks, err := lexSQL(sql)
	if err != nil {
		return "", err
	}
	for len(toks) > 0 && isPunct(toks[len(toks)-1], ";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return "", errors.New("is empty")
	}
	if !isWord(toks[0], "select") && !isWord(toks[0], "with") {
		return "", errors.New("must be a single SELECT query (or WITH … SELECT)")
	}
	if err := checkSQLTokens(toks); err != nil {
		return "", err
	}
	return joinSQLTokens(toks), nil
}

func isPunct(t sqlToken, p string) bool { return t.kind == tokPunct && t.text == p }

// isWord reports whether t is the unquoted word w (a key word, if w is one).
func isWord(t sqlToken, w string) bool { return t.kind == tokIdent && t.val == w }

func isName(t sqlToken) bool { return t.kind == tokIdent || t.kind == tokQIdent }

// checkSQLTokens applies checkSelectSQL's rules to the tokens of a query
// whose trailing semicolons are gone.
func checkSQLTokens(toks []sqlToken) error {
	var open []string // brackets not yet closed
	hasSelect := false
	closing := matchingParens(toks)
	aliases := functionAliases(toks, closing)
	for i, t := range toks {
		switch {
		case isPunct(t, ";"):
			return errors.New("must be a single statement: a semicolon may only end it")
		case isPunct(t, "("), isPunct(t, "["):
			open = append(open, t.text)
		case isPunct(t, ")"), isPunct(t, "]"):
			want := map[string]string{")": "(", "]": "["}[t.text]
			if len(open) == 0 || open[len(open)-1] != want {
				return fmt.Errorf("has an unbalanced %q", t.text)
			}
			open = open[:len(open)-1]
		case t.kind == tokIdent:
			hasSelect = hasSelect || t.val == "select"
			if sqlStatementWords[t.val] {
				return fmt.Errorf("%s is not allowed: only read-only SELECT queries are (a column of that name must be quoted: %s)",
					strings.ToUpper(t.val), quoteSQLIdent(t.val))
			}
			if t.val == "for" && i+1 < len(toks) && toks[i+1].kind == tokIdent && sqlLockStrength[toks[i+1].val] {
				return errors.New("locking clauses (FOR UPDATE, FOR SHARE, …) are not allowed")
			}
		}
		if isName(t) && i+1 < len(toks) && isPunct(toks[i+1], "(") {
			if err := checkSQLCall(toks, i); err != nil {
				return err
			}
		}
		if err := checkFieldCall(toks, i, aliases); err != nil {
			return err
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("has an unclosed %q", open[len(open)-1])
	}
	if !hasSelect {
		return errors.New("WITH must be followed by a SELECT")
	}
	return nil
}

// checkSQLCall checks the name toks[i], followed by "(": a call of an
// allowed function, a key word that opens a parenthesised clause, or a name
// that cannot be a call (after AS: an alias's column list or a type's
// modifiers; right after WITH [RECURSIVE]: a WITH query's column list).
func checkSQLCall(toks []sqlToken, i int) error {
	t := toks[i]
	if i >= 2 && isPunct(toks[i-1], ".") {
		q := toks[i-2]
		if !isName(q) || q.val != "pg_catalog" || i >= 3 && isPunct(toks[i-3], ".") {
			return fmt.Errorf("%s.%s(…) is not allowed: functions may be qualified only by pg_catalog", q.val, t.val)
		}
	} else {
		if t.kind == tokIdent && sqlSyntaxWords[t.val] {
			return nil
		}
		if i >= 1 && (isWord(toks[i-1], "as") || isWord(toks[i-1], "with") || isWord(toks[i-1], "recursive")) {
			return nil
		}
	}
	if sqlFunctions[t.val] {
		return nil
	}
	return fmt.Errorf("function %s is not allowed: only aggregate, window, string, math, date and time, JSON, array "+
		"and text search functions and casts are (to name a FROM item's columns write AS name(…))", t.val)
}

// checkFieldCall refuses the field notation PostgreSQL reads as a call of a
// one-argument function: (expr).f and a[1].f are f(expr) when expr has no
// field f, and g.f is f(g) when g names a function in FROM that returns a
// scalar (FROM generate_series(30, 30) AS g, FROM CAST(30 AS float8) AS g),
// so "SELECT (30::float8).pg_sleep" sleeps. Such a field must name an
// allowed function. A table's or subquery's row is composite, and the
// functions that take a row of any type only describe or convert it
// (TestSQLRowFunctionsAreHarmless), so t.f stays allowed for other FROM items.
func checkFieldCall(toks []sqlToken, i int, aliases map[string]bool) error {
	if !isPunct(toks[i], ".") || i == 0 || i+1 >= len(toks) || !isName(toks[i+1]) {
		return nil
	}
	field := toks[i+1]
	if i+2 < len(toks) && (isPunct(toks[i+2], "(") || isPunct(toks[i+2], ".")) || sqlFunctions[field.val] {
		return nil // a qualified call (checked as a call) or a longer name
	}
	switch prev := toks[i-1]; {
	case isPunct(prev, ")"), isPunct(prev, "]"):
		return fmt.Errorf("(…).%s is not allowed: PostgreSQL reads it as a call of the function %s unless it is a field", field.val, field.val)
	case isName(prev) && aliases[prev.val] && (i < 2 || !isPunct(toks[i-2], ".")):
		return fmt.Errorf("%s.%s is not allowed: %s may name a function in FROM, and PostgreSQL reads %s.%s as the call %s(%s) "+
			"(name its columns with AS %s(…) and use them unqualified)", prev.val, field.val, prev.val, prev.val, field.val,
			field.val, prev.val, prev.val)
	}
	return nil
}

// sqlValueKeywords are the SQL-standard functions written without
// parentheses, which may stand in FROM like any function.
var sqlValueKeywords = setOf("current_date", "current_time", "current_timestamp", "localtime", "localtimestamp",
	"current_role", "current_user", "session_user", "system_user", "user", "current_catalog", "current_schema")

// functionAliases returns every name that may refer to a function in FROM,
// whose row is the function's value: the names of all calls and the
// aliases written after them (FROM f(…) [WITH ORDINALITY] [AS] g), the
// types of casts (FROM CAST(x AS float8) is named float8), the names
// PostgreSQL gives the key-word forms (FROM COALESCE(…) is named coalesce,
// TRIM btrim, …), and the aliases after the key-word functions written
// without parentheses. It over-approximates: a parenthesis after a name
// counts as a call unless a subquery starts inside it.
func functionAliases(toks []sqlToken, closing map[int]int) map[string]bool {
	aliases := setOf("btrim", "ltrim", "rtrim", "pg_collation_for", "date_part", "timezone")
	for w := range sqlSyntaxWords {
		aliases[w] = true
	}
	aliasAfter := func(j int) {
		k := j + 1
		if k+1 < len(toks) && isWord(toks[k], "with") && isWord(toks[k+1], "ordinality") {
			k += 2
		}
		if k < len(toks) && isWord(toks[k], "as") {
			k++
		}
		if k < len(toks) && isName(toks[k]) {
			aliases[toks[k].val] = true
		}
	}
	for i, t := range toks {
		if t.kind == tokIdent && sqlValueKeywords[t.val] {
			aliasAfter(i)
		}
		if !isName(t) || i+1 >= len(toks) || !isPunct(toks[i+1], "(") {
			continue
		}
		if i+2 < len(toks) && (isWord(toks[i+2], "select") || isWord(toks[i+2], "with") || isWord(toks[i+2], "table")) {
			continue // a subquery: FROM (SELECT …) AS s
		}
		aliases[t.val] = true
		end, ok := closing[i+1]
		if !ok {
			continue // unbalanced: refused anyway
		}
		if t.kind == tokIdent && (t.val == "cast" || t.val == "treat" || t.val == "xmlcast") {
			depth, afterAs := 0, false
			for k := i + 2; k < end; k++ {
				switch {
				case isPunct(toks[k], "("), isPunct(toks[k], "["):
					depth++
				case isPunct(toks[k], ")"), isPunct(toks[k], "]"):
					depth--
				case depth == 0 && isWord(toks[k], "as"):
					afterAs = true
				case afterAs && isName(toks[k]):
					aliases[toks[k].val] = true
				}
			}
		}
		aliasAfter(end)
	}
	return aliases
}

// matchingParens maps the index of each "(" to that of its ")".
func matchingParens(toks []sqlToken) map[int]int {
	closing := map[int]int{}
	var stack []int
	for i, t := range toks {
		switch {
		case isPunct(t, "("):
			stack = append(stack, i)
		case isPunct(t, ")") && len(stack) > 0:
			closing[stack[len(stack)-1]] = i
			stack = stack[:len(stack)-1]
		}
	}
	return closing
}

// joinSQLTokens writes the tokens with a space between two where one may
// be needed to keep them apart, and none inside brackets, before commas,
// around :: and in qualified names.
func joinSQLTokens(toks []sqlToken) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && sqlSpaceBetween(toks[i-1], t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// sqlSpaceBetween reports whether a space goes between a and b. Leaving it
// out is safe only where the two can never lex as something else together
// (a number followed by "." can: "1 .x" is not "1.x").
func sqlSpaceBetween(a, b sqlToken) bool {
	switch {
	case isPunct(a, "("), isPunct(a, "["), isPunct(b, ")"), isPunct(b, "]"), isPunct(b, ","):
		return false
	case isPunct(b, "("):
		return !(a.kind == tokQIdent || a.kind == tokIdent && (!sqlSyntaxWords[a.val] || sqlFunctions[a.val]))
	case isPunct(b, "["):
		return !(isName(a) || isPunct(a, ")") || isPunct(a, "]"))
	case isPunct(b, "."):
		return !isName(a)
	case isPunct(a, "."):
		return !(isName(b) || b.kind == tokOp && b.text == "*")
	case isPunct(b, "::"):
		return !(isName(a) || a.kind == tokString || a.kind == tokNumber || isPunct(a, ")") || isPunct(a, "]"))
	case isPunct(a, "::"):
		return !isName(b)
	}
	return true
}
