// Command gentracks writes synthetic tracks for `toolport index add`, one
// IndexedTrackResult per line, so that ingestion can be measured at sizes no
// recording has (BENCHMARKS.md, "index add: peak memory"). The words are the
// offline embedder's vocabulary drawn with a Zipf distribution, so that the
// BM25 vocabulary and postings grow with the index as real text's do; the
// output depends only on -n and -seed.
//
//	go run ./scripts/gentracks -n 100000 > /tmp/tracks-100k.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/toolport/toolport/internal/embedding"
)

func main() {
	n := flag.Int("n", 100_000, "tracks to write")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gentracks:", err)
		os.Exit(1)
	}
}

type features struct {
	Energy       float64 `json:"energy"`
	Valence      float64 `json:"valence"`
	Danceability float64 `json:"danceability"`
	Acousticness float64 `json:"acousticness"`
	Tempo        float64 `json:"tempo"`
}

type track struct {
	ISRC           string    `json:"isrc"`
	Title          string    `json:"title"`
	Artist         string    `json:"artist"`
	Album          string    `json:"album,omitempty"`
	Duration       float64   `json:"duration"`
	Lyrics         string    `json:"lyrics,omitempty"`
	Interpretation string    `json:"interpretation"`
	AudioFeatures  *features `json:"audioFeatures,omitempty"`
}

func run(n int, seed uint64) error {
	emb, err := embedding.NewDefault()
	if err != nil {
		return err
	}
	var vocab []string
	emb.EachWord(func(w string, _ []float32) bool {
		vocab = append(vocab, w)
		return true
	})
	if len(vocab) < 2 {
		return fmt.Errorf("the embedder has %d words", len(vocab))
	}
	rng := rand.New(rand.NewPCG(seed, 0x746f6f6c706f7274))
	zipf := rand.NewZipf(rng, 1.1, 8, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := json.NewEncoder(w)
	for i := range n {
		t := track{
			// Unique by construction: country, registrant and year from
			// the high digits, the designation from the low ones.
			ISRC:           fmt.Sprintf("%c%cSYN%02d%05d", 'A'+i/2_600_000%26, 'A'+i/100_000%26, i/100_000%100, i%100_000),
			Title:          words(1 + rng.IntN(4)),
			Artist:         words(1 + rng.IntN(3)),
			Album:          words(rng.IntN(4)),
			Duration:       float64(60 + rng.IntN(480)),
			Interpretation: words(12 + rng.IntN(19)),
		}
		if rng.IntN(10) == 0 {
			t.Lyrics = words(30 + rng.IntN(31))
		}
		if rng.IntN(2) == 0 {
			t.AudioFeatures = &features{Energy: rng.Float64(), Valence: rng.Float64(),
				Danceability: rng.Float64(), Acousticness: rng.Float64(), Tempo: 60 + 140*rng.Float64()}
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return w.Flush()
}
