package ckan

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeHebrew(t *testing.T) {
	tests := []struct{ in, want string }{
		{"תַּחְבּוּרָה", "תחבורה"},           // niqqud and dagesh stripped
		{"בְּרֵאשִׁית", "בראשית"},            // shin dot, sheva
		{"תושבימ", "תושבים"},                 // medial mem at the end → final
		{"ךלב", "כלב"},                       // final kaf inside a word → medial
		{"מוסכ ציבורי", "מוסך ציבורי"},       // every word of a phrase
		{"bus-stops 2024", "bus-stops 2024"}, // other scripts untouched
		{"מ", "מ"},                           // a lone letter is not a word end
		{"תל־אביב", "תל־אביב"},               // maqaf is punctuation, kept
	}
	for _, tt := range tests {
		if got := NormalizeHebrew(tt.in); got != tt.want {
			t.Errorf("NormalizeHebrew(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHebrewVariants(t *testing.T) {
	tests := []struct {
		word     string
		want     []string // must all be present
		wantNot  []string // must be absent
		wantHead string   // the first variant
	}{
		{word: "תחבורה", wantHead: "תחבורה",
			want:    []string{"ותחבורה", "התחבורה", "לתחבורה", "בתחבורה", "והתחבורה", "תחבורות"},
			wantNot: []string{"בהתחבורה", "ותחבור"}},
		{word: "והתחבורה", wantHead: "והתחבורה",
			want:    []string{"תחבורה", "התחבורה", "לתחבורה"},
			wantNot: []string{"הוהתחבורה", "ווהתחבורה"}},
		{word: "תַּחְבּוּרָה", wantHead: "תחבורה", want: []string{"ותחבורה"}},
		{word: "תחנות", wantHead: "תחנות", want: []string{"תחנה", "התחנה", "ותחנות"}},
		{word: "רכבים", wantHead: "רכבים", want: []string{"רכב", "הרכב"}},
		{word: "מוסך", wantHead: "מוסך", want: []string{"מוסכים", "המוסך"}, wantNot: []string{"וסך", "הוסך"}},
		{word: "מחירי", wantHead: "מחירי", want: []string{"מחירים", "המחירי"}},
		{word: "תושבימ", wantHead: "תושבים", want: []string{"תושב"}},
		// Stripping would leave two letters: "מים" (water) is not "ים" (sea).
		{word: "מים", wantHead: "מים", wantNot: []string{"ים", "הים"}},
	}
	for _, tt := range tests {
		got := HebrewVariants(tt.word, maxHebrewVariants)
		if len(got) == 0 || got[0] != tt.wantHead {
			t.Errorf("HebrewVariants(%q) = %q, want %q first", tt.word, got, tt.wantHead)
			continue
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("HebrewVariants(%q) lacks %q: %q", tt.word, w, got)
			}
		}
		for _, w := range tt.wantNot {
			if slices.Contains(got, w) {
				t.Errorf("HebrewVariants(%q) has %q: %q", tt.word, w, got)
			}
		}
		if len(got) > maxHebrewVariants {
			t.Errorf("HebrewVariants(%q) gave %d variants, limit %d", tt.word, len(got), maxHebrewVariants)
		}
	}
	for _, w := range []string{"bus", "2024", "א", "תחבורה2"} {
		if got := HebrewVariants(w, 10); got != nil {
			t.Errorf("HebrewVariants(%q) = %q, want nil for a non-Hebrew word", w, got)
		}
	}
	if got := HebrewVariants("תחבורה", 3); len(got) != 3 || got[0] != "תחבורה" {
		t.Errorf("limit 3 gave %q", got)
	}
}

func TestRewriteHebrewQuery(t *testing.T) {
	tests := []struct {
		q      string
		ok     bool
		has    []string
		hasNot []string
	}{
		{q: "תחבורה", ok: true, has: []string{"(title:תחבורה^4 OR text:(תחבורה^2 OR ", " OR ותחבורה"}},
		{q: "תחנות דלק", ok: true, has: []string{") AND (title:דלק^4 OR text:(דלק^2", "ותחנות", "הדלק"}},
		// Mixed scripts: the English word is kept as one term.
		{q: "COVID חיסונים", ok: true, has: []string{"(title:covid^4 OR text:(covid^2))", "חיסון"}},
		// Solr syntax, English only, operators, too many words: unchanged.
		{q: "title:תחבורה"},
		{q: `"תחבורה ציבורית"`},
		{q: "תחבורה*"},
		{q: "transport"},
		{q: "תחבורה OR רכבת"},
		{q: "תחבורה -רכבת"},
		{q: "תל-אביב", ok: true, has: []string{"(title:תל^4 OR text:(תל^2", ") AND (title:אביב^4"}},
		// Gershayim join an acronym; the index holds the joined form.
		{q: `עסקאות בנדל"ן`, ok: true, has: []string{"(title:בנדלן^4 OR text:(בנדלן^2 OR ", " OR נדלן"}},
		{q: "מע״מ", ok: true, has: []string{"מעם", "מעמ"}},
		{q: `"נדל"ן"`}, // a phrase around it stays Solr syntax
		{q: "א ב ג ד ה ו ז ח"},
		{q: "   "},
	}
	for _, tt := range tests {
		got, ok := RewriteHebrewQuery(tt.q)
		if ok != tt.ok {
			t.Errorf("RewriteHebrewQuery(%q) ok = %v, want %v (%q)", tt.q, ok, tt.ok, got.Query)
			continue
		}
		if !ok {
			continue
		}
		for _, s := range tt.has {
			if !strings.Contains(got.Query, s) {
				t.Errorf("RewriteHebrewQuery(%q) = %q, lacks %q", tt.q, got.Query, s)
			}
		}
		if !strings.Contains(got.Query, ":") {
			t.Errorf("rewritten query %q has no field: CKAN would send it to dismax", got.Query)
		}
	}
	// The budget keeps a long query's URL small.
	got, ok := RewriteHebrewQuery("תחבורה ציבורית קווי אוטובוס תחנות רכבת")
	if !ok {
		t.Fatal("six Hebrew words not rewritten")
	}
	if n := strings.Count(got.Query, " OR "); n > 2*variantBudget {
		t.Errorf("%d alternatives for six words, budget %d", n, variantBudget)
	}
	if enc := len(got.Query) * 3; enc > 8000 {
		t.Errorf("rewritten query percent-encodes to ~%d bytes", enc)
	}
}

// FuzzRewriteHebrewQuery: any input either stays as is or becomes a query
// of balanced groups, in valid UTF-8, within the length budget, with no
// character that could open Solr syntax the rewrite did not write.
func FuzzRewriteHebrewQuery(f *testing.F) {
	for _, s := range []string{"תחבורה", "תַּחְבּוּרָה ציבורית", "title:x", "מים", "a OR b", "ךךך םםם", "\xff\xfe", "ו\u05b0ה"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		hq, ok := RewriteHebrewQuery(q)
		if !ok {
			if hq.Query != "" {
				t.Fatalf("not rewritten but Query = %q", hq.Query)
			}
			return
		}
		if !utf8.ValidString(hq.Query) {
			t.Fatalf("invalid UTF-8 in %q", hq.Query)
		}
		if strings.Count(hq.Query, "(") != strings.Count(hq.Query, ")") {
			t.Fatalf("unbalanced groups in %q", hq.Query)
		}
		if strings.ContainsAny(hq.Query, `"*?[]{}~+\!`) {
			t.Fatalf("Solr syntax leaked into %q", hq.Query)
		}
		if len(hq.Query) > 64<<10 {
			t.Fatalf("rewritten query is %d bytes", len(hq.Query))
		}
		_ = NormalizeHebrew(q)
	})
}

// FuzzHebrewForms: the per-word form functions never panic, return bounded
// lists of Hebrew words, and never return the empty string.
func FuzzHebrewForms(f *testing.F) {
	for _, s := range []string{"תחבורה", "ו", "וכשה", "מים", "ךךך", "הוועדה", "מוסכים", "\u05b0", "ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		lists := [][]string{HebrewVariants(w, maxHebrewVariants), HebrewSubstringForms(w), HebrewPrefixForms(w, maxHebrewVariants)}
		for _, l := range lists {
			if len(l) > maxHebrewVariants {
				t.Fatalf("%q: %d forms", w, len(l))
			}
			for _, v := range l {
				if v == "" || !isHebrewWord(NormalizeHebrew(v)) {
					t.Fatalf("%q: form %q", w, v)
				}
			}
		}
	})
}

