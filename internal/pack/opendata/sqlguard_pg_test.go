package opendata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// These tests hold the SQL guard against PostgreSQL's own parser, on the
// server named by TOOLPORT_TEST_DATABASE_URL (skipped, naming it, when it is
// unset; CI sets it).

const envTestDatabaseURL = "TOOLPORT_TEST_DATABASE_URL"

// envDiffCount overrides how many random statements
// TestSQLGuardDifferential checks (the measurement in SECURITY.md ran
// 2,000,000); envDiffSeed its seed.
const (
	envDiffCount = "TOOLPORT_SQLGUARD_DIFF_COUNT"
	envDiffSeed  = "TOOLPORT_SQLGUARD_DIFF_SEED"
)

// ckan29Wrap is how CKAN 2.9's datastore_search_sql runs a query: inside a
// subquery, limited to ckan.datastore.search.rows_max + 1 rows (32000 by
// default), in one simple-protocol call.
func ckan29Wrap(sql string) string { return "SELECT * FROM (" + sql + ") AS blah LIMIT 32001 ;" }

// testPostgres connects to the test server with the settings the lexer
// follows, read-only and with a statement timeout, since the differential
// runs what the guard accepts.
func testPostgres(tb testing.TB) *pgconn.PgConn {
	tb.Helper()
	url := os.Getenv(envTestDatabaseURL)
	if url == "" {
		tb.Skipf("%s is not set: the SQL guard's PostgreSQL tests need a server", envTestDatabaseURL)
	}
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, url)
	if err != nil {
		tb.Fatalf("connecting to %s: %v", envTestDatabaseURL, err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	if err := conn.Exec(ctx, "SET standard_conforming_strings = on; SET statement_timeout = '5s'; "+
		"SET default_transaction_read_only = on; SET client_min_messages = error").Close(); err != nil {
		tb.Fatal(err)
	}
	return conn
}

// pgSplit is how PostgreSQL's parser takes a text.
type pgSplit int

const (
	pgUnparsed pgSplit = iota // a syntax or lexical error: the simple protocol runs none of it
	pgOne                     // one statement (perhaps failing later, e.g. an unknown column)
	pgMany                    // more than one statement
)

// pgParse asks the server to prepare sql with the extended protocol, which
// refuses more than one statement ("cannot insert multiple commands into a
// prepared statement") before it looks at what they mean.
func pgParse(tb testing.TB, conn *pgconn.PgConn, sql string) (pgSplit, error) {
	tb.Helper()
	_, err := conn.Prepare(context.Background(), "", sql, nil)
	if err == nil {
		return pgOne, nil
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		tb.Fatalf("preparing %q: %v", sql, err)
	}
	switch {
	case pe.Code == "42601" && strings.Contains(pe.Message, "multiple commands"):
		return pgMany, err
	case pe.Code == "42601", pe.Code == "22025", pe.Code == "22021", pe.Code == "0A000":
		// Syntax errors and the lexer's own (bad escapes, bytes that are
		// not UTF-8, U& without standard_conforming_strings). A few
		// errors of this code come later, from parse analysis: counting
		// them as unparsed only weakens the lexer's count check.
		return pgUnparsed, err
	}
	return pgOne, err
}

// lexStatements counts the non-empty statements the lexer sees: PostgreSQL
// parses ";;" as nothing between two semicolons.
func lexStatements(toks []sqlToken) int {
	n, empty := 0, true
	for _, t := range toks {
		if isPunct(t, ";") {
			empty = true
			continue
		}
		if empty {
			n++
			empty = false
		}
	}
	return n
}

// TestSQLGuardBypassesRanOnPostgres replays the bypasses on a real
// server, to show that they are what they claim (the DROP runs: in the
// simple protocol as is, and wrapped as CKAN 2.9 wraps it), and that the
// guard refuses them.
func TestSQLGuardBypassesRanOnPostgres(t *testing.T) {
	conn := testPostgres(t)
	ctx := context.Background()
	for _, tt := range []struct{ name, sent string }{
		{"as is", bypass},
		{"wrapped as CKAN 2.9 does", ckan29Wrap(bypassWrapped)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A table of this session only, in a transaction rolled back.
			if err := conn.Exec(ctx, "BEGIN READ WRITE; CREATE TEMP TABLE victim (x int)").Close(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := conn.Exec(ctx, "ROLLBACK").Close(); err != nil {
					t.Fatal(err)
				}
			}()
			if err := conn.Exec(ctx, tt.sent).Close(); err != nil {
				t.Fatalf("running %q: %v", tt.sent, err)
			}
			res := conn.ExecParams(ctx, "SELECT to_regclass('pg_temp.victim') IS NULL", nil, nil, nil, nil).Read()
			if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "t" {
				t.Fatalf("victim survived %q (%v %q): the bypass no longer demonstrates anything", tt.sent, res.Err, res.Rows)
			}
		})
	}
	for _, s := range []string{bypass, bypassWrapped} {
		if got, err := checkSelectSQL(s); err == nil {
			t.Errorf("checkSelectSQL(%q) accepted it as %q", s, got)
		}
	}
}

