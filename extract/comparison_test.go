package extract

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	maincontent "github.com/toolport/toolport/extract/internal/content"
	"github.com/toolport/toolport/internal/testexec"
)

// The wider development set: the 960-odd pages of trafilatura's own
// evaluation, with their judgements, as go-trafilatura v1.12.2's module
// ships them (test-files/comparison and test-files/mock for the pages,
// scripts/comparison/data.go for what each page's extraction must and must
// not contain). The module is a test dependency already; its 133 MB of
// pages are read from the module cache rather than copied into the
// repository (testdata/trafilatura-comparison/SOURCES.md).
//
// The metric is the comparison script's (scripts/comparison/content.go,
// evaluateEntry and calculatePerformance), reproduced: every judged "with"
// snippet found in the extracted text is a true positive, missing a false
// negative; every "without" snippet found is a false positive, missing a
// true negative; precision, recall and F are over the counts summed across
// pages (micro-averaged), and a page that fails counts all its "with"
// snippets as missed.
//
// The pages are split into comparisonFolds folds by a hash of the file name
// (comparisonFold), fixed before any tuning: the table is committed in
// testdata/trafilatura-comparison/folds.tsv and TestComparisonFolds holds it
// to the hash.

const comparisonFolds = 5

// comparisonFold is the fold of a page of the comparison set.
func comparisonFold(file string) int {
	h := fnv.New32a()
	h.Write([]byte(file))
	return int(h.Sum32() % comparisonFolds)
}

// cmpPage is one judged page.
type cmpPage struct {
	file          string
	url           *url.URL
	html          []byte // UTF-8 (DecodeHTML of the file)
	with, without []string
	fold          int
}

// cmpCounts are the comparison script's four counts.
type cmpCounts struct{ tp, fn, fp, tn int }

func (c *cmpCounts) add(o cmpCounts) { c.tp += o.tp; c.fn += o.fn; c.fp += o.fp; c.tn += o.tn }

// perf is the script's calculatePerformance: precision, recall, accuracy
// and F1 of summed counts.
func (c cmpCounts) perf() (p, r, acc, f float64) {
	tp, fn, fp, tn := float64(c.tp), float64(c.fn), float64(c.fp), float64(c.tn)
	if tp+fp > 0 {
		p = tp / (tp + fp)
	}
	if tp+fn > 0 {
		r = tp / (tp + fn)
	}
	if tp+fn+fp+tn > 0 {
		acc = (tp + tn) / (tp + fn + fp + tn)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, acc, f
}

// evaluateEntry is the script's evaluateEntry.
func evaluateEntry(with, without []string, result string) cmpCounts {
	var c cmpCounts
	if result == "" {
		c.fn, c.tn = len(with), len(without)
		return c
	}
	for _, s := range with {
		if strings.Contains(result, s) {
			c.tp++
		} else {
			c.fn++
		}
	}
	for _, s := range without {
		if strings.Contains(result, s) {
			c.fp++
		} else {
			c.tn++
		}
	}
	return c
}

// comparisonModuleDir finds go-trafilatura's module directory through the
// go command (the module cache), downloading it when it is missing.
func comparisonModuleDir(tb testing.TB) string {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		testexec.Missing(tb, "go", "install Go to locate go-trafilatura's module (its comparison pages)", err)
	}
	out, err := exec.Command(goBin, "mod", "download", "-json", "github.com/markusmobius/go-trafilatura").Output()
	if err != nil {
		testexec.Missing(tb, "go-trafilatura's module", "go mod download github.com/markusmobius/go-trafilatura", err)
	}
	var dir string
	for line := range strings.Lines(string(out)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == `"Dir"` {
			dir, _ = strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(v), ","))
		}
	}
	if dir == "" {
		testexec.Missing(tb, "go-trafilatura's module directory", "go mod download github.com/markusmobius/go-trafilatura", errors.New("go mod download printed no Dir"))
	}
	return dir
}

// cmpEntry is one entry of data.go: a page's file and its snippets.
type cmpEntry struct {
	url, file     string
	with, without []string
}