func TestHebrewSubstringForms(t *testing.T) {
	tests := []struct {
		word string
		want []string
	}{
		{"לתחבורה", []string{"תחבורה", "תחבור"}},
		{"תחנות", nil}, // "תחנ" is three letters: too short a substring
		{"מוסך", []string{"מוסכ"}},
		{"מוסכים", []string{"מוסכ", "מוסך"}}, // not "וסכים": מ is part of the word
		{"המוסכים", []string{"מוסכים", "מוסכ", "מוסך"}},
		{"הוועדה", []string{"וועדה", "וועד"}},
		{"תַּקְצִיב", nil}, // niqqud is the caller's to strip (StripNiqqud)
		{"ספריות", []string{"ספרי"}},
		{"transport", nil},
		{"מים", nil},
	}
	for _, tt := range tests {
		got := HebrewSubstringForms(tt.word)
		if len(got) != len(tt.want) || (len(got) > 0 && !slices.Equal(got, tt.want)) {
			t.Errorf("HebrewSubstringForms(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestHebrewPrefixForms(t *testing.T) {
	tests := []struct {
		word    string
		want    []string // present
		wantNot []string
	}{
		{"תחבורה", []string{"תחבורה", "ותחבורה", "התחבורה", "לתחבורה", "והתחבורה"}, []string{"בהתחבורה"}},
		{"מוסך", []string{"מוסך", "מוסכ", "המוסכ", "במוסך"}, []string{"וסך"}},
		{"לתַּחְבּוּרָה", []string{"לתחבורה", "תחבורה", "ותחבורה"}, nil},
	}
	for _, tt := range tests {
		got := HebrewPrefixForms(tt.word, maxHebrewVariants)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("HebrewPrefixForms(%q) lacks %q: %q", tt.word, w, got)
			}
		}
		for _, w := range tt.wantNot {
			if slices.Contains(got, w) {
				t.Errorf("HebrewPrefixForms(%q) has %q", tt.word, w)
			}
		}
	}
	for _, w := range []string{"תל", "budget", "12"} {
		if got := HebrewPrefixForms(w, 10); got != nil {
			t.Errorf("HebrewPrefixForms(%q) = %q, want nil", w, got)
		}
	}
}
