package ckan

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CKAN's Solr schema indexes Hebrew with no Hebrew analysis: a word is
// whatever lies between spaces and punctuation, so "ותחבורה" (and
// transport), "התחבורה" (the transport) and "תחבורה" are three unrelated
// terms, a pointed (niqqud) spelling matches nothing, and a plural does not
// find its singular. The functions here rewrite a free-text query into one
// that asks for the forms a Hebrew speaker means, so that the portal's own
// index finds them.

// Limits of a rewritten query: Solr refuses more than maxBooleanClauses
// (1024 by default) and every variant costs a term lookup per field.
const (
	// maxHebrewVariants bounds the forms asked for per word.
	maxHebrewVariants = 24
	// maxRewriteWords bounds how many words a rewritten query holds; a
	// longer query is sent as the user wrote it.
	maxRewriteWords = 6
	// minStem is the shortest stem left after removing a prefix or a plural
	// suffix: shorter ones ("ים" from "מים") are other words.
	minStem = 3
)

// toFinal maps the five Hebrew letters that have a final form to it;
// toMedial maps back.
var (
	toFinal  = map[rune]rune{'כ': 'ך', 'מ': 'ם', 'נ': 'ן', 'פ': 'ף', 'צ': 'ץ'}
	toMedial = map[rune]rune{'ך': 'כ', 'ם': 'מ', 'ן': 'נ', 'ף': 'פ', 'ץ': 'צ'}
)

// isHebrewLetter reports whether r is one of the 27 Hebrew letters.
func isHebrewLetter(r rune) bool { return r >= 'א' && r <= 'ת' }

// isHebrewMark reports whether r is a niqqud or cantillation mark, which
// Hebrew text mostly omits and search must ignore. Maqaf (U+05BE), paseq,
// sof pasuq and nun hafukha are punctuation, not marks.
func isHebrewMark(r rune) bool {
	switch {
	case r >= 0x0591 && r <= 0x05BD, r == 0x05BF, r == 0x05C1, r == 0x05C2, r == 0x05C4, r == 0x05C5, r == 0x05C7:
		return true
	}
	return false
}

// NormalizeHebrew strips niqqud and cantillation marks and writes each
// word's last letter in its final form and the others in their medial form
// (a query typed on a keyboard without final letters, or cut from a longer
// word, still matches the index's spelling). Other text is left as is.
func NormalizeHebrew(s string) string {
	rs := make([]rune, 0, len(s))
	for _, r := range s {
		if !isHebrewMark(r) {
			rs = append(rs, r)
		}
	}
	for i, r := range rs {
		last := i == len(rs)-1 || !isHebrewLetter(rs[i+1])
		switch {
		case last && i > 0 && isHebrewLetter(rs[i-1]):
			if f, ok := toFinal[r]; ok {
				rs[i] = f
			}
		case !last:
			if m, ok := toMedial[r]; ok {
				rs[i] = m
			}
		}
	}
	return string(rs)
}

// hebrewPrefixes are the sequences of one-letter prefixes a Hebrew word can
// carry, longest first: ו (and), ש/כש (that, when), ה (the), ב ל כ מ (in,
// to, as, from), and their usual stacks. ה after ב/ל/כ is absorbed in
// writing, so "לה" is not a prefix.
var hebrewPrefixes = []string{
	"וכשה",
	"וכש", "ומה", "ושה", "ושב", "ושל", "ושמ", "כשה",
	"וה", "וב", "ול", "ומ", "וש", "וכ", "מה", "שה", "שב", "של", "שמ", "כש",
	"ה", "ו", "ב", "ל", "מ", "ש", "כ",
}

// prefixesToAdd are the prefixes asked for in front of a bare word, most
// frequent in dataset titles and descriptions first.
var prefixesToAdd = []string{"ה", "ו", "ב", "ל", "מ", "וה", "ש", "וב", "ול", "מה", "שה", "כ"}

