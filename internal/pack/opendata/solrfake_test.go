package opendata

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// solrFake answers package_search over a catalogue of datasets the way a
// stock CKAN portal's Solr does, closely enough to measure what query
// rewriting changes. It models, from CKAN's schema.xml and
// ckan/lib/search/query.py:
//
//   - the "text" field type: split at anything but letters, digits and
//     combining marks (WordDelimiterGraphFilter treats niqqud as letters),
//     the parts of a word also joined at index time (catenateWords),
//     lowercased, English plurals folded (the part of the Porter stemmer
//     the judged queries meet); no Hebrew analysis at all;
//   - the catch-all field text (name, title, notes, tags, groups,
//     organization, res_name, res_description copied into it) and the string
//     fields name, tags, groups, organization, res_format, id (exact values);
//   - a q without a colon goes to dismax with qf "name^4 title^4 tags^2
//     groups^2 text", tie 0.1 and mm "2<-1 5<80%"; a q with one goes to the
//     standard parser with default field text and default operator AND;
//   - fq as standard-parser filters; sort "score desc, metadata_modified desc";
//   - an undefined field answers CKAN's 409 Search Query Error.
//
// Scores are classic Lucene TF-IDF (idf, sqrt(tf), 1/sqrt(field length),
// boosts), not BM25: close in order for short documents, and the ranking
// only needs to be plausible, not identical.
type solrFake struct {
	docs []fakeDoc
	df   map[string]map[string]int // field → term → documents
}

type fakeDoc struct {
	raw      json.RawMessage
	modified string
	text     map[string][]string // analysed text fields
	str      map[string][]string // string fields, exact values
}

var (
	fakeTextFields   = []string{"title", "notes", "res_name", "res_description", "text"}
	fakeStringFields = []string{"name", "tags", "groups", "organization", "res_format", "id"}
)

// newSolrFake indexes the datasets of catalogue (a JSON array of packages).
func newSolrFake(t testing.TB, catalogue []byte) *solrFake {
	t.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal(catalogue, &raws); err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	f := &solrFake{df: map[string]map[string]int{}}
	for _, raw := range raws {
		var p struct {
			ID, Name, Title, Notes string
			Modified               string `json:"metadata_modified"`
			Organization           struct{ Name string }
			Tags, Groups           []struct{ Name string }
			Resources              []struct{ Name, Description, Format string }
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("catalogue: %v", err)
		}
		d := fakeDoc{raw: raw, modified: p.Modified, text: map[string][]string{}, str: map[string][]string{
			"id": {p.ID}, "name": {p.Name}, "organization": {p.Organization.Name},
		}}
		d.text["title"] = fakeIndex(p.Title)
		d.text["notes"] = fakeIndex(p.Notes)
		all := []string{p.Name, p.Title, p.Notes, p.Organization.Name}
		for _, tg := range p.Tags {
			d.str["tags"] = append(d.str["tags"], tg.Name)
			all = append(all, tg.Name)
		}
		for _, g := range p.Groups {
			d.str["groups"] = append(d.str["groups"], g.Name)
			all = append(all, g.Name)
		}
		for _, r := range p.Resources {
			d.text["res_name"] = append(d.text["res_name"], fakeIndex(r.Name)...)
			d.text["res_description"] = append(d.text["res_description"], fakeIndex(r.Description)...)
			d.str["res_format"] = append(d.str["res_format"], r.Format)
			all = append(all, r.Name, r.Description)
		}
		d.text["text"] = fakeIndex(strings.Join(all, " \n "))
		for field, terms := range d.text {
			f.count(field, terms)
		}
		for field, vals := range d.str {
			f.count(field, vals)
		}
		f.docs = append(f.docs, d)
	}
	return f
}

func (f *solrFake) count(field string, terms []string) {
	if f.df[field] == nil {
		f.df[field] = map[string]int{}
	}
	seen := map[string]bool{}
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			f.df[field][t]++
		}
	}
}