// TestSQLFieldNotationCallsFunctions shows on the server that field
// notation calls functions, each form with an allowed function, and that
// the guard refuses each form with a function it does not allow.
func TestSQLFieldNotationCallsFunctions(t *testing.T) {
	conn := testPostgres(t)
	for _, tt := range []struct{ demo, want, attack string }{
		{"SELECT ('a'::text).md5", "0cc175b9c0f1b6a831c399e269772661", "SELECT (30::float8).pg_sleep"},
		{"SELECT (ARRAY[-3])[1].abs", "3", "SELECT (ARRAY[30::float8])[1].pg_sleep"},
		{"SELECT g.abs FROM generate_series(-3, -3) AS g", "3", "SELECT g.pg_sleep FROM generate_series(30, 30) AS g"},
		{"SELECT generate_series.abs FROM generate_series(-3, -3)", "3", "SELECT generate_series.pg_sleep FROM generate_series(30, 30)"},
		{"SELECT float8.abs FROM CAST(-3 AS float8)", "3", "SELECT float8.pg_sleep FROM CAST(30 AS float8)"},
		{"SELECT coalesce.abs FROM coalesce(-3)", "3", "SELECT coalesce.pg_sleep FROM coalesce(30)"},
		{"SELECT r.abs FROM ROWS FROM (generate_series(-3, -3)) AS r", "3", "SELECT r.pg_sleep FROM ROWS FROM (generate_series(30, 30)) AS r"},
		{"SELECT u.md5 FROM current_user AS u", "", "SELECT u.pg_read_file FROM current_user AS u"},
	} {
		res := conn.ExecParams(context.Background(), tt.demo, nil, nil, nil, nil).Read()
		if res.Err != nil || len(res.Rows) != 1 || tt.want != "" && string(res.Rows[0][0]) != tt.want {
			t.Errorf("%s = %q, %v; want %q: the server no longer calls functions this way", tt.demo, res.Rows, res.Err, tt.want)
		}
		if got, err := checkSelectSQL(tt.attack); err == nil {
			t.Errorf("checkSelectSQL(%q) accepted it as %q", tt.attack, got)
		}
	}
}

// TestSQLRowFunctionsAreHarmless: field notation on a table's or a
// subquery's row (t.f is f(t)) is allowed for any f, because the only
// functions that take a row of any type describe or convert it. A release
// that adds another makes this fail, for a review of checkFieldCall.
func TestSQLRowFunctionsAreHarmless(t *testing.T) {
	conn := testPostgres(t)
	harmless := setOf("any_out", "anycompatible_out", "anycompatiblenonarray_out", "anyelement_out", "anynonarray_out",
		"array_agg", "concat", "count", "cume_dist", "dense_rank", "first_value", "hash_record", "hash_record_extended",
		"json_agg", "json_agg_strict", "json_build_array", "json_build_object", "jsonb_agg", "jsonb_agg_strict",
		"jsonb_build_array", "jsonb_build_object", "lag", "last_value", "lead", "mode", "num_nonnulls", "num_nulls",
		"percent_rank", "pg_collation_for", "pg_column_compression", "pg_column_size", "pg_column_toast_chunk_id",
		"pg_typeof", "quote_literal", "quote_nullable", "rank", "record_out", "record_send", "row_to_json", "to_json",
		"to_jsonb", "any_value")
	res := conn.ExecParams(context.Background(), `SELECT DISTINCT p.proname FROM pg_proc p
		WHERE p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1 AND p.proargtypes[0] IN ('record'::regtype,
		'anyelement'::regtype, '"any"'::regtype, 'anycompatible'::regtype, 'anynonarray'::regtype,
		'anycompatiblenonarray'::regtype)`, nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) == 0 {
		t.Fatalf("%v %q", res.Err, res.Rows)
	}
	for _, row := range res.Rows {
		if name := string(row[0]); !harmless[name] {
			t.Errorf("%s takes a row of any type: is t.%s harmless?", name, name)
		}
	}
}

