package tooltest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TIDALUser is a local stand-in for TIDAL's user side, built from the
// OpenAPI spec's shapes (tidal-api-oas.json): the token endpoint's
// authorization-code (PKCE S256) and refresh grants, POST /v2/playlists,
// POST /v2/playlists/{id}/relationships/items (at most 50 items, meta.skipped
// for unknown tracks, Idempotency-Key replays), the user's collection
// (GET /v2/userCollectionTracks/me/relationships/items and …Albums…, cursor
// paged, include=items) and the catalogue lookups GET /v2/tracks (by
// filter[id] or filter[isrc]) and GET /v2/albums by filter[id]. Every answer body is CONSTRUCTED from the
// spec's schemas; the track and album resources in them are the recorded
// ones of the tidal package's testdata ([TIDALCatalog]).
type TIDALUser struct {
	Srv      *httptest.Server
	ClientID string
	cat      *TIDALCatalog

	mu             sync.Mutex
	pageSize       int      // items per collection page (TIDAL: 20)
	throttle       []int    // item-add request numbers answered 429
	favoriteTracks []string // the user's collection, by id
	favoriteAlbums []string
	challenges     map[string]string // code → S256 challenge
	redirects      map[string]string // code → redirect_uri
	access         map[string]bool   // valid access tokens
	refresh        map[string]bool   // valid refresh tokens
	issued         int
	playlists      map[string]*FakePlaylist
	order          []string
	idem           map[string]string // Idempotency-Key → playlist id (creations) or "items"
	adds           int
	log            []string
}

// FakePlaylist is a playlist made on a [TIDALUser].
type FakePlaylist struct {
	Name, Description, AccessType string
	Items                         []string
}

// NewTIDALUser starts the fake with the recorded catalogue; clientID is the
// app's id the token endpoint expects.
func NewTIDALUser(t testing.TB, clientID string) *TIDALUser {
	f := &TIDALUser{ClientID: clientID, pageSize: 20, cat: LoadTIDALCatalog(t),
		challenges: map[string]string{}, redirects: map[string]string{}, access: map[string]bool{}, refresh: map[string]bool{},
		playlists: map[string]*FakePlaylist{}, idem: map[string]string{}}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Srv.Close)
	return f
}

// Authorize plays TIDAL's login page: it reads the authorization URL the
// client built, remembers the code's PKCE challenge and returns the
// callback query the browser would bring back (code and state).
func (f *TIDALUser) Authorize(t testing.TB, authURL string) url.Values {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != f.ClientID || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("redirect_uri") == "" {
		t.Fatalf("tooltest: the authorization URL is not an S256 PKCE code request for %s: %s", f.ClientID, authURL)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	code := fmt.Sprintf("code-%d", len(f.challenges)+1)
	f.challenges[code] = q.Get("code_challenge")
	f.redirects[code] = q.Get("redirect_uri")
	return url.Values{"code": {code}, "state": {q.Get("state")}}
}

// SetThrottle makes the item-add requests with these 1-based numbers
// (counted from the fake's start) answer 429 without Retry-After, as TIDAL
// does.
func (f *TIDALUser) SetThrottle(numbers ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttle = numbers
}

// SetFavorites sets the user's favourite tracks and albums (ids, newest
// first) and the collection page size.
func (f *TIDALUser) SetFavorites(tracks, albums []string, pageSize int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.favoriteTracks, f.favoriteAlbums, f.pageSize = tracks, albums, pageSize
}

// Playlists returns the playlists made, in order.
func (f *TIDALUser) Playlists() []FakePlaylist {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []FakePlaylist{}
	for _, id := range f.order {
		p := *f.playlists[id]
		p.Items = slices.Clone(p.Items)
		out = append(out, p)
	}
	return out
}

// Log lists the requests served, as "METHOD /path".
func (f *TIDALUser) Log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Expire makes every access token invalid, as if they had expired early.
func (f *TIDALUser) Expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.access)
}

