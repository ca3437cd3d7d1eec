package opendata

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// The hardening issue's bypass (item 3): PostgreSQL ends a -- comment at \r
// as well as \n, so the server runs the DROP that the old checker thought
// was commented out. bypassWrapped is the same trick shaped for the CKAN 2.9
// wrapper, which the exact text would turn into a syntax error: it closes
// the wrapper's subquery before the DROP and opens a new one after it.
const (
	bypass        = "SELECT 1 AS a --\r; DROP TABLE victim; SELECT 1 AS b --\n FROM (SELECT 1) t"
	bypassWrapped = "SELECT 1 AS a) w --\r; DROP TABLE victim; SELECT * FROM (SELECT 1 AS b --\n FROM (SELECT 1) t"
)

func TestCheckSelectSQLAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT * FROM "5c78e9fa-c2e2-4771-93ff-7f400a12f7ba" LIMIT 5`, `SELECT * FROM "5c78e9fa-c2e2-4771-93ff-7f400a12f7ba" LIMIT 5`},
		{"  select 1;  ", "select 1"},
		{"SELECT 1;;\n-- done\n", "SELECT 1"},
		{`WITH t AS (SELECT "עיר", count(*) AS n FROM "r" GROUP BY 1) SELECT * FROM t ORDER BY n DESC`, ""},
		// Semicolons and key words inside literals, identifiers and
		// comments are text; comments are not sent.
		{`SELECT 'a; DROP TABLE x' AS "delete; insert", 'it''s' FROM "r" -- ; drop`, `SELECT 'a; DROP TABLE x' AS "delete; insert", 'it''s' FROM "r"`},
		{"SELECT /* outer /* nested; */ still; */ 1", "SELECT 1"},
		{"SELECT\t1\r\n,\f2\v", "SELECT 1, 2"},
		// Constants are sent in one form that reads the same whatever
		// standard_conforming_strings is.
		{`SELECT E'it\'s; \\ fine' FROM "r"`, `SELECT E'it''s; \\ fine' FROM "r"`},
		{`SELECT 'a\b'`, `SELECT E'a\\b'`},
		{`SELECT $$it's; $$, $q$a$$b$q$`, `SELECT 'it''s; ', 'a$$b'`},
		{"SELECT 'con'\n'cat' -- x\r'enated'", `SELECT 'concatenated'`},
		{`SELECT U&'d\0061t\+000061', U&'d!0061t' UESCAPE '!', U&"c\05d9"`, `SELECT 'data', 'dat', "cי"`},
		{`SELECT N'x', B'0101', x'fF'`, `SELECT NCHAR 'x', B'0101', X'fF'`},
		{"SELECT 0x1F, 0o17, 0b101, 1_000_000, 1.5e3, .5, 1.", "SELECT 31, 15, 5, 1000000, 1.5e3, .5, 1."},
		{`SELECT "update" FROM "r" WHERE "שם" = 'חיפה'`, ""},
		{`SELECT שם FROM "r" WHERE סמל > 4000`, ""},
		{"SELECT t.x, t.*, x::int, (y)::text, a[1], - -1, 2=-1 FROM \"r\" t", `SELECT t.x, t.*, x::int, (y)::text, a[1], - - 1, 2 = - 1 FROM "r" t`},
		{"SELECT t. 1, 1 .x", "SELECT t. 1, 1 .x"},
		// Allowed functions, key words before "(", and names that are not calls.
		{`SELECT lower("שם"), pg_catalog.upper(x), "length"(x), count(*) FILTER (WHERE x > 1) OVER (PARTITION BY y) FROM "r"`, ""},
		{`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), CAST(x AS numeric(10,2)), x::varchar(5) FROM "r"`,
			`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), CAST(x AS numeric(10, 2)), x::varchar(5) FROM "r"`},
		{`SELECT * FROM generate_series(1, 3) AS g(n) WHERE n IN (1, 2) AND EXISTS (SELECT 1)`, ""},
		{`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t`, ""},
		{`SELECT date_trunc('month', "תאריך"::timestamp), to_char(now(), 'YYYY'), jsonb_extract_path(j, 'a') FROM "r"`, ""},
		// Fields of tables and subqueries, and allowed functions in field notation.
		{`SELECT t.x, s.n, t."שם" FROM "r" AS t JOIN (SELECT 1 AS n) AS s ON true`, ""},
		{`SELECT g.abs, n FROM generate_series(-3, 3) AS g(n)`, `SELECT g.abs, n FROM generate_series(- 3, 3) AS g(n)`},
		// A substring's FOR is not a locking clause.
		{`SELECT substring(x FROM 1 FOR 2) FROM "r"`, ""},
	}
	for _, tt := range tests {
		got, err := checkSelectSQL(tt.in)
		if err != nil {
			t.Errorf("checkSelectSQL(%q) = %v", tt.in, err)
			continue
		}
		if tt.want == "" {
			tt.want = strings.TrimSpace(tt.in)
		}
		if got != tt.want {
			t.Errorf("checkSelectSQL(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckSelectSQLRefuses(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "is empty"},
		{" ; ", "is empty"},
		{"SELECT 1; SELECT 2", "semicolon"},
		{"SELECT 1; DROP TABLE x", "semicolon"},
		{"SELECT 1 /* */ ; -- x\n DELETE FROM t", "semicolon"},
		{`DELETE FROM "r"`, "single SELECT"},
		{`EXPLAIN ANALYZE SELECT 1`, "single SELECT"},
		{`(SELECT 1)`, "single SELECT"},
		{`WITH d AS (DELETE FROM "r" RETURNING *) SELECT * FROM d`, "DELETE is not allowed"},
		{`WITH t AS (VALUES (1)) TABLE t`, "followed by a SELECT"},
		{`SELECT * INTO new_table FROM "r"`, "INTO is not allowed"},
		{`SELECT pg_sleep(100)`, "function pg_sleep is not allowed"},
		{`SELECT set_config('x', 'y', false)`, "function set_config is not allowed"},
		{`SELECT 1 \g`, `unexpected character '\\'`},
		{`SELECT 'unterminated`, "unterminated quoted string"},
		{`SELECT "unterminated`, "unterminated quoted identifier"},
		{`SELECT E'a\'`, "unterminated quoted string"},
		{`SELECT $$a`, "unterminated dollar-quoted string"},
		{`SELECT $1`, "parameters are not supported"},
		{"SELECT 1 /* /* */", "unterminated /*"},
		{`SELECT ""`, "zero-length delimited identifier"},
		{`SELECT E'\xff'`, "not valid UTF-8"},
		{`SELECT E'\0'`, "NUL"},
		{`SELECT E'\uD800'`, "surrogate"},
		{`SELECT U&'\D800'`, "surrogate"},
		{`SELECT U&'\12'`, "invalid Unicode escape"},
		{`SELECT U&'x' UESCAPE 'a'`, "invalid Unicode escape character"},
		{`SELECT U&'x' UESCAPE U&'!'`, "simple string literal"},
		{`SELECT E'\v'`, `\v`},
		{`SELECT 1abc`, "trailing junk"},
		{`SELECT 0x`, "invalid integer"},
		{`SELECT 1e+`, "trailing junk"},
		{`SELECT 1..2`, `".."`},
		{`SELECT B'012'`, "binary digit"},
		{"SELECT (1", `unclosed "("`},
		{"SELECT 1)", `unbalanced ")"`},
		{"SELECT a[1)", `unbalanced ")"`},
		{"SELECT '\x00'", "NUL"},
		{"SELECT '\xff'", "UTF-8"},
		{"SELECT " + strings.Repeat("1+", maxSQLBytes), "at most"},
		{"-- only a comment", "is empty"},
		{"SELECT 1 " + strings.Repeat("@", 64) + " 1", "operator too long"},
		// Item 3 of the hardening issue.
		{bypass, "semicolon"},
		{bypassWrapped, `unbalanced ")"`},
		{"SELECT 1 --\r; SELECT 2", "semicolon"},
		{"SELECT 'a'\r'b'; SELECT 2", "semicolon"},
		// Item 4: functions by the name the server resolves, not by the
		// spelling; unlisted functions; locking clauses.
		{`SELECT "pg_sleep"(30)`, "function pg_sleep is not allowed"},
		{`SELECT pg_catalog."set_config"('a', 'b', false)`, "function set_config is not allowed"},
		{`SELECT * FROM "dblink_exec"('host=x', 'DROP TABLE t')`, "function dblink_exec is not allowed"},
		{`SELECT "lo_import"('/etc/passwd')`, "function lo_import is not allowed"},
		{`SELECT U&"pg\005fsleep"(30)`, "function pg_sleep is not allowed"},
		{`SELECT U&"pg!005fsleep" UESCAPE '!' (30)`, "function pg_sleep is not allowed"},
		{`SELECT PG_SLEEP(30)`, "function pg_sleep is not allowed"},
		{`SELECT lo_from_bytea(0, 'x')`, "function lo_from_bytea is not allowed"},
		{`SELECT pg_notify('c', 'x')`, "function pg_notify is not allowed"},
		{`SELECT pg_try_advisory_lock(1)`, "function pg_try_advisory_lock is not allowed"},
		{`SELECT * FROM "r" FOR SHARE`, "locking clauses"},
		{`SELECT * FROM "r" FOR UPDATE`, "locking clauses"},
		{`SELECT * FROM "r" FOR NO KEY UPDATE`, "locking clauses"},
		{`SELECT * FROM "r" for key share`, "locking clauses"},
		{`SELECT public.lower('x')`, "qualified only by pg_catalog"},
		{`SELECT x.pg_catalog.lower('x')`, "qualified only by pg_catalog"},
		{`SELECT "over"(1)`, "function over is not allowed"},
		{`SELECT query_to_xml('DELETE FROM r', true, true, '')`, "function query_to_xml is not allowed"},
		{`SELECT * FROM "r" t(a)`, "function t is not allowed"},
		// Field notation that the server reads as a call.
		{`SELECT (30::float8).pg_sleep`, "(…).pg_sleep is not allowed"},
		{`SELECT x[1].pg_sleep FROM "r"`, "(…).pg_sleep is not allowed"},
		{`SELECT g.pg_sleep FROM generate_series(30, 30) g`, "g.pg_sleep is not allowed"},
		{`SELECT "g"."pg_sleep" FROM generate_series(30, 30) AS "g"`, "g.pg_sleep is not allowed"},
		{`SELECT generate_series.pg_sleep FROM generate_series(30, 30)`, "generate_series.pg_sleep is not allowed"},
		{`SELECT float8.pg_sleep FROM CAST(30 AS float8)`, "float8.pg_sleep is not allowed"},
		{`SELECT r.pg_sleep FROM CAST(30 AS pg_catalog.float8) AS r`, "r.pg_sleep is not allowed"},
		{`SELECT coalesce.pg_sleep FROM coalesce(30)`, "coalesce.pg_sleep is not allowed"},
		{`SELECT btrim.lo_import FROM trim('/etc/passwd')`, "btrim.lo_import is not allowed"},
		{`SELECT u.pg_sleep FROM unnest(ARRAY[30]) WITH ORDINALITY AS u`, "u.pg_sleep is not allowed"},
		{`SELECT r.pg_sleep FROM ROWS FROM (generate_series(30, 30)) r`, "r.pg_sleep is not allowed"},
		{`SELECT d.pg_read_file FROM current_user AS d`, "d.pg_read_file is not allowed"},
		{`SELECT l.pg_sleep FROM "r", LATERAL abs(30) l`, "l.pg_sleep is not allowed"},
		{`SELECT v.pg_sleep FROM (VALUES (30)) AS v`, "v.pg_sleep is not allowed"},
	}
	for _, tt := range tests {
		got, err := checkSelectSQL(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("checkSelectSQL(%.70q) = %q, %v; want an error about %q", tt.in, got, err, tt.why)
		}
	}
}

// queryDatastore sends the text rebuilt from the checked tokens, never the
// text it was given, and sends nothing for a query it refuses.
func TestQueryDatastoreSQLSendsCheckedText(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search_sql": okJSON(t, map[string]any{
		"fields": []any{}, "records": []any{}})})
	reg := serverRegistry(t, srv)
	given := "SELECT /* note */ \"city\" -- why\r\n, $$a;b$$ FROM \"r\"\n;"
	sent := `SELECT "city", 'a;b' FROM "r"`
	args, _ := json.Marshal(map[string]any{"sql": given})
	res, _ := call(t, reg, "queryDatastore", string(args))
	var out QueryDatastoreOutput
	mustOK(t, res, &out)
	if body := postedBody(t, srv); body["sql"] != sent || out.SQL != sent {
		t.Errorf("posted %s, output sql %q; want %q", srv.Last(t).Body, out.SQL, sent)
	}
	for _, sql := range []string{bypass, bypassWrapped, `SELECT "pg_sleep"(30)`, `SELECT * FROM "r" FOR SHARE`} {
		args, _ := json.Marshal(map[string]any{"sql": sql})
		res, _ := call(t, reg, "queryDatastore", string(args))
		mustFail(t, res, tool.CodeValidation)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the portal got %d requests, want the one accepted query", n)
	}
}