// TestSQLSyntaxWordsCallNothing: a key word the guard lets stand before "("
// without treating it as a call must not, on the server, be able to name a
// function outside the allow-list: either the grammar never reads it as a
// function name (reserved and column-name key words), or no function of
// that name exists.
func TestSQLSyntaxWordsCallNothing(t *testing.T) {
	conn := testPostgres(t)
	res := conn.ExecParams(context.Background(), `SELECT word, catcode,
		EXISTS (SELECT 1 FROM pg_proc WHERE proname = word) FROM pg_get_keywords()`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	cat := map[string]string{}
	hasFunc := map[string]bool{}
	for _, row := range res.Rows {
		cat[string(row[0])] = string(row[1])
		hasFunc[string(row[0])] = string(row[2]) == "t"
	}
	for w := range sqlSyntaxWords {
		c, isKeyword := cat[w]
		switch {
		case c == "R" || c == "C":
		case sqlFunctions[w]:
		case isKeyword && hasFunc[w]:
			t.Errorf("%s (key word category %s) names a function the allow-list does not hold", w, c)
		case !isKeyword:
			// A key word of a later release (system_user, json_table, …):
			// on this server an ordinary name, so no function may have it.
			one := conn.ExecParams(context.Background(), "SELECT count(*) FROM pg_proc WHERE proname = $1",
				[][]byte{[]byte(w)}, nil, nil, nil).Read()
			if one.Err != nil || string(one.Rows[0][0]) != "0" {
				t.Errorf("%s is no key word on this server and names a function (%v %q)", w, one.Err, one.Rows)
			}
		}
	}
}

// TestSQLGuardDifferential generates random statements rich in what moves
// statement boundaries (comments ended by \r or \n, nested comments, every
// kind of quote and escape, dollar quotes, string continuation, semicolons)
// and checks each against PostgreSQL's parser:
//   - the lexer counts exactly the statements the server parses, whenever
//     the server parses the text at all;
//   - no statement the guard accepts is more than one statement to the
//     server: not the text given, not the text sent, not the text sent as
//     CKAN 2.9 wraps it;
//   - where the server parses the text given, it parses the text sent, and
//     both return the same columns and values: the re-written constants and
//     identifiers mean what the originals meant.
//
// The count is fixed, not timed, so a run is reproducible from its seed.
func TestSQLGuardDifferential(t *testing.T) {
	conn := testPostgres(t)
	count, seed := 20000, uint64(20261129)
	if s := os.Getenv(envDiffCount); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q is not a positive count", envDiffCount, s)
		}
		count = n
	}
	if s := os.Getenv(envDiffSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not a seed", envDiffSeed, s)
		}
		seed = n
	}
	if testing.Short() {
		count = min(count, 2000)
	}
	g := sqlGen{r: rand.New(rand.NewPCG(seed, 1))}
	var st diffStats
	for i := 0; i < count; i++ {
		s := g.statement()
		if err := diffOne(t, conn, s, &st); err != nil {
			t.Errorf("statement %d (seed %d): %v\n%q", i, seed, err, s)
			if st.failures++; st.failures >= 10 {
				t.FailNow()
			}
		}
	}
	t.Logf("seed %d: %d statements; %d lexed, the server parsed %d of them (%d as several statements); "+
		"guard accepted %d: %d parsed as one statement, %d unparsed, 0 as several; %d results compared equal",
		seed, count, st.lexed, st.lexedParsed, st.lexedMany, st.accepted, st.acceptedOne, st.acceptedUnparsed, st.compared)
	if st.accepted < count/20 || st.compared < count/50 || st.lexedMany < count/50 {
		t.Errorf("the generator lost its mix: %+v", st)
	}
}