func jsonAPI(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.api+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiErr(w http.ResponseWriter, status int, code, detail string) {
	jsonAPI(w, status, map[string]any{"errors": []any{map[string]any{"status": strconv.Itoa(status), "code": code, "detail": detail,
		"meta": map[string]any{"category": "INVALID_REQUEST_ERROR"}}}})
}

func (f *TIDALUser) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	if r.URL.Path == "/v1/oauth2/token" {
		f.token(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !f.access[tok] {
		apiErr(w, 401, "UNAUTHORIZED", "invalid or expired token")
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/v2")
	switch {
	case r.Method == "POST" && r.URL.RawQuery != "" && (p == "/playlists" || strings.HasSuffix(p, "/relationships/items")):
		apiErr(w, 400, "INVALID_QUERY_PARAMETER", "this endpoint takes no query parameters")
	case r.Method == "POST" && p == "/playlists":
		f.createPlaylist(w, r)
	case r.Method == "POST" && strings.HasPrefix(p, "/playlists/") && strings.HasSuffix(p, "/relationships/items"):
		f.addItems(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/playlists/"), "/relationships/items"))
	case r.Method == "GET" && p == "/userCollectionTracks/me/relationships/items":
		f.collection(w, r, "tracks", f.favoriteTracks)
	case r.Method == "GET" && p == "/userCollectionAlbums/me/relationships/items":
		f.collection(w, r, "albums", f.favoriteAlbums)
	case r.Method == "GET" && p == "/tracks":
		var data []any
		for _, id := range r.URL.Query()["filter[id]"] {
			if tr := f.track(id); tr != nil {
				data = append(data, f.cat.SearchTrack(tr))
			}
		}
		for _, isrc := range r.URL.Query()["filter[isrc]"] {
			if tr, ok := f.cat.ByISRC[isrc]; ok {
				data = append(data, f.cat.SearchTrack(tr))
			}
		}
		inc := append([]any{f.cat.SearchAlbum()}, f.cat.Artists...)
		jsonAPI(w, 200, map[string]any{"data": nonNil(data), "included": append(inc, f.cat.Artworks...), "links": map[string]any{"self": "/tracks"}})
	case r.Method == "GET" && p == "/albums":
		var data []any
		if slices.Contains(r.URL.Query()["filter[id]"], TIDALAlbumID) {
			data = append(data, f.cat.SearchAlbum())
		}
		jsonAPI(w, 200, map[string]any{"data": nonNil(data), "included": append(slices.Clone(f.cat.Artists), f.cat.Artworks...),
			"links": map[string]any{"self": "/albums"}})
	default:
		apiErr(w, 404, "NOT_FOUND", "no such resource")
	}
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func (f *TIDALUser) track(id string) map[string]any {
	for _, tr := range f.cat.Tracks {
		if tr["id"] == id {
			return tr
		}
	}
	return nil
}

func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// token implements the authorization_code (PKCE) and refresh_token grants
// for a public client (client_id in the form).
func (f *TIDALUser) token(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":%q}`, code)
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != f.ClientID {
		oauthErr("invalid_client")
		return
	}
	form := r.PostForm
	switch form.Get("grant_type") {
	case "authorization_code":
		code := form.Get("code")
		challenge, ok := f.challenges[code]
		delete(f.challenges, code) // a code works once
		if !ok || form.Get("redirect_uri") != f.redirects[code] || s256(form.Get("code_verifier")) != challenge {
			oauthErr("invalid_grant")
			return
		}
	case "refresh_token":
		if !f.refresh[form.Get("refresh_token")] {
			oauthErr("invalid_grant")
			return
		}
	default:
		oauthErr("unsupported_grant_type")
		return
	}
	f.issued++
	at := fmt.Sprintf("user-access-%d", f.issued)
	f.access[at] = true
	answer := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600,
		"scope": "playlists.read playlists.write collection.read user.read", "user_id": 192837465}
	if form.Get("grant_type") == "authorization_code" {
		rt := fmt.Sprintf("user-refresh-%d", f.issued)
		f.refresh[rt] = true
		answer["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func (f *TIDALUser) createPlaylist(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	if id, ok := f.idem["create:"+key]; ok && key != "" {
		f.writePlaylist(w, id)
		return
	}
	var body struct {
		Data struct {
			Type       string `json:"type"`
			Attributes struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				AccessType  string `json:"accessType"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Data.Type != "playlists" || body.Data.Attributes.Name == "" {
		apiErr(w, 400, "INVALID_REQUEST_BODY", "a playlists resource with a name is required")
		return
	}
	id := fmt.Sprintf("550e8400-e29b-41d4-a716-%012d", len(f.order)+1)
	a := body.Data.Attributes
	f.playlists[id] = &FakePlaylist{Name: a.Name, Description: a.Description, AccessType: a.AccessType}
	f.order = append(f.order, id)
	if key != "" {
		f.idem["create:"+key] = id
	}
	f.writePlaylist(w, id)
}

func (f *TIDALUser) writePlaylist(w http.ResponseWriter, id string) {
	p := f.playlists[id]
	jsonAPI(w, 201, map[string]any{"data": map[string]any{"id": id, "type": "playlists", "attributes": map[string]any{
		"name": p.Name, "description": p.Description, "accessType": "UNLISTED", "bounded": true, "externalLinks": []any{},
		"numberOfFollowers": 0, "playlistType": "USER", "createdAt": "2026-11-25T00:00:00Z", "lastModifiedAt": "2026-11-25T00:00:00Z"}},
		"links": map[string]any{"self": "/playlists/" + id}})
}

func (f *TIDALUser) addItems(w http.ResponseWriter, r *http.Request, id string) {
	p, ok := f.playlists[id]
	if !ok {
		apiErr(w, 404, "NOT_FOUND", "playlist not found")
		return
	}
	f.adds++
	if slices.Contains(f.throttle, f.adds) {
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Replenish-Rate", "50")
		w.Header().Set("X-Ratelimit-Burst-Capacity", "10")
		apiErr(w, 429, "TOO_MANY_REQUESTS", "rate limit exceeded")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if _, done := f.idem["items:"+key]; done && key != "" {
		jsonAPI(w, 200, map[string]any{"data": []any{}, "links": map[string]any{"self": "/playlists/" + id + "/relationships/items"},
			"meta": map[string]any{"skipped": []any{}}})
		return
	}
	var body struct {
		Data []struct{ ID, Type string } `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Data) < 1 || len(body.Data) > 50 {
		apiErr(w, 400, "INVALID_REQUEST_BODY", "data must hold 1 to 50 items")
		return
	}
	skipped := []any{}
	for _, it := range body.Data {
		if it.Type != "tracks" || f.track(it.ID) == nil {
			skipped = append(skipped, map[string]any{"id": it.ID, "type": "tracks", "reason": "NOT_FOUND"})
			continue
		}
		p.Items = append(p.Items, it.ID)
	}
	if key != "" {
		f.idem["items:"+key] = id
	}
	jsonAPI(w, 200, map[string]any{"data": []any{}, "links": map[string]any{"self": "/playlists/" + id + "/relationships/items"},
		"meta": map[string]any{"skipped": skipped}})
}

// collection answers one cursor page of a collection's items; the cursor is
// the offset, and links.next (relative, without include, as TIDAL's are)
// points at the next page. Parameters the spec does not list are refused
// with 400, as the API does.
func (f *TIDALUser) collection(w http.ResponseWriter, r *http.Request, typ string, ids []string) {
	q := r.URL.Query()
	for k := range q { // the spec's parameters; the API answers 400 to others
		if !slices.Contains([]string{"page[cursor]", "sort", "locale", "include", "replaceMedia"}, k) {
			apiErr(w, 400, "INVALID_QUERY_PARAMETER", "unknown parameter "+k)
			return
		}
	}
	start := 0
	if c := q.Get("page[cursor]"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "c"))
		if err != nil || n < 0 || n > len(ids) {
			apiErr(w, 400, "INVALID_CURSOR", "bad cursor")
			return
		}
		start = n
	}
	end := min(start+f.pageSize, len(ids))
	data := []any{}
	var included []any
	for _, id := range ids[start:end] {
		data = append(data, map[string]any{"id": id, "type": typ, "meta": map[string]any{"addedAt": "2026-11-01T10:00:00Z"}})
		if q.Get("include") != "items" {
			continue
		}
		if typ == "tracks" {
			if tr := f.track(id); tr != nil {
				included = append(included, map[string]any{"id": id, "type": "tracks", "attributes": tr["attributes"]})
			}
		} else if id == TIDALAlbumID {
			included = append(included, map[string]any{"id": id, "type": "albums", "attributes": f.cat.Album["attributes"]})
		}
	}
	path := r.URL.Path[len("/v2"):]
	links := map[string]any{"self": path}
	if end < len(ids) {
		cursor := "c" + strconv.Itoa(end)
		links["next"] = path + "?page%5Bcursor%5D=" + cursor
		links["meta"] = map[string]any{"nextCursor": cursor}
	}
	jsonAPI(w, 200, map[string]any{"data": data, "included": nonNil(included), "links": links})
}
