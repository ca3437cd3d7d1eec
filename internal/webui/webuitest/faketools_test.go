package webuitest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// The fake's tools: definitions in the shape of the real GET /api/tools (MCP
// definitions with the tool's pack, whether the model is offered it and why
// not: tidalSearch is not; CONSTRUCTED from the real schemas of
// these tools, trimmed), covering every kind of input the bench builds a
// control for: strings, an enum, integers and numbers with limits, a
// boolean, an array of strings and a free-form object.
func fakeToolDefinitions() []map[string]any {
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	def := func(pack, name, title, desc string, in map[string]any) map[string]any {
		return map[string]any{
			"name": name, "title": title, "description": desc, "pack": pack, "inputSchema": in,
			"outputSchema": map[string]any{"type": "object"},
			"annotations":  map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": pack != "music"},
		}
	}
	defs := []map[string]any{
		def("web", "web_search_brave", "Brave Search", "Searches the web with Brave.", obj(map[string]any{
			"query": map[string]any{"type": "string", "description": "The search query to use", "minLength": 2},
			"count": map[string]any{"type": "integer", "description": "Number of results to return (1-20)", "default": 10, "minimum": 1, "maximum": 20},
		}, "query")),
		def("ckan", "queryDatastore", "Datastore query", "Queries the rows of a CKAN datastore resource.", obj(map[string]any{
			"resourceId": map[string]any{"type": "string", "description": "The resource's id", "minLength": 1, "maxLength": 200},
			"filters":    map[string]any{"type": "object", "description": "Exact-match filters: column name → value", "additionalProperties": true},
		}, "resourceId")),
		def("music", "semanticSearch", "Semantic search", "Finds tracks in the index by meaning.", obj(map[string]any{
			"query":         map[string]any{"type": "string", "description": "Natural language description of the music", "minLength": 1, "maxLength": 2000},
			"limit":         map[string]any{"type": "integer", "description": "Maximum number of tracks to return", "default": 20, "minimum": 1, "maximum": 50},
			"inLibraryOnly": map[string]any{"type": "boolean", "description": "Only return tracks that are in the user's library"},
			"maxEnergy":     map[string]any{"type": "number", "description": "Maximum energy (0-1)", "minimum": 0, "maximum": 1},
		}, "query")),
		def("music", "tidalSearch", "Tidal search", "Searches the Tidal catalogue.", obj(map[string]any{
			"query":      map[string]any{"type": "string", "description": "Search query text", "minLength": 1, "maxLength": 500},
			"searchType": map[string]any{"type": "string", "description": "What to search for: tracks, albums, or both", "enum": []string{"tracks", "albums", "both"}},
			"limit":      map[string]any{"type": "integer", "description": "Maximum number of results per type", "default": 20, "minimum": 1, "maximum": 100},
		}, "query", "searchType")),
		def("music", "batchMetadata", "Track metadata", "Looks up tracks by ISRC.", obj(map[string]any{
			"isrcs": map[string]any{"type": "array", "items": map[string]any{"type": "string", "minLength": 1, "maxLength": 64},
				"description": "ISRCs to look up", "minItems": 1, "maxItems": 100},
		}, "isrcs")),
	}
	// As the server says of a tool whose upstream lacks credentials.
	for _, d := range defs {
		d["offered"] = d["name"] != "tidalSearch"
	}
	defs[3]["unavailable"] = "TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET are not set"
	return defs
}

// toolDefinitions are fakeToolDefinitions with f.notOffered applied.
func (f *fakeAPI) toolDefinitions() []map[string]any {
	defs := fakeToolDefinitions()
	for _, d := range defs {
		if why, ok := f.notOffered[d["name"].(string)]; ok {
			d["offered"], d["unavailable"] = false, why
		}
	}
	return defs
}

func (f *fakeAPI) listTools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tools": f.toolDefinitions()})
}

// toolCall is a call the fake's tool API answered.
type toolCall struct {
	Name string
	Args map[string]any
}

// callTool answers POST /api/tools/{name} as the real server does: the body
// must be a JSON object sent as application/json, and the answer is always a
// result envelope (200), failures included. Like the real registry it checks
// the arguments, so an out-of-range limit is a VALIDATION_ERROR here too.
func (f *fakeAPI) callTool(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	known := false
	for _, d := range fakeToolDefinitions() {
		known = known || d["name"] == name
	}
	if !known {
		apiError(w, http.StatusNotFound, "NOT_FOUND", "no tool named "+name)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		apiError(w, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "the body must be application/json")
		return
	}
	var args map[string]any
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &args); err != nil || args == nil {
		apiError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body must be the tool's arguments as a JSON object")
		return
	}
	f.mu.Lock()
	f.toolCalls = append(f.toolCalls, toolCall{name, args})
	f.mu.Unlock()
	invalid := func(msg string) {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "error": "invalid arguments: " + msg, "error_code": "VALIDATION_ERROR", "retryable": false, "durationMs": 0})
	}
	switch name {
	case "semanticSearch":
		q, _ := args["query"].(string)
		if strings.TrimSpace(q) == "" {
			invalid("query: a non-empty string is required")
			return
		}
		limit := 20.0
		if v, ok := args["limit"]; ok {
			n, isNum := v.(float64)
			if !isNum || n != float64(int(n)) || n < 1 || n > 50 {
				invalid(fmt.Sprintf("limit: %v is not an integer from 1 to 50", v))
				return
			}
			limit = n
		}
		var tracks []any
		for _, tr := range []map[string]any{
			f.track(1, XSSTitle, "The Escapes", "<b>Onerror</b>", 245, 0.912, true, true),
			f.track(2, "Someone Like You", "Adele", "21", 285, 0.874, true, true),
			f.track(3, "Everybody Hurts", "R.E.M.", "Automatic for the People", 320, 0.831, false, true),
		} {
			if args["inLibraryOnly"] == true && tr["inLibrary"] != true {
				continue
			}
			if len(tracks) < int(limit) {
				tracks = append(tracks, tr)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "summary": fmt.Sprintf("Found %d tracks matching '%s'", len(tracks), q), "durationMs": 37, "tracks": tracks})
	case "batchMetadata":
		isrcs, _ := args["isrcs"].([]any)
		if len(isrcs) == 0 {
			invalid("isrcs: at least 1 item is required")
			return
		}
		var tracks, notFound []any
		for i, v := range isrcs {
			s, _ := v.(string)
			if i == 0 {
				tr := f.track(2, "Someone Like You", "Adele", "21", 285, 0, true, true)
				tr["isrc"] = s
				tracks = append(tracks, tr)
			} else {
				notFound = append(notFound, s)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "summary": fmt.Sprintf("%d of %d found", len(tracks), len(isrcs)), "durationMs": 12, "tracks": tracks, "notFound": notFound})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "error": "the fake API does not run " + name, "error_code": "UPSTREAM_ERROR", "retryable": false, "durationMs": 0})
	}
}