// fakeIndex is the "text" field type's index-time analysis: the query
// analysis, plus the join of a word's letter parts (WordDelimiterGraph's
// catenateWords), so that נדל"ן is indexed as נדל, ן and נדלן.
func fakeIndex(s string) []string {
	var out []string
	for _, chunk := range strings.Fields(s) {
		parts := fakeAnalyze(chunk)
		out = append(out, parts...)
		if len(parts) > 1 && !strings.ContainsFunc(strings.Join(parts, ""), unicode.IsDigit) {
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

// fakeAnalyze is the "text" field type's query-time analysis.
func fakeAnalyze(s string) []string {
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
	for i, w := range words {
		w = strings.ToLower(w)
		if isASCIIWord(w) && len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, "s") // Porter step 1a, the plural
		}
		words[i] = w
	}
	return words
}

func isASCIIWord(w string) bool {
	for _, r := range w {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}

// ServeHTTP answers package_search.
func (f *solrFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rows, start := 10, 0
	if v, err := strconv.Atoi(q.Get("rows")); err == nil {
		rows = min(v, 1000)
	}
	if v, err := strconv.Atoi(q.Get("start")); err == nil {
		start = v
	}
	var match func(d *fakeDoc) (bool, float64)
	query := strings.TrimSpace(q.Get("q"))
	switch {
	case query == "" || query == "*:*":
		match = func(*fakeDoc) (bool, float64) { return true, 0 }
	case !strings.Contains(query, ":"):
		match = f.dismax(query)
	default:
		n, err := parseFakeQuery(query)
		if err != nil {
			fakeSearchError(w, err)
			return
		}
		match = func(d *fakeDoc) (bool, float64) { return f.eval(d, n) }
	}
	var filter *fakeNode
	if fq := strings.TrimSpace(q.Get("fq")); fq != "" {
		n, err := parseFakeQuery(fq)
		if err != nil {
			fakeSearchError(w, err)
			return
		}
		filter = n
	}
	type hit struct {
		d     *fakeDoc
		score float64
	}
	var hits []hit
	for i := range f.docs {
		d := &f.docs[i]
		if filter != nil {
			if ok, _ := f.eval(d, filter); !ok {
				continue
			}
		}
		if ok, s := match(d); ok {
			hits = append(hits, hit{d, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(b.d.modified, a.d.modified))
	})
	results := []json.RawMessage{}
	for _, h := range hits[min(start, len(hits)):min(start+rows, len(hits))] {
		results = append(results, h.d.raw)
	}
	body, _ := json.Marshal(map[string]any{"help": "fake", "success": true, "result": map[string]any{
		"count": len(hits), "sort": "score desc, metadata_modified desc", "results": results, "search_facets": map[string]any{},
	}})
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.Write(body)
}

func fakeSearchError(w http.ResponseWriter, err error) {
	body, _ := json.Marshal(map[string]any{"help": "fake", "success": false,
		"error": map[string]any{"__type": "Search Query Error", "message": "Search Query is invalid: " + err.Error()}})
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(http.StatusConflict)
	w.Write(body)
}

// dismax is CKAN's free-text search: each whitespace-separated clause
// matches in any of the query fields, scored by the best field plus a tenth
// of the others; mm "2<-1 5<80%" says how many clauses must match.
func (f *solrFake) dismax(q string) func(*fakeDoc) (bool, float64) {
	qf := []struct {
		field string
		boost float64
	}{{"name", 4}, {"title", 4}, {"tags", 2}, {"groups", 2}, {"text", 1}}
	clauses := strings.Fields(q)
	need := len(clauses)
	switch {
	case len(clauses) > 5:
		need = len(clauses) * 8 / 10
	case len(clauses) > 2:
		need = len(clauses) - 1
	}
	return func(d *fakeDoc) (bool, float64) {
		matched, total := 0, 0.0
		for _, c := range clauses {
			var best, sum float64
			for _, fb := range qf {
				_, s := f.eval(d, &fakeNode{field: fb.field, term: c, boost: fb.boost})
				best, sum = max(best, s), sum+s
			}
			if best > 0 {
				matched++
				total += best + 0.1*(sum-best)
			}
		}
		return matched >= need && matched > 0, total
	}
}

// fakeNode is a parsed standard-parser query.
type fakeNode struct {
	// a leaf: field and term (a phrase when it analyses to several tokens)
	field, term string
	// a group: clauses joined by OR (any) or AND (all); not are excluded
	or      bool
	clauses []*fakeNode
	not     []*fakeNode
	boost   float64
}

func (f *solrFake) eval(d *fakeDoc, n *fakeNode) (bool, float64) {
	boost := n.boost
	if boost == 0 {
		boost = 1
	}
	if n.clauses == nil && n.not == nil {
		s := f.leaf(d, n.field, n.term)
		return s > 0, s * boost
	}
	for _, c := range n.not {
		if ok, _ := f.eval(d, c); ok {
			return false, 0
		}
	}
	any, total := false, 0.0
	for _, c := range n.clauses {
		ok, s := f.eval(d, c)
		if !ok && !n.or {
			return false, 0
		}
		any = any || ok
		total += s
	}
	if len(n.clauses) == 0 {
		any = true // only exclusions: everything else matches
	}
	return any, total * boost
}

// leaf scores one term (or phrase) in one field of d; 0 is no match.
func (f *solrFake) leaf(d *fakeDoc, field, term string) float64 {
	if vals, ok := d.str[field]; ok || slices.Contains(fakeStringFields, field) {
		tf := 0
		for _, v := range vals {
			if v == term {
				tf++
			}
		}
		return f.tfidf(field, term, tf, len(vals))
	}
	tokens := fakeAnalyze(term)
	if len(tokens) == 0 {
		return 0
	}
	doc := d.text[field]
	tf := 0
	for i := 0; i+len(tokens) <= len(doc); i++ {
		if slices.Equal(doc[i:i+len(tokens)], tokens) {
			tf++
		}
	}
	s := 0.0
	for _, tok := range tokens {
		s += f.tfidf(field, tok, tf, len(doc))
	}
	return s
}

func (f *solrFake) tfidf(field, term string, tf, length int) float64 {
	if tf == 0 {
		return 0
	}
	idf := 1 + math.Log(float64(len(f.docs))/float64(f.df[field][term]+1))
	return idf * idf * math.Sqrt(float64(tf)) / math.Sqrt(float64(max(length, 1)))
}

// parseFakeQuery parses the standard-parser subset that CKAN tools send:
// field:term, field:"phrase", field:(…), AND, OR, NOT, -x, +x, ^boost and
// parentheses, with AND binding tighter than OR and AND as the default.
func parseFakeQuery(q string) (*fakeNode, error) {
	p := &fakeParser{toks: fakeLex(q)}
	n, err := p.or("text")
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	return n, nil
}

type fakeParser struct {
	toks []string
	i    int
}

func (p *fakeParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *fakeParser) or(field string) (*fakeNode, error) {
	first, err := p.and(field)
	if err != nil {
		return nil, err
	}
	n := &fakeNode{or: true, clauses: []*fakeNode{first}}
	for p.peek() == "OR" {
		p.i++
		c, err := p.and(field)
		if err != nil {
			return nil, err
		}
		n.clauses = append(n.clauses, c)
	}
	if len(n.clauses) == 1 {
		return first, nil
	}
	return n, nil
}

func (p *fakeParser) and(field string) (*fakeNode, error) {
	n := &fakeNode{}
	for {
		t := p.peek()
		if t == "" || t == ")" || t == "OR" {
			break
		}
		if t == "AND" {
			p.i++
			continue
		}
		neg := false
		if t == "NOT" || t == "-" {
			neg = true
			p.i++
		} else if t == "+" {
			p.i++
		}
		c, err := p.primary(field)
		if err != nil {
			return nil, err
		}
		if neg {
			n.not = append(n.not, c)
		} else {
			n.clauses = append(n.clauses, c)
		}
	}
	if len(n.clauses) == 0 && len(n.not) == 0 {
		return nil, fmt.Errorf("empty clause")
	}
	if len(n.clauses) == 1 && len(n.not) == 0 {
		return n.clauses[0], nil
	}
	return n, nil
}

func (p *fakeParser) primary(field string) (*fakeNode, error) {
	t := p.peek()
	p.i++
	if p.peek() == ":" && t != "(" && t != ")" {
		if !slices.Contains(fakeTextFields, t) && !slices.Contains(fakeStringFields, t) {
			return nil, fmt.Errorf("undefined field %s", t)
		}
		field = t
		p.i++
		t = p.peek()
		p.i++
	}
	var n *fakeNode
	switch {
	case t == "(":
		inner, err := p.or(field)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.i++
		n = &fakeNode{clauses: []*fakeNode{inner}}
	case t == "" || t == ")" || t == ":":
		return nil, fmt.Errorf("unexpected %q", t)
	case strings.HasPrefix(t, `"`):
		n = &fakeNode{field: field, term: strings.ReplaceAll(strings.Trim(t, `"`), `\"`, `"`)}
	default:
		n = &fakeNode{field: field, term: t}
	}
	if p.peek() == "^" {
		p.i++
		b, err := strconv.ParseFloat(p.peek(), 64)
		if err != nil {
			return nil, fmt.Errorf("bad boost %q", p.peek())
		}
		p.i++
		n.boost = b
	}
	return n, nil
}

// fakeLex splits a query into ( ) : ^ - + "phrases" and words.
func fakeLex(q string) []string {
	var toks []string
	rs := []rune(q)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case strings.ContainsRune("():^", r):
			toks = append(toks, string(r))
			i++
		case (r == '-' || r == '+') && (i == 0 || unicode.IsSpace(rs[i-1]) || rs[i-1] == '('):
			toks = append(toks, string(r))
			i++
		case r == '"':
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, string(rs[i:min(j+1, len(rs))]))
			i = j + 1
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && !strings.ContainsRune("():^\"", rs[j]) {
				j++
			}
			toks = append(toks, string(rs[i:j]))
			i = j
		}
	}
	return toks
}
