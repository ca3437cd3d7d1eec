package main_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tidal"
)

// featureLine is what sdkclient.mjs prints for the steps beyond tools.
type featureLine struct {
	sdkLine
	Server  map[string]any
	Prompts []struct {
		Name, Title, Icon string
		Arguments         []string
	}
	Values      []string
	Resources   []struct{ URI, Title, MIMEType string }
	Templates   []string
	Contents    []struct{ URI, MIMEType, Text string }
	Elicited    []string
	ListChanged int
	Tools       []struct {
		Name, Title, Icon string
	}
}

// runFeatures runs a plan to its end, with elicit ("accept", "decline" or
// "" for a client without elicitation), and returns every line from
// "connected" on, decoded as featureLines.
func runFeatures(t *testing.T, plan map[string]any, elicit string) []featureLine {
	t.Helper()
	if elicit != "" {
		plan["elicit"] = elicit
	}
	p := startSDK(t, plan)
	first := p.next(t)
	if first.Op != "connected" {
		t.Fatalf("first line %+v, want connected", first)
	}
	rest := p.finish(t)
	if want := len(plan["steps"].([]map[string]any)); len(rest) != want {
		t.Fatalf("%d lines for %d steps: %+v\n%s", len(rest), want, rest, p.stderr.String())
	}
	var out []featureLine
	for _, l := range append([]sdkLine{first}, rest...) {
		var f featureLine
		if err := json.Unmarshal(l.raw, &f); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// loginTIDAL makes the login `toolport tidal login` would save, against f,
// by playing the browser's part of the PKCE code flow.
func loginTIDAL(t *testing.T, f *tooltest.TIDALUser, path string) {
	t.Helper()
	const verifier = "the-test-verifier-of-forty-three-characters-at-least"
	sum := sha256.Sum256([]byte(verifier))
	redirect := "http://127.0.0.1/callback"
	auth := "https://login.tidal.com/authorize?" + url.Values{"response_type": {"code"}, "client_id": {f.ClientID},
		"code_challenge_method": {"S256"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"state": {"s"}, "redirect_uri": {redirect}}.Encode()
	code := f.Authorize(t, auth).Get("code")
	res, err := http.PostForm(f.Srv.URL+"/v1/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {f.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %+v", err, tok)
	}
	if err := tidal.SaveUserToken(path, &tidal.UserToken{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: "Bearer", Expiry: time.Now().Add(time.Hour), UserID: "192837465"}); err != nil {
		t.Fatal(err)
	}
}

// featureBackends starts a fake CKAN portal (publishers, groups, one
// dataset) and a logged-in TIDAL user fake, and returns the environment of a
// toolport using them and a fresh store.
func featureBackends(t *testing.T) (map[string]string, *tooltest.TIDALUser, string) {
	ok := func(result any) http.HandlerFunc {
		raw, err := json.Marshal(map[string]any{"success": true, "result": result})
		if err != nil {
			t.Fatal(err)
		}
		return tooltest.Respond(http.StatusOK, "application/json", raw)
	}
	ckanSrv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"organization_list": ok([]string{"ministry-of-health", "ministry-of-transport", "tel-aviv"}),
		"group_list":        ok([]string{"health", "transportation", "public-transport"}),
		"package_show": tooltest.Respond(http.StatusOK, "application/json",
			tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_show_17be64bb-da74-4195-9bb8-565c39846af2.json")),
	})
	f := tooltest.NewTIDALUser(t, "ts-sdk-app")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tidal-login.json")
	loginTIDAL(t, f, tokenFile)
	env := map[string]string{
		"CKAN_BASE_URL": ckanSrv.URL, "TOOLPORT_FETCH_ALLOW_PRIVATE": "1",
		"TOOLPORT_DATABASE_URL": filepath.Join(dir, "toolport.db"),
		"TIDAL_CLIENT_ID":       f.ClientID, "TIDAL_API_BASE_URL": f.Srv.URL, "TIDAL_AUTH_URL": f.Srv.URL,
		"TIDAL_TOKEN_FILE": tokenFile,
	}
	return env, f, strings.TrimPrefix(ckanSrv.URL, "http://")
}

func step(op string, kv ...any) map[string]any {
	s := map[string]any{"op": op}
	for i := 0; i+1 < len(kv); i += 2 {
		s[kv[i].(string)] = kv[i+1]
	}
	return s
}

// tidalWrites are the requests of f's log that change the user's account.
func tidalWrites(f *tooltest.TIDALUser) []string {
	return slices.DeleteFunc(f.Log(), func(l string) bool {
		return !strings.HasPrefix(l, "POST /v2/playlists")
	})
}

// checkFeatures runs three sessions through plan (which makes one for a
// list of steps and an elicitation answer): the features besides tools and a
// declined savePlaylistToTidal; an accepted one; and one from a client
// without elicitation.
func checkFeatures(t *testing.T, plan func(steps ...map[string]any) map[string]any,
	env map[string]string, f *tooltest.TIDALUser, portal string, wantPrompts []string) {
	t.Helper()
	dataset := "2016-regione-asia-est-oceania-classi-di-eta"
	save := call("call", "savePlaylistToTidal", map[string]any{"playlistId": "${playlistId}"})
	lines := runFeatures(t, plan(
		list(),
		step("prompts"),
		step("getPrompt", "name", "explore_open_data", "arguments", map[string]any{"question": "How many buses run at night?", "organization": "ministry-of-transport"}),
		step("complete", "ref", map[string]any{"type": "ref/prompt", "name": "discover_music"}, "argument", map[string]any{"name": "mood", "value": "melan"}),
		step("complete", "ref", map[string]any{"type": "ref/prompt", "name": "explore_open_data"}, "argument", map[string]any{"name": "group", "value": "transp"}),
		step("complete", "ref", map[string]any{"type": "ref/resource", "uri": "ckan://{+portal}/dataset/{name}"}, "argument", map[string]any{"name": "portal", "value": "127.0"}),
		step("templates"),
		step("read", "uri", "ckan://"+portal+"/dataset/"+dataset),
		step("read", "uri", "ckan://evil.example.com/dataset/x"),
		step("resources"),
		call("call", "suggestPlaylist", map[string]any{"title": "Dossier",
			"tracks": []any{map[string]any{"isrc": "AUNMG2400011", "title": "4M", "artist": "Air Max '97", "reasoning": "opener"}}}),
		step("listChanged"),
		step("resources"),
		step("read", "uri", "toolport://playlist/${playlistId}.json"),
		step("read", "uri", "toolport://playlist/${playlistId}.m3u8"),
		save,
	), "decline")
	conn := lines[0]
	if conn.Server["title"] == nil || conn.Server["title"] == "" || len(conn.Server["icons"].([]any)) == 0 {
		t.Errorf("getServerVersion() %v: no title or icons", conn.Server)
	}
	for _, tl := range lines[1].Tools {
		if tl.Title == "" || !strings.HasPrefix(tl.Icon, "data:image/svg+xml;base64,") {
			t.Errorf("listTools: %s has title %q, icon %.40q", tl.Name, tl.Title, tl.Icon)
		}
	}
	if len(lines[1].Tools) == 0 {
		t.Errorf("listTools: %+v", lines[1])
	}
	var prompts []string
	for _, p := range lines[2].Prompts {
		prompts = append(prompts, p.Name)
		if p.Title == "" || p.Icon == "" || len(p.Arguments) == 0 {
			t.Errorf("prompt %+v: title, icon and arguments wanted", p)
		}
	}
	if !slices.Equal(prompts, wantPrompts) {
		t.Errorf("listPrompts %v (error %q), want %v", prompts, lines[2].Error, wantPrompts)
	}
	if l := lines[3]; l.Error != "" || !strings.Contains(l.Text, "How many buses run at night?") ||
		!strings.Contains(l.Text, "organization ministry-of-transport") || !strings.Contains(l.Text, "queryDatastore") {
		t.Errorf("getPrompt: error %q, text:\n%s", l.Error, l.Text)
	}
	if l := lines[4]; !slices.Contains(l.Values, "melancholic") {
		t.Errorf("complete mood: %v, error %q", l.Values, l.Error)
	}
	if l := lines[5]; !slices.Equal(l.Values, []string{"transportation", "public-transport"}) {
		t.Errorf("complete group: %v, error %q", l.Values, l.Error)
	}
	if l := lines[6]; !slices.Equal(l.Values, []string{portal}) {
		t.Errorf("complete the dataset template's portal: %v, error %q, want [%s]", l.Values, l.Error, portal)
	}
	for _, tpl := range []string{"ckan://{+portal}/dataset/{name}", "toolport://playlist/{id}.json", "toolport://playlist/{id}.m3u8"} {
		if !slices.Contains(lines[7].Templates, tpl) {
			t.Errorf("listResourceTemplates %v (error %q) lacks %s", lines[7].Templates, lines[7].Error, tpl)
		}
	}
	if l := lines[8]; len(l.Contents) != 1 || l.Contents[0].MIMEType != "application/json" ||
		!strings.Contains(l.Contents[0].Text, "2016 Regione Asia Est Oceania") {
		t.Errorf("readResource ckan dataset: error %q, %+v", l.Error, l.Contents)
	}
	if l := lines[9]; len(l.Contents) != 0 || !strings.Contains(l.Error, "not configured") {
		t.Errorf("readResource on a portal that is not configured: error %q, %+v", l.Error, l.Contents)
	}
	if l := lines[10]; l.Error != "" || len(l.Resources) != 0 || l.ListChanged != 0 {
		t.Errorf("listResources before a playlist is stored: %+v", l)
	}
	sug := lines[11]
	id, _ := sug.StructuredContent["playlistId"].(string)
	if sug.IsError || id == "" {
		t.Fatalf("suggestPlaylist: %+v", sug)
	}
	if l := lines[12]; l.Error != "" || l.ListChanged < 1 {
		t.Errorf("resources/list_changed after suggestPlaylist: %+v", l)
	}
	for _, f := range []string{"json", "m3u8"} {
		uri := "toolport://playlist/" + id + "." + f
		if !slices.ContainsFunc(lines[13].Resources, func(r struct{ URI, Title, MIMEType string }) bool {
			return r.URI == uri && strings.HasPrefix(r.Title, "Dossier")
		}) {
			t.Errorf("listResources %+v (error %q) lacks %s", lines[13].Resources, lines[13].Error, uri)
		}
	}
	// The same bytes as `toolport playlist export`, run after the session:
	// the declined save leaves the playlist as it was read (an accepted one
	// would add its TIDAL id).
	for i, format := range map[int]string{14: "json", 15: "m3u8"} {
		cmd := exec.Command(toolport(t), "playlist", "export", id, "--format", format)
		cmd.Env = testexec.Env(t, env)
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("toolport playlist export %s: %v", format, err)
		}
		if l := lines[i]; len(l.Contents) != 1 || l.Contents[0].Text != string(want) || !strings.Contains(l.Contents[0].Text, "4M") {
			t.Errorf("readResource playlist %s: error %q, %+v\nwant the export:\n%s", format, l.Error, l.Contents, want)
		}
	}
	if l := lines[16]; !l.IsError || !strings.Contains(l.Text, `"error_code":"USER_DECLINED"`) || len(l.Elicited) != 1 ||
		!strings.Contains(l.Elicited[0], "savePlaylistToTidal") {
		t.Errorf("declined savePlaylistToTidal: %+v", l)
	}
	if w := tidalWrites(f); len(w) != 0 {
		t.Errorf("a declined call reached TIDAL: %v", w)
	}

	saveID := call("call", "savePlaylistToTidal", map[string]any{"playlistId": id})
	lines = runFeatures(t, plan(saveID), "accept")
	if l := lines[1]; l.IsError || !strings.Contains(l.Text, `"added":1`) || len(l.Elicited) != 1 {
		t.Errorf("accepted savePlaylistToTidal: %+v", l)
	}
	if ps := f.Playlists(); len(ps) != 1 || ps[0].Name != "Dossier" {
		t.Errorf("TIDAL playlists after accepting %+v", ps)
	}

	// A playlist of its own: saving one already on TIDAL changes nothing.
	lines = runFeatures(t, plan(call("call", "suggestPlaylist", map[string]any{"title": "Second",
		"tracks": []any{map[string]any{"isrc": "AUNMG2400012", "title": "BITTERSWEET", "artist": "Air Max '97", "reasoning": "closer"}}}), save), "")
	if l := lines[2]; l.IsError || !strings.Contains(l.Text, `"added":1`) || l.Elicited != nil {
		t.Errorf("savePlaylistToTidal from a client without elicitation: %+v", l)
	}
	if ps := f.Playlists(); len(ps) != 2 || ps[1].Name != "Second" {
		t.Errorf("TIDAL playlists after the call without elicitation %+v", ps)
	}
}