// parseComparisonData reads data.go's comparisonData map with go/parser:
// the judgements are Go source, and parsing it reads them exactly as the
// script compiles them.
func parseComparisonData(src []byte) ([]cmpEntry, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "data.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse data.go: %w", err)
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "comparisonData" || len(vs.Values) != 1 {
			return lit == nil
		}
		lit, _ = vs.Values[0].(*ast.CompositeLit)
		return false
	})
	if lit == nil {
		return nil, errors.New("data.go: no comparisonData map")
	}
	str := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	strs := func(e ast.Expr) ([]string, error) {
		cl, ok := e.(*ast.CompositeLit)
		if !ok {
			return nil, errors.New("not a []string literal")
		}
		var out []string
		for _, el := range cl.Elts {
			s, ok := str(el)
			if !ok {
				return nil, errors.New("not a string literal")
			}
			out = append(out, s)
		}
		return out, nil
	}
	var entries []cmpEntry
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, errors.New("data.go: map element is not key: value")
		}
		u, ok := str(kv.Key)
		if !ok {
			return nil, errors.New("data.go: map key is not a string")
		}
		val, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("data.go: %s: value is not a literal", u)
		}
		e := cmpEntry{url: u}
		for _, fe := range val.Elts {
			fkv, ok := fe.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			id, _ := fkv.Key.(*ast.Ident)
			if id == nil {
				continue
			}
			var err error
			switch id.Name {
			case "File":
				e.file, _ = str(fkv.Value)
			case "With":
				e.with, err = strs(fkv.Value)
			case "Without":
				e.without, err = strs(fkv.Value)
			}
			if err != nil {
				return nil, fmt.Errorf("data.go: %s: %s: %w", u, id.Name, err)
			}
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b cmpEntry) int { return cmp.Compare(a.file, b.file) })
	return entries, nil
}

// loadComparison reads the judged pages: those of data.go whose file is in
// the module and whose URL parses (the script skips the others too).
func loadComparison(tb testing.TB) []cmpPage {
	tb.Helper()
	dir := comparisonModuleDir(tb)
	src, err := os.ReadFile(filepath.Join(dir, "scripts", "comparison", "data.go"))
	if err != nil {
		tb.Fatalf("go-trafilatura module without its judgements: %v", err)
	}
	entries, err := parseComparisonData(src)
	if err != nil {
		tb.Fatal(err)
	}
	var pages []cmpPage
	for _, e := range entries {
		u, err := url.ParseRequestURI(e.url)
		if err != nil {
			continue
		}
		var raw []byte
		for _, sub := range []string{"comparison", "mock"} {
			if raw, err = os.ReadFile(filepath.Join(dir, "test-files", sub, e.file)); err == nil {
				break
			}
		}
		if err != nil {
			continue
		}
		body, err := DecodeHTML(raw, "")
		if err != nil {
			tb.Fatalf("%s: %v", e.file, err)
		}
		pages = append(pages, cmpPage{file: e.file, url: u, html: body, with: e.with, without: e.without, fold: comparisonFold(e.file)})
	}
	if len(pages) < 900 {
		tb.Fatalf("comparison set: %d pages found in %s, want the ~960 judged", len(pages), dir)
	}
	return pages
}

// cmpExtractor is one extractor under comparison: it returns the text the
// snippets are looked for in, and whether it found no content at all.
type cmpExtractor struct {
	name string
	run  func(p cmpPage) (text string, err error)
}

// ownExtractor is Toolport's extractor with finder f: its Markdown, read as
// text (plainText).
func ownExtractor(name string, f finder) cmpExtractor {
	return cmpExtractor{name: name, run: func(p cmpPage) (string, error) {
		doc, err := extractWith(context.Background(), p.html, p.url, Options{}, f)
		if err != nil {
			return "", err
		}
		return plainText(doc.Markdown), nil
	}}
}

// peerExtractors are the peers as the comparison script runs them: go-
// trafilatura with the script's options and its ContentText, with and
// without its fallback, and readability's text (readeck's go-readability
// v2, the fork the project's tests use, in place of the script's
// go-shiori/go-readability).
func peerExtractors() []cmpExtractor {
	traf := func(fallback bool) func(cmpPage) (string, error) {
		return func(p cmpPage) (string, error) {
			root, err := html.Parse(bytes.NewReader(p.html))
			if err != nil {
				return "", err
			}
			res, err := trafilatura.ExtractDocument(root, trafilatura.Options{
				EnableFallback: fallback, ExcludeComments: true, ExcludeTables: false,
				Focus: trafilatura.Balanced, OriginalURL: p.url, HtmlDateMode: trafilatura.Disabled,
			})
			if err != nil {
				return "", err
			}
			return res.ContentText, nil
		}
	}
	return []cmpExtractor{
		{name: "go-trafilatura", run: traf(false)},
		{name: "go-trafilatura+fallback", run: traf(true)},
		{name: "go-readability", run: func(p cmpPage) (string, error) {
			root, err := html.Parse(bytes.NewReader(p.html))
			if err != nil {
				return "", err
			}
			rp := readability.NewParser()
			art, err := rp.ParseDocument(root, p.url)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			if err := art.RenderText(&b); err != nil {
				return "", err
			}
			return b.String(), nil
		}},
	}
}