// Refusals never invite the caller to quote a function's name: quoting does
// not change which function runs.
func TestCheckSelectSQLFunctionMessage(t *testing.T) {
	_, err := checkSelectSQL(`SELECT pg_sleep(1)`)
	if err == nil || strings.Contains(err.Error(), "quote") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzCheckSelectSQL: the checker never panics; what it accepts is bounded,
// never ends in a semicolon, holds no semicolon or comment outside quotes,
// has the same tokens as the input (trailing semicolons aside), and is a
// fixed point: checking the sent text again accepts it unchanged, also with
// a trailing semicolon. No accepted query can have a second statement
// appended: whatever the accepted text leaves open, "\n; SELECT 2" after it
// is refused.
func FuzzCheckSelectSQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", `SELECT 'a;b' FROM "r;s"`, "SELECT /* ; */ 1 -- ;", `SELECT E'\';' FROM t`,
		"WITH a AS (SELECT 1) SELECT * FROM a", "SELECT 1;", "SELECT $$;$$", "SELECT 'a\\'", "select\u05d0;", "SELECT 1 -- x",
		bypass, bypassWrapped, "SELECT 'a'\n'b'", `SELECT U&'\0041' UESCAPE '!'`, "SELECT 0x1_F, 1.e5, t.*::text",
		"SELECT E'\\u00e9\\x41\\101'", "SELECT 1 @- 2 =- 3 <=> 4", "SELECT N'x' FROM t(a)", "SELECT 1.. 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := checkSelectSQL(s)
		if err != nil {
			return
		}
		if len(got) > 3*maxSQLBytes || strings.HasSuffix(got, ";") || got == "" {
			t.Fatalf("checkSelectSQL(%q) accepted %q", s, got)
		}
		in, err := lexSQL(s)
		if err != nil {
			t.Fatalf("accepted %q that does not lex: %v", s, err)
		}
		for len(in) > 0 && isPunct(in[len(in)-1], ";") {
			in = in[:len(in)-1]
		}
		out, err := lexSQL(got)
		if err != nil {
			t.Fatalf("checkSelectSQL(%q) sent %q, which does not lex: %v", s, got, err)
		}
		if len(in) != len(out) {
			t.Fatalf("checkSelectSQL(%q) sent %q: %d tokens, not %d", s, got, len(out), len(in))
		}
		for i := range in {
			if in[i].kind != out[i].kind || in[i].val != out[i].val || in[i].text != out[i].text {
				t.Fatalf("checkSelectSQL(%q) sent %q: token %d is %+v, not %+v", s, got, i, out[i], in[i])
			}
		}
		if again, err := checkSelectSQL(got + "\n;"); err != nil || again != got {
			t.Fatalf("checkSelectSQL(%q + ;) = %q, %v; want %q", got, again, err, got)
		}
		if _, err := checkSelectSQL(s + "\n; SELECT 2"); err == nil && len(s)+11 <= maxSQLBytes {
			t.Fatalf("checkSelectSQL accepted %q with a second statement", s)
		}
	})
}
