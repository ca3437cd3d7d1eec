package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// AudioFeatures are a track's audio descriptors, as in the data model. Every
// field is optional: nil means unknown, which differs from 0 (key 0 is C,
// mode 0 is minor).
type AudioFeatures struct {
	Acousticness     *float64 `json:"acousticness,omitempty"`
	Danceability     *float64 `json:"danceability,omitempty"`
	Energy           *float64 `json:"energy,omitempty"`
	Instrumentalness *float64 `json:"instrumentalness,omitempty"`
	Key              *float64 `json:"key,omitempty"`
	Liveness         *float64 `json:"liveness,omitempty"`
	Loudness         *float64 `json:"loudness,omitempty"`
	Mode             *float64 `json:"mode,omitempty"`
	Speechiness      *float64 `json:"speechiness,omitempty"`
	Tempo            *float64 `json:"tempo,omitempty"`
	Valence          *float64 `json:"valence,omitempty"`
}

// IndexRecord is a track in the semantic index: one per ISRC. Its JSON form
// is the data model's IndexedTrackResult fields, without the per-query ones
// (inLibrary, isIndexed, score), plus the bookkeeping fields.
type IndexRecord struct {
	ISRC           string         `json:"isrc"`
	Title          string         `json:"title"`
	Artist         string         `json:"artist"`
	Album          string         `json:"album"`
	ArtworkURL     string         `json:"artworkUrl,omitempty"`
	Duration       float64        `json:"duration,omitempty"` // seconds
	Lyrics         string         `json:"lyrics,omitempty"`
	Interpretation string         `json:"interpretation,omitempty"`
	AudioFeatures  *AudioFeatures `json:"audioFeatures,omitempty"`

	// Embedding is the record's vector, nil when not embedded yet. It is
	// left out of JSON on purpose: results sent to agents must not carry
	// hundreds of floats.
	Embedding []float32 `json:"-"`
	// Embedder names the model that made Embedding; required with it, since
	// vectors of different models cannot be compared.
	Embedder string `json:"embedder,omitempty"`
	// ContentHash identifies the content the embedding was computed from, so
	// that unchanged records are not embedded again. The store fills it with
	// [ContentHash] when empty.
	ContentHash string `json:"contentHash,omitempty"`
	// UpdatedAt is set by the store on every write.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Dims is the embedding's dimension count, 0 when there is none.
func (r IndexRecord) Dims() int { return len(r.Embedding) }

// Bounds on what the index stores.
const (
	// MaxEmbeddingDims bounds a vector (the largest common models use 4096).
	MaxEmbeddingDims = 16384
	// MaxISRCLen bounds a record key; real ISRCs have 12 characters.
	MaxISRCLen = 64
)

// ContentHash is the default content hash of a record: SHA-256 over the text
// fields and audio features, the inputs an embedding is usually made from.
// Callers that embed other inputs should set IndexRecord.ContentHash
// themselves.
func ContentHash(r IndexRecord) string {
	b, _ := json.Marshal([]any{r.Title, r.Artist, r.Album, r.Lyrics, r.Interpretation, r.AudioFeatures})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Embedding is a vector for an indexed track.
type Embedding struct {
	ISRC     string
	Vector   []float32
	Embedder string
}

// IndexState is what the store knows of a record's embedding.
type IndexState struct {
	ContentHash string
	Embedder    string // "" when not embedded
	Dims        int
}

// Embedded reports whether the record has an embedding.
func (s IndexState) Embedded() bool { return s.Dims > 0 }

// EmbedderStats counts the embeddings of one embedder at one size.
type EmbedderStats struct {
	Name  string `json:"name"`
	Dims  int    `json:"dims"`
	Count int    `json:"count"`
}

// IndexStatus summarises the index.
type IndexStatus struct {
	Total    int `json:"total"`    // records
	Embedded int `json:"embedded"` // records with an embedding
	// Embedder and Dims are those of the most common embedding, "" and 0
	// when none is embedded.
	Embedder string `json:"embedder,omitempty"`
	Dims     int    `json:"dims,omitempty"`
	// Embedders lists every embedder and size present, most used first;
	// more than one means part of the index needs embedding again.
	Embedders []EmbedderStats `json:"embedders"`
}

// IndexVersion is a cheap fingerprint of the track index: it changes on
// every write. A record added or changed moves Updated forward; a deletion
// lowers Count. Compare versions with ==.
type IndexVersion struct {
	Count   int       // records
	Updated time.Time // the latest UpdatedAt; zero when the index is empty
}