type diffStats struct {
	lexed, lexedParsed, lexedMany int
	accepted, acceptedOne         int
	acceptedUnparsed, compared    int
	failures                      int
}

// diffOne checks one statement (see TestSQLGuardDifferential).
func diffOne(tb testing.TB, conn *pgconn.PgConn, s string, st *diffStats) error {
	if strings.IndexByte(s, 0) >= 0 {
		return nil // the protocol cannot carry it; the guard refuses it
	}
	given, givenErr := pgParse(tb, conn, s)
	if toks, err := lexSQL(s); err == nil {
		st.lexed++
		n := lexStatements(toks)
		switch {
		case given == pgMany && n <= 1:
			return fmt.Errorf("the lexer sees %d statement(s), the server several: %v", n, givenErr)
		case given == pgOne && n > 1:
			return fmt.Errorf("the lexer sees %d statements, the server one", n)
		}
		if given != pgUnparsed {
			st.lexedParsed++
		}
		if given == pgMany {
			st.lexedMany++
		}
	}
	sent, err := checkSelectSQL(s)
	if err != nil {
		return nil
	}
	st.accepted++
	switch given {
	case pgMany:
		return fmt.Errorf("accepted as %q, but the server parses several statements: %v", sent, givenErr)
	case pgUnparsed:
		st.acceptedUnparsed++
	default:
		st.acceptedOne++
	}
	got, sentErr := pgParse(tb, conn, sent)
	if got == pgMany {
		return fmt.Errorf("sends %q, which the server parses as several statements", sent)
	}
	if wrapped, err := pgParse(tb, conn, ckan29Wrap(sent)); wrapped == pgMany {
		return fmt.Errorf("sends %q, which wrapped as CKAN 2.9 does is several statements: %v", sent, err)
	}
	if given == pgOne && (givenErr == nil) != (sentErr == nil) {
		return fmt.Errorf("sends %q: prepared as given: %v; as sent: %v", sent, givenErr, sentErr)
	}
	if givenErr != nil || sentErr != nil {
		return nil
	}
	a, errA := pgRun(conn, s)
	b, errB := pgRun(conn, sent)
	if (errA == nil) != (errB == nil) {
		return fmt.Errorf("sends %q: ran as given: %v; as sent: %v", sent, errA, errB)
	}
	if errA == nil {
		if a != b {
			return fmt.Errorf("sends %q: as given it returns\n%s\nas sent\n%s", sent, a, b)
		}
		st.compared++
	}
	return nil
}

// pgRun runs one statement with the extended protocol (which cannot run a
// second) and renders its columns and rows.
func pgRun(conn *pgconn.PgConn, sql string) (string, error) {
	res := conn.ExecParams(context.Background(), sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	var b bytes.Buffer
	for _, f := range res.FieldDescriptions {
		fmt.Fprintf(&b, "%q:%d ", f.Name, f.DataTypeOID)
	}
	for _, row := range res.Rows {
		b.WriteString("\n")
		for _, v := range row {
			fmt.Fprintf(&b, "%q ", v)
		}
	}
	return b.String(), nil
}

// FuzzSQLGuardPostgres: nothing the guard accepts is more than one
// statement to the server, as given, as sent, or as CKAN 2.9 wraps it.
func FuzzSQLGuardPostgres(f *testing.F) {
	for _, s := range []string{bypass, bypassWrapped, "SELECT 1", "SELECT 'a'\r'b'", "SELECT $a$;$a$", "SELECT 1 --\r\n",
		"SELECT /* /* */ */ 1", `SELECT U&'\0041;' UESCAPE '!'`, `SELECT E'\';--'`} {
		f.Add(s)
	}
	conn := testPostgres(f)
	f.Fuzz(func(t *testing.T, s string) {
		var st diffStats
		if err := diffOne(t, conn, s, &st); err != nil {
			t.Fatal(err)
		}
	})
}
