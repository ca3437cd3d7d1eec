package extract

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The multilingual set (testdata/multilingual, SOURCES.md there): 21 real
// pages in 14 languages, 8 of them not UTF-8 (one declaring UTF-8 while
// being GBK). Each page's ground truth is a few sentences of the article
// that must appear in the Markdown and a few lines of boilerplate that must
// not; two portal home pages have no article and are checked for decoding
// only (their title, and some text in their script, no U+FFFD).

type mlTruth struct {
	Lang    string   `json:"lang"`
	Charset string   `json:"charset"`
	Portal  bool     `json:"portal"`
	Title   string   `json:"title"`
	Must    []string `json:"must"`
	MustNot []string `json:"mustNot"`
}

type mlPage struct {
	id    string
	raw   []byte // as served: any charset
	truth mlTruth
}

func loadMultilingual(tb testing.TB) []mlPage {
	tb.Helper()
	dir := filepath.Join("testdata", "multilingual")
	raw, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		tb.Fatalf("multilingual set missing: %v", err)
	}
	var truth map[string]mlTruth
	if err := json.Unmarshal(raw, &truth); err != nil {
		tb.Fatalf("truth.json: %v", err)
	}
	ids := make([]string, 0, len(truth))
	for id := range truth {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	pages := make([]mlPage, 0, len(ids))
	for _, id := range ids {
		body := readPage(tb, dir, id)
		pages = append(pages, mlPage{id: id, raw: body, truth: truth[id]})
	}
	return pages
}

// mlScore is how a pipeline did on the multilingual set: the share of
// must-appear sentences found, the share of boilerplate lines kept out, and
// the pages whose text came out in the wrong script (a decoding failure).
type mlScore struct {
	found, must       int
	kept, mustNot     int
	portalOK, portals int
	misses            []string
}

func (s mlScore) recall() float64 { return float64(s.found) / float64(max(s.must, 1)) }
func (s mlScore) clean() float64  { return 1 - float64(s.kept)/float64(max(s.mustNot, 1)) }

// scriptRunes counts the letters of md in the writing system a language
// code implies, for the portal pages' decoding check.
func scriptRunes(md, lang string) int {
	var tab *unicode.RangeTable
	switch lang {
	case "ko":
		tab = unicode.Hangul
	case "zh", "ja":
		tab = unicode.Han
	default:
		return 0
	}
	n := 0
	for _, r := range md {
		if unicode.Is(tab, r) {
			n++
		}
	}
	return n
}

func scoreMultilingual(t *testing.T, pages []mlPage, st strategy) mlScore {
	var s mlScore
	for _, p := range pages {
		page, err := DecodeHTML(p.raw, "")
		if err != nil {
			t.Fatalf("%s: decode: %v", p.id, err)
		}
		doc, err := extractWith(context.Background(), page, nil, Options{}, st.finder())
		md, title := "", ""
		if err == nil {
			md, title = doc.Markdown, doc.Title
		}
		got := normText(readerText(md))
		if p.truth.Portal {
			s.portals++
			if strings.Contains(normText(title), normText(p.truth.Title)) && scriptRunes(md, p.truth.Lang) >= 20 && !strings.ContainsRune(md, '\uFFFD') {
				s.portalOK++
			} else {
				s.misses = append(s.misses, p.id+": portal page not decoded (title "+title+")")
			}
			continue
		}
		for _, m := range p.truth.Must {
			s.must++
			if strings.Contains(got, normText(m)) {
				s.found++
			} else {
				s.misses = append(s.misses, p.id+": missing "+m)
			}
		}
		for _, m := range p.truth.MustNot {
			s.mustNot++
			if strings.Contains(got, normText(m)) {
				s.kept++
				s.misses = append(s.misses, p.id+": kept "+m)
			}
		}
	}
	return s
}

func TestMultilingualSetShape(t *testing.T) {
	pages := loadMultilingual(t)
	langs := map[string]bool{}
	notUTF8 := 0
	for _, p := range pages {
		langs[p.truth.Lang] = true
		if p.truth.Charset != "utf-8" {
			notUTF8++
		}
	}
	if len(pages) < 20 || len(langs) < 6 || notUTF8 < 5 {
		t.Fatalf("set has %d pages, %d languages, %d not UTF-8; want >= 20, 6, 5", len(pages), len(langs), notUTF8)
	}
}

// TestMultilingual holds the two pipelines Extract offers to what they
// achieve on the multilingual set, so that a change tuned on the
// English-heavy development set cannot quietly break other languages or
// legacy charsets. EXTRACT_STRATEGY=all scores the libraries alone as well.
func TestMultilingual(t *testing.T) {
	pages := loadMultilingual(t)
	// Floors: what each pipeline measured (own 53 and 0, legacy 50 and 3
	// when the set was built).
	type floor struct{ minFound, maxKept int }
	floors := map[strategy]floor{strategyOwn: {52, 1}, strategyLegacy: {50, 3}}
	for _, st := range selectedStrategies() {
		t.Run(st.String(), func(t *testing.T) {
			s := scoreMultilingual(t, pages, st)
			t.Logf("%-22s sentences found %d/%d (%.3f), boilerplate kept out %d/%d (%.3f), portals decoded %d/%d",
				st, s.found, s.must, s.recall(), s.mustNot-s.kept, s.mustNot, s.clean(), s.portalOK, s.portals)
			for _, m := range s.misses {
				t.Logf("  %s", m)
			}
			f, ok := floors[st]
			if !ok {
				return
			}
			if s.found < f.minFound || s.kept > f.maxKept || s.portalOK < s.portals {
				t.Errorf("found %d sentences (want >= %d), kept %d boilerplate lines (want <= %d), decoded %d/%d portals",
					s.found, f.minFound, s.kept, f.maxKept, s.portalOK, s.portals)
			}
		})
	}
}