// HebrewVariants returns the forms of one Hebrew word that a search should
// also match, the normalised word first, at most limit of them (at least
// one): the word without its prefixes, with the common prefixes, and in the
// other grammatical number where the suffix makes that cheap (ים, ות ↔ ה).
// It returns nil for a word that is not Hebrew. Variants come in order of
// how often such a form carries the meaning, so a small limit keeps the
// useful ones; some are words nobody writes, which match nothing.
func HebrewVariants(word string, limit int) []string {
	w := NormalizeHebrew(word)
	if !isHebrewWord(w) {
		return nil
	}
	limit = max(1, min(limit, maxHebrewVariants))
	out := make([]string, 0, limit)
	add := func(v string) {
		if len(out) < limit && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(w)
	if typed := StripNiqqud(word); typed != w && isHebrewWord(typed) && utf8.RuneCountInString(typed) > 1 {
		// As typed, where final letters differ: an acronym keeps its
		// last letter medial ("מעמ", from "מע\"מ") as often as not.
		add(typed)
	}
	// The word without each prefix sequence it may start with, the longest
	// sequence first: "והתחבורה" gives "תחבורה", then "התחבורה".
	bare := []string{w}
	for _, p := range hebrewPrefixes {
		if s, ok := strings.CutPrefix(w, p); ok && utf8.RuneCountInString(s) >= minStem && plausibleStem(p, s) {
			bare = append(bare, s)
		}
	}
	slices.SortStableFunc(bare[1:], func(a, b string) int {
		return utf8.RuneCountInString(a) - utf8.RuneCountInString(b)
	})
	// The other number of each bare form.
	var numbers []string
	for _, s := range bare {
		numbers = append(numbers, otherNumber(s)...)
	}
	// The bare forms, then the other numbers; then the bare forms with
	// prefixes, the commonest prefix first, so that a small limit keeps
	// "ה" and "ו" for every form rather than every prefix for one; then the
	// other numbers with prefixes.
	for _, forms := range [][]string{bare, numbers} {
		for _, s := range forms {
			add(s)
		}
	}
	for _, forms := range [][]string{bare, numbers} {
		for _, p := range prefixesToAdd {
			for _, s := range forms {
				if canPrefix(p, s) {
					add(p + s)
				}
			}
		}
	}
	return out
}

// canPrefix reports whether prefix p can stand before the form s: a form
// that starts with ו is almost always already prefixed, and ב, ל, כ absorb
// the article ה in writing (so "בהתחבורה" is not a word).
func canPrefix(p, s string) bool {
	if strings.HasPrefix(s, "ו") {
		return false
	}
	if strings.HasPrefix(s, "ה") {
		return !strings.HasSuffix(p, "ב") && !strings.HasSuffix(p, "ל") && !strings.HasSuffix(p, "כ") && !strings.HasSuffix(p, "ה")
	}
	return true
}

// otherNumber returns the cheap singular or plural forms of a stem: -ים
// and -ות off or on, the construct plural -י, -ה and -ת to -ות and back.
func otherNumber(s string) []string {
	rs := []rune(s)
	n := len(rs)
	var out []string
	switch {
	case n-2 >= minStem && strings.HasSuffix(s, "ים"):
		// "רכבים" is "רכב", and before a noun "חיסונים" is "חיסוני".
		out = append(out, NormalizeHebrew(string(rs[:n-2])), string(rs[:n-1]))
	case n >= 4 && strings.HasSuffix(s, "י"):
		// A construct plural, "מחירי (דירות)": the free form ends in ים.
		out = append(out, s+"ם")
	case n-2 >= minStem && strings.HasSuffix(s, "ות"):
		// Feminine plural: "תחנות" is "תחנה", "רכבות" is "רכבת".
		base := string(rs[:n-2])
		out = append(out, base+"ה", base+"ת")
	case strings.HasSuffix(s, "ה") && n-1 >= minStem:
		out = append(out, string(rs[:n-1])+"ות")
	case strings.HasSuffix(s, "ת") && n-1 >= minStem:
		// "ציבורית" is "ציבוריות", "רכבת" is "רכבות".
		out = append(out, string(rs[:n-1])+"ות")
	case n >= minStem:
		// Masculine: "מוסך" is "מוסכים", "מלון" is "מלונות", and before a
		// noun "מחיר" is "מחירי".
		out = append(out, unfinal(s)+"ים", unfinal(s)+"ות", unfinal(s)+"י")
	}
	return out
}

// unfinal writes a word's last letter in its medial form, before a suffix.
func unfinal(s string) string {
	rs := []rune(s)
	if m, ok := toMedial[rs[len(rs)-1]]; ok {
		rs[len(rs)-1] = m
	}
	return string(rs)
}

// isHebrewWord reports whether w is made of Hebrew letters only (after
// normalisation), at least two of them.
func isHebrewWord(w string) bool {
	n := 0
	for _, r := range w {
		if !isHebrewLetter(r) {
			return false
		}
		n++
	}
	return n >= 2
}

// queryWords splits free text into words as CKAN's Solr tokenizer does:
// at anything that is not a letter, digit or combining mark.
func queryWords(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
}

// solrSyntax are the characters that make a query Solr syntax rather than
// free text: a field, a phrase, a group, a wildcard, a boost, a must/must-not.
const solrSyntax = `:"()[]{}*?^~+\!`

// HebrewQuery is a free-text query rewritten to match Hebrew word forms.
type HebrewQuery struct {
	// Query is the Solr query to send: standard Lucene syntax with fields,
	// which CKAN passes to Solr as is rather than to dismax.
	Query string
	// Variants maps each Hebrew word of the input to the forms asked for.
	Variants map[string][]string
}

// variantBudget bounds the variants of a whole query, so that the GET URL
// stays far below the 8 KB that proxies accept (a Hebrew letter is 6 bytes
// percent-encoded).
const variantBudget = 48

// RewriteHebrewQuery rewrites a free-text query for CKAN's package_search
// so that each Hebrew word also matches its other forms (see
// [HebrewVariants]). Words are ANDed, as CKAN's default operator does. Each
// word matches in the title as typed (boosted, as CKAN's own dismax fields
// are) or, in any of its forms, anywhere in the dataset's indexed text; the
// form as typed counts twice as much as a variant.
//
// ok is false, and the query should be sent unchanged, when it has no
// Hebrew word, already uses Solr syntax (fields, phrases, operators), or has
// more than a few words.
func RewriteHebrewQuery(q string) (HebrewQuery, bool) {
	q = joinAcronyms(q)
	if strings.TrimSpace(q) == "" || strings.ContainsAny(q, solrSyntax) {
		return HebrewQuery{}, false
	}
	for _, f := range strings.Fields(q) {
		if strings.HasPrefix(f, "-") {
			return HebrewQuery{}, false // dismax's "must not": the user's own syntax
		}
	}
	words := queryWords(q)
	if len(words) == 0 || len(words) > maxRewriteWords {
		return HebrewQuery{}, false
	}
	perWord := max(8, variantBudget/len(words))
	hq := HebrewQuery{Variants: map[string][]string{}}
	groups := make([]string, 0, len(words))
	for _, w := range words {
		if isBooleanWord(w) {
			// An operator typed as a word: dismax matched it literally,
			// the rewritten query would obey it. Leave the query alone.
			return HebrewQuery{}, false
		}
		vs := HebrewVariants(w, perWord)
		if vs == nil {
			vs = []string{strings.ToLower(w)}
		} else if len(vs) > 1 || vs[0] != w {
			hq.Variants[w] = vs
		}
		alts := vs[0] + "^2"
		if len(vs) > 1 {
			alts += " OR " + strings.Join(vs[1:], " OR ")
		}
		groups = append(groups, "(title:"+vs[0]+"^4 OR text:("+alts+"))")
	}
	if len(hq.Variants) == 0 {
		return HebrewQuery{}, false
	}
	hq.Query = strings.Join(groups, " AND ")
	return hq, true
}

// joinAcronyms writes Hebrew acronyms and abbreviations without their
// gershayim or geresh (נדל"ן → נדלן, with ASCII quotes or U+05F4/U+05F3):
// CKAN's Solr indexes נדל"ן as its parts and their join, נדלן, and a quote
// left in the query would open a phrase. Only a mark between two Hebrew
// letters is a gershayim; quotes elsewhere are Solr syntax and stay.
func joinAcronyms(q string) string {
	rs := []rune(q)
	out := rs[:0:0]
	for i, r := range rs {
		if (r == '"' || r == '\'' || r == '\u05F4' || r == '\u05F3') && i > 0 && i+1 < len(rs) &&
			isHebrewLetter(rs[i-1]) && isHebrewLetter(rs[i+1]) {
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

// isBooleanWord reports whether w is one of Lucene's operator words.
func isBooleanWord(w string) bool {
	switch w {
	case "AND", "OR", "NOT", "TO":
		return true
	}
	return false
}

// StripNiqqud removes niqqud and cantillation marks, and nothing else.
func StripNiqqud(s string) string {
	return strings.Map(func(r rune) rune {
		if isHebrewMark(r) {
			return -1
		}
		return r
	}, s)
}

// HebrewSubstringForms returns broader forms of one Hebrew word for
// searches that match substrings (resource_search matches "name:term" as
// ILIKE '%term%'), broadest last: the word without the prefixes it starts
// with, without a plural or feminine ending, and with its last letter in
// medial form, as it is before a suffix ("מוסך" in "מוסכים"). Each form
// keeps at least minStem+1 letters, since a short substring matches
// unrelated words. It returns nil for a word that is not Hebrew or has no
// broader form.
func HebrewSubstringForms(word string) []string {
	w := StripNiqqud(strings.TrimSpace(word))
	if !isHebrewWord(NormalizeHebrew(w)) {
		return nil
	}
	const minLen = minStem + 1
	var out []string
	add := func(s string) {
		if s != w && utf8.RuneCountInString(s) >= minLen && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	stem := w
	for _, p := range hebrewPrefixes { // longest sequences first
		if s, ok := strings.CutPrefix(w, p); ok && utf8.RuneCountInString(s) >= minLen && plausibleStem(p, s) {
			stem = s
			break
		}
	}
	add(stem)
	cut := false
	for _, suffix := range []string{"ים", "ות", "ה"} {
		if s, ok := strings.CutSuffix(stem, suffix); ok && utf8.RuneCountInString(s) >= minLen {
			stem, cut = s, true
			add(stem)
			add(NormalizeHebrew(stem)) // "מוסכים" is "מוסך" alone
			break
		}
	}
	if !cut && !strings.HasSuffix(stem, "ים") {
		add(unfinal(stem)) // "מוסך" is "מוסכ" before a suffix
	}
	return out
}

// plausibleStem reports whether s can be what is left of a word after the
// prefix p: a word does not start with a single ו, the vowel letter that
// follows the first consonant ("מוסך", "מועצה"), so "וסך" is no stem; a
// double ו is the consonant ("הוועדה" is "וועדה" with the article).
func plausibleStem(p, s string) bool {
	return strings.HasSuffix(p, "ו") || !strings.HasPrefix(s, "ו") || strings.HasPrefix(s, "וו")
}

// prefixMatchPrefixes are the prefixes asked for in a word-start search.
var prefixMatchPrefixes = []string{"ה", "ו", "ב", "ל", "מ", "ש", "וה", "מה", "וב", "ול"}

// HebrewPrefixForms returns the forms of one Hebrew word for a search that
// matches the starts of words (a PostgreSQL tsquery "form:*", as
// queryDatastore's partialMatch sends): the word and its stems without
// prefixes, each also with its last letter in medial form ("מוסך" then
// finds "מוסכים"), and each with the common prefixes ("תחבורה" finds
// "ותחבורה"). Endings need no forms: a word start matches them. At most
// limit forms, the word first; nil for a word that is not Hebrew or is
// shorter than three letters, where prefixes would match too much.
func HebrewPrefixForms(word string, limit int) []string {
	w := StripNiqqud(word)
	if !isHebrewWord(NormalizeHebrew(w)) || utf8.RuneCountInString(w) < minStem {
		return nil
	}
	limit = max(1, min(limit, maxHebrewVariants))
	var out []string
	add := func(v string) {
		if len(out) < limit && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	bare := []string{w}
	for _, p := range hebrewPrefixes {
		if s, ok := strings.CutPrefix(w, p); ok && utf8.RuneCountInString(s) >= minStem && plausibleStem(p, s) {
			bare = append(bare, s)
		}
	}
	var forms []string
	for _, s := range bare {
		forms = append(forms, s)
		if m := unfinal(s); m != s {
			forms = append(forms, m)
		}
	}
	for _, s := range forms {
		add(s)
	}
	for _, p := range prefixMatchPrefixes {
		for _, s := range forms {
			if canPrefix(p, s) {
				add(p + s)
			}
		}
	}
	return out
}