// cmpResult is one extractor's outcome on every page.
type cmpResult struct {
	counts []cmpCounts // by page index
	empty  []bool      // no text at all
}

// runComparison runs ex over pages on GOMAXPROCS workers. A panic inside an
// extractor counts as a failure of that page, as the script's errors do.
func runComparison(pages []cmpPage, ex cmpExtractor) cmpResult {
	res := cmpResult{counts: make([]cmpCounts, len(pages)), empty: make([]bool, len(pages))}
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				p := pages[i]
				text, err := func() (text string, err error) {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					return ex.run(p)
				}()
				if err != nil {
					text = ""
				}
				res.counts[i] = evaluateEntry(p.with, p.without, text)
				res.empty[i] = strings.TrimSpace(text) == ""
			}
		})
	}
	for i := range pages {
		work <- i
	}
	close(work)
	wg.Wait()
	return res
}

// sum adds up the counts of the pages for which keep is true.
func (r cmpResult) sum(pages []cmpPage, keep func(cmpPage) bool) cmpCounts {
	var c cmpCounts
	for i, p := range pages {
		if keep(p) {
			c.add(r.counts[i])
		}
	}
	return c
}

func inFold(k int) func(cmpPage) bool    { return func(p cmpPage) bool { return p.fold == k } }
func outOfFold(k int) func(cmpPage) bool { return func(p cmpPage) bool { return p.fold != k } }
func allPages(cmpPage) bool              { return true }

// plainText reads Markdown as the text a reader sees, for looking snippets
// up in it as the comparison script looks them up in its peers' plain text:
// images and link targets dropped, link text, emphasis and code marks and
// block prefixes (headings, quotes, list bullets, table pipes) removed,
// backslash escapes undone, and white space runs within a line collapsed.
func plainText(md string) string {
	md = dropTargets(stripImages(md))
	var out strings.Builder
	fence := false
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if !fence {
			t = blockPrefix(t)
			t = inlineMarks(t)
			if isTableRule(t) {
				continue
			}
		}
		out.WriteString(strings.Join(strings.Fields(t), " "))
		out.WriteByte('\n')
	}
	return out.String()
}

// blockPrefix strips a line's Markdown block markers.
func blockPrefix(t string) string {
	for {
		switch {
		case strings.HasPrefix(t, "#"):
			t = strings.TrimLeft(t, "#")
		case strings.HasPrefix(t, ">"):
			t = t[1:]
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ "):
			t = t[2:]
		default:
			// An ordered list item: digits, then ". " or ") ".
			i := 0
			for i < len(t) && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
				t = t[i+2:]
				continue
			}
			return strings.TrimSpace(t)
		}
		t = strings.TrimSpace(t)
	}
}

// inlineMarks removes emphasis, code and link-text marks and undoes
// backslash escapes; table pipes become spaces.
func inlineMarks(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '\\' && i+1 < len(t) && t[i+1] < utf8.RuneSelf && isASCIIPunct(t[i+1]):
			b.WriteByte(t[i+1])
			i += 2
			continue
		case c == '*' || c == '`' || c == '[' || c == ']':
		case c == '|':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isTableRule tells a table's header rule, "--- ---" once pipes are gone.
func isTableRule(t string) bool {
	t = strings.TrimSpace(t)
	return t != "" && strings.Trim(t, "-: ") == ""
}

func TestPlainText(t *testing.T) {
	tests := []struct{ name, md, want string }{
		{"paragraph", "Some  text here.", "Some text here.\n"},
		{"heading and emphasis", "## A **bold** and *em* title", "A bold and em title\n"},
		{"link text kept, target dropped", "see [the docs](https://x.example/a) now", "see the docs now\n"},
		{"bare address kept", "<http://www.openpetition.de>", "<http://www.openpetition.de>\n"},
		{"image dropped", "a ![pic](/i.png) b", "a b\n"},
		{"escapes undone", `1\. \*not\* \[x\] a\_b`, "1. *not* [x] a_b\n"},
		{"list items", "- one\n- two\n1. three", "one\ntwo\nthree\n"},
		{"quote", "> quoted words", "quoted words\n"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "a b\n1 2\n"},
		{"code kept verbatim", "```go\nx := *p // [a]\n```", "x := *p // [a]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainText(tt.md); got != tt.want {
				t.Errorf("plainText(%q) = %q, want %q", tt.md, got, tt.want)
			}
		})
	}
}

