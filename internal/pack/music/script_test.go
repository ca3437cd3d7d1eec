package music

import (
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store/sqlstore"
)

func TestQueryScriptNote(t *testing.T) {
	tests := []struct {
		query, want string // want: the script the note names; "" for no note
	}{
		{"שירי אהבה עצובים", "Hebrew script"},
		{"أغاني حب حزينة", "Arabic script"},
		{"грустные песни о любви", "Cyrillic script"},
		{"悲しいラブソング", "Katakana script"}, // more katakana than kanji
		{"ერთი სიმღერა", "Georgian script"},
		{"ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ", "a non-Latin script"}, // Cherokee, not listed
		{"melancholic love songs", ""},
		{"chansons d'amour mélancoliques", ""},
		{"Björk שיר", ""}, // more Latin letters than Hebrew: the index may match
		{"שירים של Björk", "Hebrew script"},
		{"1984 — 2024!", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := queryScriptNote(tt.query)
		if tt.want == "" {
			if got != "" {
				t.Errorf("%q: note %q, want none", tt.query, got)
			}
			continue
		}
		if !strings.Contains(got, "this query is in "+tt.want+",") || !strings.Contains(got, "English") {
			t.Errorf("%q: note %q, want one naming %s and English", tt.query, got, tt.want)
		}
	}
}

// TestSemanticSearchNotesTheQueryScript: a Hebrew query's result carries
// the note; an English query's does not.
func TestSemanticSearchNotesTheQueryScript(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		reg, _ := newRegistry(t, db)
		var he, en struct {
			Note   *string
			Tracks []IndexedTrackResult
		}
		call(t, reg, "semanticSearch", `{"query":"פסנתר מלנכולי"}`, &he)
		if he.Note == nil || !strings.Contains(*he.Note, "Hebrew script") {
			t.Errorf("Hebrew query: note %v, want one naming Hebrew", he.Note)
		}
		call(t, reg, "semanticSearch", `{"query":"melancholic piano"}`, &en)
		if en.Note != nil {
			t.Errorf("English query: note %q, want none (left out)", *en.Note)
		}
	})
}
