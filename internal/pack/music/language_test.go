package music

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/store/storetest"
	"github.com/toolport/toolport/tool"
)

// semanticOut is semanticSearch's result as a client reads it.
type semanticOut struct {
	Summary string
	Note    string
	Tracks  []IndexedTrackResult
}

func TestSemanticSearchUnreadScript(t *testing.T) {
	db := openStore(t, storetest.DSN(t, storetest.SQLite))
	reg, _ := newRegistry(t, db)
	tests := []struct {
		name, query string
		tracks      bool   // whether tracks come back
		note        string // a part of the note; "" for no note
	}{
		// "sad piano music" in Hebrew: the offline English embedder reads none of it.
		{"Hebrew", "מוזיקה עצובה עם פסנתר", false, "could not read this query (Hebrew script: מוזיקה, עצובה, עם, פסנתר)"},
		{"Arabic", "موسيقى هادئة", false, "(Arabic script"},
		{"Cyrillic", "грустное пианино", false, "(Cyrillic script"},
		{"English with a Hebrew word", "melancholic piano עצוב", true, "the words in Hebrew script (עצוב) were not read"},
		{"English", "melancholic piano", true, ""},
		{"an unknown English word is no language", "melancholic pianoo zzzqx", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"query": tt.query})
			var out semanticOut
			call(t, reg, "semanticSearch", string(args), &out)
			if (len(out.Tracks) > 0) != tt.tracks {
				t.Errorf("%d tracks, want tracks: %v", len(out.Tracks), tt.tracks)
			}
			if tt.note == "" {
				if out.Note != "" {
					t.Errorf("note %q, want none", out.Note)
				}
				return
			}
			if !strings.Contains(out.Note, tt.note) || !strings.Contains(out.Note, "TOOLPORT_EMBEDDINGS_URL") {
				t.Errorf("note %q, want it to hold %q and how to fix it", out.Note, tt.note)
			}
			if !strings.Contains(out.Summary, out.Note) {
				t.Errorf("summary %q lacks the note", out.Summary)
			}
		})
	}
}

// conceptLexicon maps words of both languages to shared concepts: the fake
// multilingual model below embeds a Hebrew word as it does its English
// translation. CONSTRUCTED: no real model's vectors.
var conceptLexicon = map[string]int{
	"piano": 0, "פסנתר": 0,
	"melancholic": 1, "sad": 1, "עצוב": 1, "עצובה": 1,
	"calm": 2, "slow": 2, "רגוע": 2, "רגועה": 2, "שקט": 2,
	"club": 3, "מועדון": 3,
	"dark": 4, "אפל": 4,
	"strings": 5, "כינור": 5,
}

const fakeDims = 16

// fakeEmbed is the fake model: the normalised sum over a text's words of its
// concept's axis (the first 8 dimensions), or of a small vector hashed from
// the word into the other 8 for a word it has no concept for.
func fakeEmbed(text string) []float32 {
	v := make([]float32, fakeDims)
	for _, w := range embedding.Words(text) {
		if c, ok := conceptLexicon[w]; ok {
			v[c]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[8+h.Sum32()%8] += 0.3
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
	}
	return v
}

// fakeEmbeddingsServer answers POST /v1/embeddings as an OpenAI-compatible
// server does, with fakeEmbed's vectors.
func fakeEmbeddingsServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-multilingual" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
		}{Object: "list", Model: req.Model}
		for i, s := range req.Input {
			resp.Data = append(resp.Data, item{"embedding", i, fakeEmbed(s)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSemanticSearchMultilingualEmbedder: with an OpenAI-compatible
// embeddings endpoint configured, the index does not judge the query's
// language (the model may be multilingual): a Hebrew query is embedded and
// ranked like its English translation, with no note.
func TestSemanticSearchMultilingualEmbedder(t *testing.T) {
	srv := fakeEmbeddingsServer(t)
	emb, err := embedding.NewOpenAI(embedding.Config{BaseURL: srv.URL, Model: "fake-multilingual"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := openStore(t, storetest.DSN(t, storetest.SQLite))
	svc := New(db, emb, nil)
	if st, err := svc.Ingest(ctx, strings.NewReader(seedJSONL), IngestOptions{}); err != nil || st.Added != 3 {
		t.Fatalf("ingest: %+v, %v", st, err)
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(Tools(svc)...); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"melancholic piano", "פסנתר עצוב", "מוזיקה רגועה עם פסנתר"} {
		args, _ := json.Marshal(map[string]string{"query": q})
		var out semanticOut
		call(t, reg, "semanticSearch", string(args), &out)
		if out.Note != "" {
			t.Errorf("%s: note %q, want none", q, out.Note)
		}
		if len(out.Tracks) == 0 || out.Tracks[0].ISRC != "AUNMG2400013" {
			t.Errorf("%s: tracks %+v, want BLADE WALKER (calm, melancholic piano) first", q, out.Tracks)
		}
	}
}

// TestSemanticSearchOnlyNegation: a query that only says what to leave out
// gets no tracks and a note asking what to find, not the tracks it excludes.
func TestSemanticSearchOnlyNegation(t *testing.T) {
	db := openStore(t, storetest.DSN(t, storetest.SQLite))
	reg, _ := newRegistry(t, db)
	for _, tt := range []struct {
		query  string
		tracks bool
	}{
		{"no piano", false},
		{"without the piano", false},
		{"melancholic, no piano", true},
	} {
		args, _ := json.Marshal(map[string]string{"query": tt.query})
		var out semanticOut
		call(t, reg, "semanticSearch", string(args), &out)
		if tt.tracks {
			if len(out.Tracks) == 0 || out.Note != "" {
				t.Errorf("%q: %d tracks, note %q; want tracks and no note", tt.query, len(out.Tracks), out.Note)
			}
			continue
		}
		if len(out.Tracks) != 0 || !strings.Contains(out.Note, "only says what to leave out (") || !strings.Contains(out.Note, "piano)") || !strings.Contains(out.Summary, out.Note) {
			t.Errorf("%q: %d tracks, note %q, summary %q; want none and a note naming piano", tt.query, len(out.Tracks), out.Note, out.Summary)
		}
	}
}
