package opendata

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxSQLBytes bounds a SQL query an agent may send.
const maxSQLBytes = 8000

// sqlToken is a token of PostgreSQL's lexical structure, as far as the
// read-only check needs it.
type sqlToken struct {
	kind byte   // 'w' word, 's' string literal, 'q' quoted identifier, 'p' punctuation
	text string // the word or punctuation; empty for literals
}

// forbiddenSQLWords are refused as bare words anywhere in a query, as a
// defence in depth behind the single-SELECT rule and the portal's own
// read-only transaction: statements that write, change the schema or the
// session, lock, or run code; INTO (SELECT … INTO creates a table); and
// functions that sleep, read the server's files or reach other databases.
// A column with such a name can still be written as a quoted identifier.
var forbiddenSQLWords = map[string]bool{
	"insert": true, "update": true, "delete": true, "merge": true, "upsert": true, "drop": true, "create": true,
	"alter": true, "truncate": true, "grant": true, "revoke": true, "copy": true, "vacuum": true, "analyze": true,
	"analyse": true, "reindex": true, "cluster": true, "comment": true, "lock": true, "call": true, "do": true,
	"execute": true, "prepare": true, "deallocate": true, "listen": true, "notify": true, "unlisten": true,
	"set": true, "reset": true, "begin": true, "commit": true, "rollback": true, "savepoint": true, "release": true,
	"refresh": true, "import": true, "load": true, "discard": true, "checkpoint": true, "into": true, "security": true,
	"pg_sleep": true, "pg_sleep_for": true, "pg_sleep_until": true, "dblink": true, "dblink_exec": true,
	"lo_import": true, "lo_export": true, "pg_read_file": true, "pg_read_binary_file": true, "pg_ls_dir": true,
	"pg_stat_file": true, "set_config": true, "pg_terminate_backend": true, "pg_cancel_backend": true,
	"nextval": true, "setval": true, "txid_current": true, "pg_advisory_lock": true,
}

// checkSelectSQL accepts exactly one read-only query, SELECT … or
// WITH … SELECT …, and returns it without a trailing semicolon. It
// tokenizes the text as PostgreSQL does (string literals, E'…' strings,
// quoted identifiers, -- and nested /* */ comments) so that nothing inside a
// literal or a comment is mistaken for code, and refuses:
//   - any semicolon but trailing ones: a second statement;
//   - dollar-quoted strings and backslashes in standard strings, whose
//     extent depends on settings the checker cannot see
//     (standard_conforming_strings), so a literal could hide a statement;
//   - the words in forbiddenSQLWords outside literals and quoted identifiers;
//   - unterminated literals or comments, text that is not UTF-8, NUL bytes,
//     and queries longer than maxSQLBytes.
func checkSelectSQL(sql string) (string, error) {
	if len(sql) > maxSQLBytes {
		return "", fmt.Errorf("at most %d bytes, got %d", maxSQLBytes, len(sql))
	}
	if !utf8.ValidString(sql) || strings.ContainsRune(sql, 0) {
		return "", errors.New("must be UTF-8 text without NUL bytes")
	}
	toks, end, err := tokenizeSQL(sql)
	if err != nil {
		return "", err
	}
	// Drop trailing semicolons; end tracks where the statement's text ends.
	for len(toks) > 0 && toks[len(toks)-1].kind == 'p' && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
		end = end[:len(end)-1]
	}
	if len(toks) == 0 {
		return "", errors.New("is empty")
	}
	first := strings.ToLower(toks[0].text)
	if toks[0].kind != 'w' || first != "select" && first != "with" {
		return "", errors.New("must be a single SELECT query (or WITH … SELECT)")
	}
	hasSelect := false
	for _, t := range toks {
		if t.kind == 'p' && t.text == ";" {
			return "", errors.New("must be a single statement: a semicolon may only end it")
		}
		if t.kind != 'w' {
			continue
		}
		w := strings.ToLower(t.text)
		if forbiddenSQLWords[w] {
			return "", fmt.Errorf("%s is not allowed: only read-only SELECT queries are (quote a column of that name: \"%s\")", strings.ToUpper(w), t.text)
		}
		hasSelect = hasSelect || w == "select"
	}
	if !hasSelect {
		return "", errors.New("WITH must be followed by a SELECT")
	}
	return strings.TrimSpace(sql[:end[len(end)-1]]), nil
}

// tokenizeSQL splits sql into tokens, skipping white space and comments,
// and returns with each token the byte offset where it ends.
func tokenizeSQL(sql string) ([]sqlToken, []int, error) {
	var toks []sqlToken
	var ends []int
	emit := func(t sqlToken, end int) {
		toks = append(toks, t)
		ends = append(ends, end)
	}
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			nl := strings.IndexByte(sql[i:], '\n')
			if nl < 0 {
				i = len(sql)
			} else {
				i += nl + 1
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			// PostgreSQL's block comments nest.
			depth, j := 1, i+2
			for depth > 0 {
				if j >= len(sql) {
					return nil, nil, errors.New("has an unterminated /* comment")
				}
				switch {
				case strings.HasPrefix(sql[j:], "/*"):
					depth++
					j += 2
				case strings.HasPrefix(sql[j:], "*/"):
					depth--
					j += 2
				default:
					j++
				}
			}
			i = j
		case c == '\'':
			j, err := skipQuoted(sql, i, '\'', false)
			if err != nil {
				return nil, nil, err
			}
			emit(sqlToken{kind: 's'}, j)
			i = j
		case c == '"':
			j, err := skipQuoted(sql, i, '"', false)
			if err != nil {
				return nil, nil, err
			}
			emit(sqlToken{kind: 'q'}, j)
			i = j
		case c == '$':
			return nil, nil, errors.New("must not use $ (dollar-quoted strings or parameters)")
		case c == '\\':
			return nil, nil, errors.New("must not contain a backslash outside string literals")
		case isSQLWordByte(c):
			j := i
			for j < len(sql) && (isSQLWordByte(sql[j]) || sql[j] == '$') {
				j++
			}
			word := sql[i:j]
			if j < len(sql) && sql[j] == '\'' && (word == "e" || word == "E") {
				// An escape string, E'…', where a backslash escapes the quote.
				k, err := skipQuoted(sql, j, '\'', true)
				if err != nil {
					return nil, nil, err
				}
				emit(sqlToken{kind: 's'}, k)
				i = k
				continue
			}
			emit(sqlToken{kind: 'w', text: word}, j)
			i = j
		default:
			_, size := utf8.DecodeRuneInString(sql[i:])
			emit(sqlToken{kind: 'p', text: sql[i : i+size]}, i+size)
			i += size
		}
	}
	return toks, ends, nil
}

// skipQuoted returns the offset just past the literal or quoted identifier
// opening at sql[start] == quote; a doubled quote stands for itself. In an
// escape string a backslash escapes the next byte; in any other string a
// backslash is refused (see checkSelectSQL).
func skipQuoted(sql string, start int, quote byte, escapes bool) (int, error) {
	for j := start + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if escapes {
				j++
				continue
			}
			if quote == '\'' {
				return 0, errors.New(`must not contain a backslash in a string literal (write E'…' for escapes)`)
			}
		case quote:
			if j+1 < len(sql) && sql[j+1] == quote {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	if quote == '"' {
		return 0, errors.New("has an unterminated quoted identifier")
	}
	return 0, errors.New("has an unterminated string literal")
}

// isSQLWordByte reports whether b can be part of a key word or unquoted
// identifier; every non-ASCII byte can (PostgreSQL allows letters of any
// script, so a Hebrew identifier is one word).
func isSQLWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}