// TestTypeScriptSDKFeatures has the TypeScript client use what Toolport
// offers besides tools (prompts, completions, resources and their templates,
// list_changed, icons and titles, elicitation) over stdio, with the music
// and ckan packs only, and over HTTP, where every pack is served.
func TestTypeScriptSDKFeatures(t *testing.T) {
	testexec.NPMTools(t)
	t.Run("stdio", func(t *testing.T) {
		env, f, portal := featureBackends(t)
		plan := func(steps ...map[string]any) map[string]any {
			return stdioPlan(t, env, "music,ckan", steps...)
		}
		checkFeatures(t, plan, env, f, portal, []string{"discover_music", "explore_open_data"})
	})
	t.Run("http", func(t *testing.T) {
		env, f, portal := featureBackends(t)
		env["TOOLPORT_API_TOKEN"] = "e2e-token"
		ms := conversationModel(t)
		for _, kv := range ms.Env("anthropic") {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		base := serve(t, env)
		plan := func(steps ...map[string]any) map[string]any {
			return httpPlan(base+"/mcp", "e2e-token", steps...)
		}
		checkFeatures(t, plan, env, f, portal, []string{"discover_music", "explore_open_data", "web_research"})
		// After checkFeatures, which wants no conversation listed at first.
		checkConversationResource(t, base, "e2e-token")
	})
}

// conversationPrompt is the user's message of the chat turn that
// conversationModel answers.
const conversationPrompt = "Make me a night-bus playlist"

// conversationModel is a scripted model whose answer to conversationPrompt
// stores a playlist (a writing tool, so /mcp's sessions are told the
// resources changed) and then says so.
func conversationModel(t *testing.T) *servertest.ModelServer {
	return servertest.NewModelServer(t,
		servertest.Turn{Match: conversationPrompt, Events: []servertest.Event{
			servertest.Text("Here is one for the late ride."),
			servertest.Call("toolu_night_1", "suggestPlaylist", `{"title":"Night Bus","tracks":[`+
				`{"isrc":"AUNMG2400011","title":"4M","artist":"Air Max '97","reasoning":"the last bus"}]}`),
		}},
		servertest.Turn{Match: conversationPrompt, Step: 1, Events: []servertest.Event{
			servertest.Text("Stored as **Night Bus**, one track."),
		}},
	)
}

// apiRequest sends an authenticated request to serve's API and returns the
// body, failing the test on a status other than 200 or 201.
func apiRequest(t *testing.T, method, url, token, body string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, got)
	}
	return got
}

