// Package embedding turns text into vectors for the semantic track index.
//
// An [Embedder] embeds a batch of texts. Two implementations ship here: the
// offline default ([NewDefault], word vectors compiled into the binary, no keys
// and no network) and a client for any OpenAI-compatible /v1/embeddings
// endpoint ([NewOpenAI]: OpenAI, Ollama, vLLM, Text Embeddings Inference).
//
// Vectors from different embedders (or models) are not comparable; Name
// identifies the model so that stored vectors can be matched to it.
package embedding

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Embedder maps texts to fixed-size vectors, one per text and in the same
// order. Implementations are safe for concurrent use.
type Embedder interface {
	// Name identifies the model, e.g. "glove-100d-sif" or "openai:text-embedding-3-small".
	Name() string
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// Embed embeds a batch. It either returns len(texts) vectors or an error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// MaxWordBytes bounds a single token: longer runs of letters are not words
// (base64, hashes) and are dropped.
const MaxWordBytes = 64

// Words splits text into lower-case word tokens: maximal runs of Unicode letters
// and digits, where a single hyphen between two such runs is kept inside the
// token ("lo-fi", "hip-hop") since word-vector vocabularies hold such
// compounds. Tokens longer than [MaxWordBytes] are dropped. Invalid UTF-8 is
// treated as a separator.
func Words(text string) []string {
	var out []string
	start := -1 // byte offset of the current token, or -1
	end := 0    // byte offset just past the last letter/digit of the token
	flush := func() {
		if start >= 0 && end-start <= MaxWordBytes {
			out = append(out, strings.ToLower(text[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if start < 0 {
				start = i
			}
			end = i + size
		case r == '-' && start >= 0 && end == i && i+1 < len(text) && isWordStart(text[i+1:]):
			// An inner hyphen: keep going; end stays before it until a letter follows.
		default:
			flush()
		}
		i += size
	}
	flush()
	return out
}

// isWordStart reports whether s begins with a letter or digit.
func isWordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
