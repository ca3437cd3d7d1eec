package tidal

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolport/toolport/internal/tooltest"
)

// oasSchemas compiles schemas of the OpenAPI spec extract by name.
func oasSchemas(t *testing.T) func(name string) *sv.Schema {
	t.Helper()
	raw, err := os.ReadFile("testdata/openapi-user-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := sv.NewCompiler()
	c.DefaultDraft(sv.Draft4) // OpenAPI 3.0 schemas are draft-4 style
	if err := c.AddResource("file:///oas.json", doc); err != nil {
		t.Fatal(err)
	}
	return func(name string) *sv.Schema {
		s, err := c.Compile("file:///oas.json#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		return s
	}
}

// validateDoc checks a response document against its schema, "included"
// aside: the spec's "included" is a oneOf resolved by an OpenAPI
// discriminator, which JSON Schema does not know (a tracks resource also
// fits videos), and the fake's included resources carry the attributes of
// the recorded answers (testdata), which predate spec 1.10.104: no key,
// keyScale or albumType, "version": null where the spec says string. The
// client decodes both leniently; here each included resource is only
// checked to be a typed resource with attributes.
func validateDoc(t *testing.T, schema func(string) *sv.Schema, docSchema, what string, body []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, body)
	}
	included, _ := doc["included"].([]any)
	delete(doc, "included")
	rest, _ := json.Marshal(doc)
	validate(t, schema(docSchema), what, rest)
	for i, r := range included {
		m, _ := r.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		if _, ok := m["attributes"].(map[string]any); id == "" || typ == "" || !ok {
			t.Errorf("%s: included[%d] is not a resource object: %v", what, i, r)
		}
	}
}

func validate(t *testing.T, s *sv.Schema, what string, body []byte) {
	t.Helper()
	v, err := sv.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, body)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not fit the OpenAPI schema: %v\n%s", what, err, body)
	}
}

// TestUserRequestsFitTheSpec checks the bodies the client sends to create a
// playlist and add items against the spec's payload schemas.
func TestUserRequestsFitTheSpec(t *testing.T) {
	schema := oasSchemas(t)
	var mu sync.Mutex
	bodies := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.URL.Path] = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/vnd.api+json")
		if r.URL.Path == "/v2/playlists" {
			w.WriteHeader(201)
			io.WriteString(w, `{"data":{"id":"550e8400-e29b-41d4-a716-446655440000","type":"playlists"},"links":{"self":"/playlists"}}`)
			return
		}
		io.WriteString(w, `{"data":[],"links":{"self":"/x"},"meta":{"skipped":[]}}`)
	}))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	uc := c.WithUser(&UserTokenSource{tok: &UserToken{AccessToken: "at"}, now: time.Now})
	ctx := context.Background()
	id, err := uc.CreatePlaylist(ctx, "Rainy day", "from toolport", PlaylistUnlisted, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uc.AddPlaylistItems(ctx, id, []string{"1", "2"}, "k-0"); err != nil {
		t.Fatal(err)
	}
	validate(t, schema("PlaylistsCreateOperation_Payload"), "POST /playlists body", bodies["/v2/playlists"])
	validate(t, schema("PlaylistsItemsRelationshipAddOperation_Payload"), "POST …/relationships/items body",
		bodies["/v2/playlists/"+id+"/relationships/items"])
	// The schema is strict enough to catch a wrong body.
	if err := schema("PlaylistsItemsRelationshipAddOperation_Payload").Validate(map[string]any{"data": []any{}}); err == nil {
		t.Error("an empty items payload passed the schema")
	}
}

// TestUserFakeAnswersFitTheSpec checks the fake's answers, which the other
// tests run against, against the spec's response documents.
func TestUserFakeAnswersFitTheSpec(t *testing.T) {
	schema := oasSchemas(t)
	f := tooltest.NewTIDALUser(t, userClientID)
	f.SetFavorites([]string{"396698919", "396698920", "396698921"}, []string{tooltest.TIDALAlbumID}, 2)
	tok := login(t, f, newUserAuth(t, f))
	do := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, f.Srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return b
	}
	created := do("POST", "/v2/playlists", `{"data":{"type":"playlists","attributes":{"name":"x"}}}`)
	validate(t, schema("Playlists_Create_Single_Resource_Data_Document"), "created playlist", created)
	var doc struct{ Data struct{ ID string } }
	json.Unmarshal(created, &doc)
	validate(t, schema("Playlists_Items_Add_Multi_Relationship_Data_Document"), "items added",
		do("POST", "/v2/playlists/"+url.PathEscape(doc.Data.ID)+"/relationships/items", `{"data":[{"id":"396698919","type":"tracks"},{"id":"1","type":"tracks"}]}`))
	validateDoc(t, schema, "UserCollectionTracks_Items_Multi_Relationship_Data_Document", "favourite tracks page",
		do("GET", "/v2/userCollectionTracks/me/relationships/items?include=items", ""))
	validateDoc(t, schema, "UserCollectionAlbums_Items_Multi_Relationship_Data_Document", "favourite albums page",
		do("GET", "/v2/userCollectionAlbums/me/relationships/items?include=items", ""))
}
