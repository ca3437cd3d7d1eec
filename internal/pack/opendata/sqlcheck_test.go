package opendata

import (
	"strings"
	"testing"
)

func TestCheckSelectSQLAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT * FROM "5c78e9fa-c2e2-4771-93ff-7f400a12f7ba" LIMIT 5`, `SELECT * FROM "5c78e9fa-c2e2-4771-93ff-7f400a12f7ba" LIMIT 5`},
		{"  select 1;  ", "select 1"},
		{"SELECT 1;;\n-- done\n", "SELECT 1"},
		{`WITH t AS (SELECT "עיר", count(*) AS n FROM "r" GROUP BY 1) SELECT * FROM t ORDER BY n DESC`, ""},
		// Semicolons and key words inside literals, identifiers and comments are text.
		{`SELECT 'a; DROP TABLE x' AS "delete; insert", 'it''s' FROM "r" -- ; drop`, `SELECT 'a; DROP TABLE x' AS "delete; insert", 'it''s' FROM "r"`},
		{"SELECT /* outer /* nested; */ still; */ 1", ""},
		{`SELECT E'it\'s; \\ fine' FROM "r"`, ""},
		{`SELECT "update" FROM "r" WHERE "שם" = 'חיפה'`, ""},
		{`SELECT שם FROM "r" WHERE סמל > 4000`, ""},
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
			t.Errorf("checkSelectSQL(%q) = %q, want %q", tt.in, got, tt.want)
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
		{`SELECT pg_sleep(100)`, "PG_SLEEP is not allowed"},
		{`SELECT * FROM "r" FOR UPDATE`, "UPDATE is not allowed"},
		{`SELECT set_config('x', 'y', false)`, "SET_CONFIG is not allowed"},
		{`SELECT $$; DROP TABLE x; $$`, "dollar"},
		{`SELECT $1`, "dollar"},
		// With standard_conforming_strings off the portal would read 'a\' , '
		// as one literal and run the DROP: backslashes in plain strings are refused.
		{`SELECT 'a\' , '; DROP TABLE t; --'`, "backslash"},
		{`SELECT 1 \g`, "backslash"},
		{`SELECT 'unterminated`, "unterminated string"},
		{`SELECT "unterminated`, "unterminated quoted identifier"},
		{`SELECT E'a\'`, "unterminated string"},
		{"SELECT 1 /* /* */", "unterminated /*"},
		{"SELECT '\x00'", "NUL"},
		{"SELECT '\xff'", "UTF-8"},
		{"SELECT " + strings.Repeat("1+", maxSQLBytes), "at most"},
		{"-- only a comment", "is empty"},
	}
	for _, tt := range tests {
		_, err := checkSelectSQL(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("checkSelectSQL(%.60q) = %v, want an error about %q", tt.in, err, tt.why)
		}
	}
}

// FuzzCheckSelectSQL: the checker never panics, what it accepts is bounded
// and never ends in a semicolon, and no accepted query can have a second
// statement appended: whatever the accepted text leaves open (a literal, a
// comment, a quoted identifier), "\n; SELECT 2" after it is refused, while
// a bare trailing semicolon changes nothing.
func FuzzCheckSelectSQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", `SELECT 'a;b' FROM "r;s"`, "SELECT /* ; */ 1 -- ;", `SELECT E'\';' FROM t`,
		"WITH a AS (SELECT 1) SELECT * FROM a", "SELECT 1;", "SELECT $$;$$", "SELECT 'a\\'", "select\u05d0;", "SELECT 1 -- x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := checkSelectSQL(s)
		if err != nil {
			return
		}
		if len(got) > maxSQLBytes || strings.HasSuffix(got, ";") || got == "" {
			t.Fatalf("checkSelectSQL(%q) accepted %q", s, got)
		}
		if _, err := checkSelectSQL(s + "\n; SELECT 2"); err == nil && len(s)+11 <= maxSQLBytes {
			t.Fatalf("checkSelectSQL accepted %q with a second statement", s)
		}
		if again, err := checkSelectSQL(got + "\n;"); len(got)+2 <= maxSQLBytes && (err != nil || again != got) {
			t.Fatalf("checkSelectSQL(%q + ;) = %q, %v; want %q", got, again, err, got)
		}
	})
}