func TestEvaluateEntry(t *testing.T) {
	tests := []struct {
		name          string
		with, without []string
		text          string
		want          cmpCounts
	}{
		{"all found, none unwanted", []string{"a b", "c"}, []string{"x"}, "a b c", cmpCounts{tp: 2, tn: 1}},
		{"one missed, one unwanted", []string{"a b", "z"}, []string{"c"}, "a b c", cmpCounts{tp: 1, fn: 1, fp: 1}},
		{"empty result misses all", []string{"a"}, []string{"b", "c"}, "", cmpCounts{fn: 1, tn: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evaluateEntry(tt.with, tt.without, tt.text); got != tt.want {
				t.Errorf("evaluateEntry = %+v, want %+v", got, tt.want)
			}
		})
	}
	p, r, acc, f := cmpCounts{tp: 3, fn: 1, fp: 1, tn: 5}.perf()
	if p != 0.75 || r != 0.75 || acc != 0.8 || f != 0.75 {
		t.Errorf("perf = %v %v %v %v, want 0.75 0.75 0.8 0.75", p, r, acc, f)
	}
}

func TestParseComparisonData(t *testing.T) {
	src := []byte(`package main
var comparisonData = map[string]ComparisonEntry{
	"https://b.example/": {File: "b.html", With: []string{"x", "y"}, Without: []string{"z"}},
	"https://a.example/": {
		File:    "a.html",
		Title:   "ignored",
		With:    []string{"w"},
	},
}`)
	got, err := parseComparisonData(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []cmpEntry{
		{url: "https://a.example/", file: "a.html", with: []string{"w"}},
		{url: "https://b.example/", file: "b.html", with: []string{"x", "y"}, without: []string{"z"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseComparisonData = %+v, want %+v", got, want)
	}
	if _, err := parseComparisonData([]byte("package main\nvar other = 1")); err == nil {
		t.Error("a file without comparisonData: no error")
	}
}

// foldsFile is the committed fold table: one "file<TAB>fold" line per page.
var foldsFile = filepath.Join("testdata", "trafilatura-comparison", "folds.tsv")

// TestComparisonFolds holds the committed fold table to the hash it was
// made with, so that the folds cannot drift to suit a change, and checks
// that the folds are of similar size. EXTRACT_WRITE_FOLDS=1 writes the
// table from the module's pages (done once, before any tuning).
func TestComparisonFolds(t *testing.T) {
	if os.Getenv("EXTRACT_WRITE_FOLDS") != "" {
		pages := loadComparison(t)
		var b strings.Builder
		b.WriteString("# file\tfold (fnv-1a 32 of the file name, mod 5); see comparison_test.go\n")
		for _, p := range pages {
			fmt.Fprintf(&b, "%s\t%d\n", p.file, p.fold)
		}
		if err := os.WriteFile(foldsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(foldsFile)
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, comparisonFolds)
	n := 0
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		file, fs, ok := strings.Cut(line, "\t")
		k, err := strconv.Atoi(fs)
		if !ok || err != nil || k < 0 || k >= comparisonFolds {
			t.Fatalf("folds.tsv: bad line %q", line)
		}
		if want := comparisonFold(file); k != want {
			t.Errorf("folds.tsv: %s in fold %d, the hash says %d", file, k, want)
		}
		sizes[k]++
		n++
	}
	if n < 900 {
		t.Errorf("folds.tsv lists %d pages, want the ~960 judged", n)
	}
	for k, s := range sizes {
		if s < n/comparisonFolds*3/4 {
			t.Errorf("fold %d has %d of %d pages: too unbalanced", k, s, n)
		}
	}
	t.Logf("fold sizes %v", sizes)
}

// comparisonEnabled skips the slow comparison runs unless asked for.
func comparisonEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("EXTRACT_COMPARISON") == "" {
		t.Skip("set EXTRACT_COMPARISON=1 to score the extractors on trafilatura's 960 judged pages (minutes)")
	}
}

// TestTrafilaturaComparison scores Toolport's extractor and its peers on
// trafilatura's evaluation set, per fold and overall, and lists the pages
// where Toolport finds no content but a peer finds judged text. With
// EXTRACT_COMPARISON_OWN_ONLY=1 the peers are not run.
func TestTrafilaturaComparison(t *testing.T) {
	comparisonEnabled(t)
	pages := loadComparison(t)
	exs := []cmpExtractor{ownExtractor("toolport", own)}
	if os.Getenv("EXTRACT_COMPARISON_OWN_ONLY") == "" {
		exs = append(exs, peerExtractors()...)
	}
	results := make([]cmpResult, len(exs))
	for i, ex := range exs {
		results[i] = runComparison(pages, ex)
	}
	t.Logf("pages: %d", len(pages))
	t.Logf("| extractor | fold 0 F | fold 1 F | fold 2 F | fold 3 F | fold 4 F | all P | all R | all F | no content |")
	for i, ex := range exs {
		line := "| " + ex.name + " |"
		for k := range comparisonFolds {
			_, _, _, f := results[i].sum(pages, inFold(k)).perf()
			line += fmt.Sprintf(" %.3f |", f)
		}
		p, r, _, f := results[i].sum(pages, allPages).perf()
		empty := 0
		for _, e := range results[i].empty {
			if e {
				empty++
			}
		}
		line += fmt.Sprintf(" %.3f | %.3f | %.3f | %d |", p, r, f, empty)
		t.Log(line)
	}
	// Pages where Toolport returns nothing but a peer finds judged text.
	lost := 0
	for pi, p := range pages {
		if !results[0].empty[pi] {
			continue
		}
		for i := 1; i < len(exs); i++ {
			if results[i].counts[pi].tp > 0 {
				t.Logf("no content from toolport, %s finds %d of %d: %s", exs[i].name, results[i].counts[pi].tp, len(p.with), p.file)
				lost++
				break
			}
		}
	}
	if len(exs) > 1 && lost > 0 {
		t.Errorf("%d pages return no content where a peer finds judged text", lost)
	}
	if os.Getenv("EXTRACT_PER_PAGE") != "" {
		for pi, p := range pages {
			c := results[0].counts[pi]
			if c.fn > 0 || c.fp > 0 {
				t.Logf("  fold %d %s tp=%d fn=%d fp=%d", p.fold, p.file, c.tp, c.fn, c.fp)
			}
		}
	}
}

// cvMaxPrecisionLoss is how much precision a candidate may cost.
const cvMaxPrecisionLoss = 0.005

// cvCandidate is a mechanism tried by cross-validation: set applies one of
// its settings (grid) on top of the tuning kept so far.
type cvCandidate struct {
	name string
	grid []int
	set  func(maincontent.Tuning, int) maincontent.Tuning
}

// cvVeto says why a candidate, by name, is not kept whatever its figures
// (a decision in docs/decisions.md), or "": it is still scored, so that
// the table shows what the decision costs here, and the tuning a run
// keeps stays the one Find ships.
func cvVeto(name string) string {
	if name == cvStandfirst {
		return "the 91-page set's judgements leave standfirsts out (its F1 falls under its floor)"
	}
	return ""
}

const cvStandfirst = "sentence-long headings before the first paragraph (a standfirst) kept"

// cvCandidates are tried in this order, each on top of those kept before it.
func cvCandidates() []cvCandidate {
	return []cvCandidate{
		{"restore what pruning or trimming empties", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.Restore = true; return t }},
		{"named boilerplate kept when it holds N runes of prose", []int{150, 300, 600, 1200}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.NamedProse = v; return t }},
		{"named boilerplate kept when prose is N% of its text", []int{30, 50, 70, 90}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.NamedShare = v; return t }},
		{"named boilerplate kept when it holds N% of the page's prose", []int{30, 50, 70}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.PageProse = v; return t }},
		{"siblings of the best container that are mostly prose join it", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.SiblingProse = true; return t }},
		{"labels kept as text", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.Labels = true; return t }},
		{"named boilerplate kept when it holds N runes of text, links <= 0.3", []int{300, 600, 1200, 2500}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.NamedText = v; return t }},
		{"boilerplate name lowers a score only with boilerplate content", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.NamePenalty = true; return t }},
		{"page of at most N runes returned whole", []int{400, 800, 1500, 3000, 6000}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ShortPage = v; return t }},
		{"what precedes a code block opening the content is kept", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.CodeLead = true; return t }},
		{"content of at most N runes kept without lead trimming", []int{300, 600, 1200}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ShortContent = v; return t }},
		{"pruned page returned when its text is N% of the chosen content's", []int{200, 300, 400, 500, 800}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Fallback = v; return t }},
		{"nearest prose paragraph before the content joins it when fewer than N runes lie between", []int{1, 100, 200, 400}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Lead = v; return t }},
		{"fallback takes the content's lowest ancestor holding N% of the page's text", []int{40, 60, 80}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.FallbackShare = v; return t }},
		{"lead's container branches off at most N levels above the content (3 before)", []int{2, 5, 8}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.LeadLevels = v; return t }},
		{"lead may be a <div> of text or a sub-heading, not only a <p>", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.LeadBlocks = true; return t }},
		{"<header> kept when at most N% of its text is links", []int{5, 10, 20, 30}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.HeaderLinks = v; return t }},
		{"cousins looked for up to N levels above the best container (4 before)", []int{2, 6, 8}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.CousinLevels = v; return t }},
		{"best container widened to its parent while N% of what the parent adds is prose", []int{50, 70, 90}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ParentProse = v; return t }},
		{"content ends at a heading below which N% of the text is links (a box of teasers)", []int{20, 30, 40, 50}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Tail = v; return t }},
		{"a paragraph beside an image is a caption, not a lead, only when no headline precedes it there", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.LeadImage = true; return t }},
		{"a sub-heading of at least N runes is a lead however it ends", []int{60, 80, 100, 150}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.LeadHeading = v; return t }},
		{"the lead is not trimmed with what precedes the first prose block", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.LeadKept = true; return t }},
		{"<figcaption> of at least N runes, few of them links, kept", []int{100, 150, 300}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Captions = v; return t }},
		{"a sentence-long paragraph at most N% links is prose when trimming (30% before)", []int{40, 50}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.LinkedProse = v; return t }},
		{"fallback re-chosen with the mechanisms above (400 before)", []int{300, 500, 600}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Fallback = v; return t }},
		{"lead's gap re-chosen with the mechanisms above (100 before)", []int{50, 150, 200}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Lead = v; return t }},
		{"content ends at a heading over N% links and two or more linked headlines (teasers)", []int{10, 20, 30}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Teasers = v; return t }},
		{"elements of the best container's class elsewhere, mostly prose, join it", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.SameClass = true; return t }},
		{"siblings of the best container that are mostly prose join it (tried again on the mechanisms above)", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.SiblingProse = true; return t }},
		{"a page without an article container, returned whole, keeps what precedes its first prose block", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.WholeLead = true; return t }},
		{"content of at most N runes kept without lead trimming, past the first grid's top (1200 before)", []int{1800, 2500, 4000, 6000, 10000}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ShortContent = v; return t }},
		{cvStandfirst, []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.Standfirst = true; return t }},
		{"content ends at the last prose block of a text container when at most N% of the prose follows it", []int{5, 10, 20, 30}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TextTail = v; return t }},
		{"as above, removing only what lies outside the text container", []int{5, 10, 20, 30}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TextTailBoxes = v; return t }},
		{"a short block after the last prose block kept only within that block's ancestor N levels up", []int{1, 2, 3}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TailLevels = v; return t }},
		{"a <textarea> pruned with its highest ancestor of at most N runes (a reply form's heading and notes)", []int{100, 200, 400, 800}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ReplyForm = v; return t }},
		{"as above, with larger ancestors (the form's labels and notes counted)", []int{1600, 3200}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.ReplyForm = v; return t }},
		{"any <form> pruned with its highest ancestor of at most N runes (a newsletter sign-up, a login)", []int{100, 200, 400, 800}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.FormBox = v; return t }},
		{"a box left holding only a title of at most N runes by pruning or a link list's removal goes too", []int{30, 60, 100}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.BoxTitle = v; return t }},
		{"as above, past the first grid's top (100 before)", []int{150, 250, 400}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.BoxTitle = v; return t }},
		{"a line of at most N runes ending with a colon goes with the boilerplate pruned or the link list trimmed right after it", []int{40, 80, 150}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Intro = v; return t }},
		{"a short block after the last prose block, in its container, kept when at most N% of it is links", []int{10, 20, 35}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TailLinks = v; return t }},
		{"a paragraph ending like a sentence between prose blocks of the text container kept when at most N% links", []int{70, 90, 100}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.MidLinks = v; return t }},
		{"a table between prose blocks kept unless at least N% of it is links", []int{70, 90}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TableLinks = v; return t }},
		{"closing line's links past the first grid's top (35 before)", []int{50, 70}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TailLinks = v; return t }},
		{"table's links past the first grid's bottom (70 before)", []int{40, 55}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.TableLinks = v; return t }},
		{"an inline element named as boilerplate kept inside a paragraph of at least N other runes", []int{20, 50, 150}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.InlineNames = v; return t }},
		{"as above, past the first grid's bottom (20 before)", []int{1, 10}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.InlineNames = v; return t }},
		{"a title of at most N runes before boilerplate removed, followed by a heading or nothing, goes with it", []int{30, 60, 100}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Orphan = v; return t }},
		{"as above, past the first grid's bottom (30 before)", []int{10, 20}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Orphan = v; return t }},
		{"a cousin's best container of prose (half its text, 150 runes, links <= 10%, no lone caption) joins at N% of the best; the fallback weighs the content without it", []int{5, 10, 20}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.CousinProse = v; return t }},
		{"a paragraph beside an image is a caption, not a lead, only when the image precedes it there", []int{1}, func(t maincontent.Tuning, _ int) maincontent.Tuning { t.ImageFirst = true; return t }},
		{"best container narrowed to its child (and on down) holding N% of its prose", []int{80, 90, 95}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Narrow = v; return t }},
		{"a page without an article container returns the lowest element holding N% of its prose, not the whole page", []int{60, 80, 90}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.WholeProse = v; return t }},
		{"fallback re-chosen with the container mechanisms above (400 before)", []int{300, 500, 600}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.Fallback = v; return t }},
		{"cousin levels re-chosen with the container mechanisms above (6 before)", []int{4, 8, 10}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.CousinLevels = v; return t }},
		{"cousin levels past the grid's top (10 before)", []int{12, 16, 24}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.CousinLevels = v; return t }},
		{"prose cousins' share re-chosen with the mechanisms above (20 before)", []int{10, 15, 30}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.CousinProse = v; return t }},
		{"fallback wins only when the page's text outside links is N% of the content's", []int{200, 300, 400}, func(t maincontent.Tuning, v int) maincontent.Tuning { t.FallbackText = v; return t }},
	}
}

