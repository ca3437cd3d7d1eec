package tidal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolport/toolport/internal/httpclient"
)

// The JSON:API subset TIDAL speaks. Only the members Toolport reads are
// declared; unknown members are ignored so that new upstream attributes do
// not break decoding.

// document is a JSON:API top-level document.
type document struct {
	Data     resources  `json:"data"`
	Included []resource `json:"included"`
	Links    links      `json:"links"`
	Errors   []apiError `json:"errors"`
	Meta     struct {
		// Skipped lists the items a playlist add left out.
		Skipped []skipped `json:"skipped"`
	} `json:"meta"`
}

// skipped is an item a mutation left out, with why (e.g. NOT_FOUND).
type skipped struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// resource is a resource object, or a resource identifier when it comes from
// a relationship's data (then Attributes is empty and Meta may carry a track
// number).
type resource struct {
	ID            string                  `json:"id"`
	Type          string                  `json:"type"`
	Attributes    json.RawMessage         `json:"attributes"`
	Relationships map[string]relationship `json:"relationships"`
	Meta          *itemMeta               `json:"meta"`
}

// itemMeta is the per-item meta of an album's items relationship.
type itemMeta struct {
	TrackNumber  int `json:"trackNumber"`
	VolumeNumber int `json:"volumeNumber"`
}

type relationship struct {
	Data  resources `json:"data"`
	Links links     `json:"links"`
}

type links struct {
	Self string `json:"self"`
	Next string `json:"next"`
	Meta struct {
		NextCursor string `json:"nextCursor"`
	} `json:"meta"`
}

// resources is primary data or relationship linkage: JSON:API allows a single
// object, an array or null. TIDAL's search answered with an object before
// API 1.10.96 and with an array since; both decode to a slice.
type resources []resource

func (r *resources) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*r = nil
		return nil
	case len(b) > 0 && b[0] == '{':
		var one resource
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*r = resources{one}
		return nil
	case len(b) > 0 && b[0] == '[':
		var many []resource
		if err := json.Unmarshal(b, &many); err != nil {
			return err
		}
		*r = many
		return nil
	}
	return errors.New("data must be an object, an array or null")
}

// apiError is one entry of a JSON:API errors array.
type apiError struct {
	Status string `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Source struct {
		Parameter string `json:"parameter"`
	} `json:"source"`
	Meta struct {
		Category string `json:"category"`
	} `json:"meta"`
}

// decodeDocument parses a response body. It fails on anything that is not a
// JSON object with well-typed members, so that a proxy's HTML page or a
// truncated body becomes a PARSE_ERROR rather than an empty result.
func decodeDocument(body []byte) (*document, error) {
	body = httpclient.TrimBOM(body)
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("response is not a JSON object")
	}
	var doc document
	if err := json.Unmarshal(trimmed, &doc); err != nil {
		return nil, fmt.Errorf("decoding JSON:API document: %w", err)
	}
	return &doc, nil
}

// key identifies a resource within a document.
type key struct{ typ, id string }

// index resolves relationship linkage against a document's resources.
type index map[key]*resource

// newIndex indexes the included resources and the primary data (a
// relationship may point at either). The first occurrence wins: TIDAL
// sometimes repeats a resource in included.
func newIndex(doc *document) index {
	idx := make(index, len(doc.Included)+len(doc.Data))
	add := func(r *resource) {
		k := key{r.Type, r.ID}
		if _, dup := idx[k]; !dup && r.ID != "" {
			idx[k] = r
		}
	}
	for i := range doc.Data {
		if len(doc.Data[i].Attributes) > 0 {
			add(&doc.Data[i])
		}
	}
	for i := range doc.Included {
		add(&doc.Included[i])
	}
	return idx
}

// related returns the resources a relationship points at, in order, skipping
// those the document does not include.
func (idx index) related(r *resource, name string) []*resource {
	rel, ok := r.Relationships[name]
	if !ok {
		return nil
	}
	var out []*resource
	for _, id := range rel.Data {
		if res, ok := idx[key{id.Type, id.ID}]; ok {
			out = append(out, res)
		}
	}
	return out
}