// checkConversationResource runs a chat turn through serve's API (against
// conversationModel) while a TypeScript session is open on its /mcp, then
// has that session list and read the conversation as a resource: the
// Markdown must be the export endpoint's, byte for byte.
func checkConversationResource(t *testing.T, base, token string) {
	t.Helper()
	var conv struct{ ID string }
	if err := json.Unmarshal([]byte(apiRequest(t, "POST", base+"/api/conversations", token, "{}")), &conv); err != nil || conv.ID == "" {
		t.Fatalf("new conversation: %v %+v", err, conv)
	}
	uri := "toolport://conversation/" + url.PathEscape(conv.ID) + ".md"
	p := startSDK(t, httpPlan(base+"/mcp", token,
		step("wait"),
		step("listChanged"),
		step("resources"),
		step("read", "uri", uri),
		step("read", "uri", "toolport://conversation/no-such-conversation.md"),
	))
	if l := p.next(t); l.Op != "connected" {
		t.Fatalf("first line %+v, want connected", l)
	}
	if l := p.next(t); l.Op != "wait" {
		t.Fatalf("line %+v, want wait", l)
	}
	// The session is open: the turn's writing tool must reach it as
	// notifications/resources/list_changed.
	msg, err := json.Marshal(map[string]string{"content": conversationPrompt})
	if err != nil {
		t.Fatal(err)
	}
	// The response is the turn's SSE stream; it ends when the turn does.
	events := apiRequest(t, "POST", base+"/api/conversations/"+conv.ID+"/messages", token, string(msg))
	if !strings.Contains(events, `"type":"tool_call_end"`) || strings.Contains(events, `"type":"tool_call_error"`) ||
		!strings.Contains(events, `"type":"message_end"`) || strings.Contains(events, `"type":"error"`) {
		t.Fatalf("the chat turn's events:\n%s", events)
	}
	export := apiRequest(t, "GET", base+"/api/conversations/"+conv.ID+"/export?format=markdown", token, "")
	for _, s := range []string{conversationPrompt, "Here is one for the late ride.", "suggestPlaylist", "Stored as **Night Bus**"} {
		if !strings.Contains(export, s) {
			t.Fatalf("the export lacks %q:\n%s", s, export)
		}
	}
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	var lines []featureLine
	for _, l := range p.finish(t) {
		var f featureLine
		if err := json.Unmarshal(l.raw, &f); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, f)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines after wait, want 4: %+v\n%s", len(lines), lines, p.stderr.String())
	}
	if l := lines[0]; l.Error != "" || l.ListChanged < 1 {
		t.Errorf("resources/list_changed after the chat turn: %+v", l)
	}
	if l := lines[1]; l.Error != "" || !slices.ContainsFunc(l.Resources, func(r struct{ URI, Title, MIMEType string }) bool {
		return r.URI == uri && r.MIMEType == "text/markdown" && r.Title != ""
	}) {
		t.Errorf("listResources (error %q) lacks %s: %+v", l.Error, uri, l.Resources)
	}
	if l := lines[2]; l.Error != "" || len(l.Contents) != 1 || l.Contents[0].URI != uri ||
		l.Contents[0].MIMEType != "text/markdown" || l.Contents[0].Text != export {
		t.Errorf("readResource %s: error %q, %+v\nwant the export:\n%s", uri, l.Error, l.Contents, export)
	}
	// Not found is -32602 since MCP 2025-11-25 (the Go SDK's ResourceNotFoundError).
	if l := lines[3]; len(l.Contents) != 0 || l.Error != "MCP error -32602: Resource not found" {
		t.Errorf("readResource of an unknown conversation: error %q, %+v", l.Error, l.Contents)
	}
}