// TestComparisonCV decides each candidate mechanism by 5-fold
// cross-validation on the comparison set: for each fold, the candidate's
// setting is the one with the best F on the other four folds among those
// that keep precision there within cvMaxPrecisionLoss of the tuning kept
// so far (the target is F at today's precision, not recall bought with
// boilerplate), and it is scored on the fold left out; the candidate is
// kept when the pooled held-out F (the left-out folds' counts summed)
// beats the tuning kept so far with precision held the same way. It logs the table BENCHMARKS.md keeps. The starting point is every
// mechanism off (the extractor as it was before them).
//
// EXTRACT_CV_FROM=i tries only the candidates from the i-th (0-based) on,
// starting from DefaultTuning: the same decisions when the default is
// what the earlier candidates kept, in a fraction of the time.
func TestComparisonCV(t *testing.T) {
	comparisonEnabled(t)
	pages := loadComparison(t)
	runs := map[maincontent.Tuning]cmpResult{}
	run := func(tu maincontent.Tuning) cmpResult {
		if r, ok := runs[tu]; ok {
			return r
		}
		r := runComparison(pages, ownExtractor("toolport", ownFinder(tu)))
		runs[tu] = r
		return r
	}
	f := func(r cmpResult, keep func(cmpPage) bool) float64 { _, _, _, f := r.sum(pages, keep).perf(); return f }
	kept := maincontent.Tuning{}
	cands := cvCandidates()
	if v := os.Getenv("EXTRACT_CV_FROM"); v != "" {
		from, err := strconv.Atoi(v)
		if err != nil || from < 0 || from > len(cands) {
			t.Fatalf("EXTRACT_CV_FROM=%q: want a candidate index from 0 to %d", v, len(cands))
		}
		kept, cands = maincontent.DefaultTuning(), cands[from:]
	}
	t.Logf("| candidate | setting chosen per fold | base F per held-out fold | candidate F per held-out fold | pooled held-out F base → candidate (P, R) | kept |")
	for _, c := range cands {
		base := run(kept)
		var held, heldBase cmpCounts
		var chosen []string
		var bf, cf []string
		for k := range comparisonFolds {
			bp, _, _, _ := base.sum(pages, outOfFold(k)).perf()
			bestV, bestF := -1, -1.0
			for _, v := range c.grid {
				r := run(c.set(kept, v))
				p, _, _, fv := r.sum(pages, outOfFold(k)).perf()
				if p >= bp-cvMaxPrecisionLoss && fv > bestF {
					bestV, bestF = v, fv
				}
			}
			r := base
			if bestV >= 0 {
				r = run(c.set(kept, bestV))
			}
			held.add(r.sum(pages, inFold(k)))
			heldBase.add(base.sum(pages, inFold(k)))
			chosen = append(chosen, strconv.Itoa(bestV))
			bf = append(bf, fmt.Sprintf("%.3f", f(base, inFold(k))))
			cf = append(cf, fmt.Sprintf("%.3f", f(r, inFold(k))))
		}
		pb, _, _, fb := heldBase.perf()
		p, r, _, fc := held.perf()
		keep := fc > fb && p >= pb-cvMaxPrecisionLoss
		verdict := ""
		if why := cvVeto(c.name); keep && why != "" {
			keep, verdict = false, " (passes; vetoed: "+why+")"
		}
		if keep {
			// The setting kept is the one chosen on all folds together.
			bp, _, _, _ := base.sum(pages, allPages).perf()
			bestV, bestF := -1, -1.0
			for _, v := range c.grid {
				p, _, _, fv := run(c.set(kept, v)).sum(pages, allPages).perf()
				if p >= bp-cvMaxPrecisionLoss && fv > bestF {
					bestV, bestF = v, fv
				}
			}
			if bestV >= 0 {
				kept = c.set(kept, bestV)
			} else {
				keep = false
			}
		}
		t.Logf("| %s | %s | %s | %s | %.4f → %.4f (P %.3f, R %.3f) | %v%s |", c.name, strings.Join(chosen, " "),
			strings.Join(bf, " "), strings.Join(cf, " "), fb, fc, p, r, keep, verdict)
	}
	t.Logf("kept: %+v (DefaultTuning: %+v)", kept, maincontent.DefaultTuning())
}

// TestComparisonPage shows one page of the comparison set, for working on
// it: EXTRACT_COMPARISON_PAGE=<file> logs Toolport's Markdown and the
// judged snippets it misses or wrongly keeps.
func TestComparisonPage(t *testing.T) {
	file := os.Getenv("EXTRACT_COMPARISON_PAGE")
	if file == "" {
		t.Skip("set EXTRACT_COMPARISON_PAGE=<file name> to inspect one page of the comparison set")
	}
	for _, p := range loadComparison(t) {
		if p.file != file {
			continue
		}
		doc, err := extractWith(context.Background(), p.html, p.url, Options{}, own)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		text := plainText(doc.Markdown)
		for _, s := range p.with {
			if !strings.Contains(text, s) {
				t.Logf("missing: %q", s)
			}
		}
		for _, s := range p.without {
			if strings.Contains(text, s) {
				t.Logf("unwanted: %q", s)
			}
		}
		t.Logf("Markdown:\n%s", doc.Markdown)
		return
	}
	t.Fatalf("%s is not a page of the comparison set", file)
}

// TestComparisonCoverage relates Document.Coverage (the share of the
// page's visible text kept) to the judged recall on the comparison set,
// by bands of coverage: the evidence for the threshold under which
// web_fetch warns that the extraction kept little of the page.
func TestComparisonCoverage(t *testing.T) {
	comparisonEnabled(t)
	pages := loadComparison(t)
	bands := []float64{0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.01}
	type band struct {
		pages int
		c     cmpCounts
	}
	got := make([]band, len(bands))
	for _, p := range pages {
		doc, err := extractWith(context.Background(), p.html, p.url, Options{}, own)
		cov, text := 0.0, ""
		if err == nil {
			cov, text = doc.Coverage(), plainText(doc.Markdown)
		}
		for i, b := range bands {
			if cov < b {
				got[i].pages++
				got[i].c.add(evaluateEntry(p.with, p.without, text))
				break
			}
		}
	}
	t.Logf("| coverage below | pages | P | R | F |")
	for i, b := range bands {
		p, r, _, f := got[i].c.perf()
		t.Logf("| %.2f | %d | %.3f | %.3f | %.3f |", b, got[i].pages, p, r, f)
	}
}
