package server

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// Page sizes of GET /api/conversations.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	var model *string
	if name := s.agent.ModelName(); name != "" {
		model = &name
	}
	v := struct {
		Version         string  `json:"version"`
		Model           *string `json:"model"`
		ModelConfigured bool    `json:"modelConfigured"`
		ModelHelp       string  `json:"modelHelp,omitempty"`
		Tools           int     `json:"tools"`
		// OfferedTools are the names of the tools the model is offered.
		OfferedTools []string `json:"offeredTools"`
		// Models are those a conversation can choose, the default first.
		Models []modelJSON `json:"models"`
		// MCPServers are the attached MCP servers: connected or why not,
		// and their tools' names.
		MCPServers []mcphost.Status `json:"mcpServers"`
	}{Version: s.cfg.Version, Model: model, ModelConfigured: s.agent.ModelConfigured(), Tools: len(s.cfg.Registry.Tools()),
		OfferedTools: []string{}, Models: s.modelsJSON(), MCPServers: []mcphost.Status{}}
	if s.host != nil {
		v.MCPServers = s.host.Status()
		for i := range v.MCPServers {
			if v.MCPServers[i].Tools == nil { // a server never reached: [] rather than null
				v.MCPServers[i].Tools = []string{}
			}
		}
	}
	for _, t := range s.offered.Tools() {
		v.OfferedTools = append(v.OfferedTools, t.Name())
	}
	if !v.ModelConfigured {
		v.ModelHelp = s.agent.ModelHelp()
	}
	writeJSON(w, http.StatusOK, v)
}

// conversationJSON is a conversation in a listing.
type conversationJSON struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Model is the conversation's chosen model; absent for the default
	// (and in listings).
	Model string `json:"model,omitempty"`
}

type messageJSON struct {
	ID         string          `json:"id"`
	Role       store.Role      `json:"role"`
	Content    json.RawMessage `json:"content"`
	CreatedAt  time.Time       `json:"createdAt"`
	Incomplete bool            `json:"incomplete"`
	Usage      *store.Usage    `json:"usage,omitempty"`
	// Error is the failure that ended the turn, as its error event showed it.
	Error *store.MessageError `json:"error,omitempty"`
}

func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Title string `json:"title"`
	}
	if !s.decodeBody(w, r, &body, true) {
		return
	}
	c, err := s.cfg.Store.CreateConversation(r.Context(), store.Conversation{Title: strings.TrimSpace(body.Title)})
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	s.changes.Changed()
	writeJSON(w, http.StatusCreated, struct {
		ID        string    `json:"id"`
		Title     string    `json:"title"`
		CreatedAt time.Time `json:"createdAt"`
	}{c.ID, c.Title, c.CreatedAt})
}

// The cursor of a conversation listing is opaque to clients; it holds the
// offset of the next page.
func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, bool) {
	if c == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "o:") {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[2:]))
	return n, err == nil && n >= 0
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := DefaultPageSize
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "limit must be an integer from 1 to "+strconv.Itoa(MaxPageSize))
			return
		}
		limit = n
	}
	offset, ok := decodeCursor(q.Get("cursor"))
	if !ok {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "cursor is not one this server gave out")
		return
	}
	opt := store.ListOptions{Limit: limit, Offset: offset}
	var page store.ConversationPage
	var err error
	// q searches titles and message text (see store.Conversations); a
	// blank q lists everything.
	if query := strings.TrimSpace(q.Get("q")); query != "" {
		page, err = s.cfg.Store.SearchConversations(r.Context(), query, opt)
	} else {
		page, err = s.cfg.Store.ListConversations(r.Context(), opt)
	}
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	// A search's results carry a snippet of the message that matched.
	type listed struct {
		conversationJSON
		Snippet string `json:"snippet,omitempty"`
	}
	out := struct {
		Conversations []listed `json:"conversations"`
		NextCursor    *string  `json:"nextCursor"`
	}{Conversations: make([]listed, 0, len(page.Conversations))}
	for _, c := range page.Conversations {
		out.Conversations = append(out.Conversations, listed{conversationJSON{c.ID, c.Title, c.CreatedAt, c.UpdatedAt, c.Model}, c.Snippet})
	}
	if next := offset + len(page.Conversations); len(page.Conversations) > 0 && next < page.Total {
		cur := encodeCursor(next)
		out.NextCursor = &cur
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	c, err := s.cfg.Store.GetConversation(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, conversationOut(c))
}

// conversationWithMessages is a conversation as GET /api/conversations/{id}
// and the JSON export answer it.
type conversationWithMessages struct {
	conversationJSON
	// Usage sums the token usage of the messages; absent when none has any.
	Usage    *store.Usage  `json:"usage,omitempty"`
	Messages []messageJSON `json:"messages"`
}

func conversationOut(c store.Conversation) conversationWithMessages {
	out := conversationWithMessages{conversationJSON: conversationJSON{c.ID, c.Title, c.CreatedAt, c.UpdatedAt, c.Model},
		Usage: usageTotal(c.Messages), Messages: make([]messageJSON, 0, len(c.Messages))}
	for _, m := range c.Messages {
		out.Messages = append(out.Messages, messageJSON{m.ID, m.Role, m.Content, m.CreatedAt, m.Incomplete, m.Usage, m.Error})
	}
	return out
}

// renameConversation sets a conversation's title: {"title": "…"}, trimmed,
// 1 to store.MaxTitleBytes bytes of valid UTF-8 without control characters,
// and/or its model: {"model": "…"}, one GET /api/info lists or "" for the
// default. It answers the conversation without its messages.
func (s *Server) renameConversation(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	// json.Unmarshal would quietly turn invalid UTF-8 into U+FFFD.
	if !utf8.Valid(body) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body is not valid UTF-8")
		return
	}
	var in struct {
		Title *string `json:"title"`
		Model *string `json:"model"`
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `the request body is empty: {"title": "…"} is required`)
		return
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body is not valid JSON for this endpoint: "+jsonError(err))
		return
	}
	if in.Title == nil && in.Model != nil {
		s.changeModel(w, r, *in.Model)
		return
	}
	if in.Title == nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"title" must be a string`)
		return
	}
	title := strings.TrimSpace(*in.Title)
	switch {
	case title == "":
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"title" must not be empty`)
		return
	case len(title) > store.MaxTitleBytes:
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"title" must be at most `+strconv.Itoa(store.MaxTitleBytes)+" bytes")
		return
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `"title" must be one line without control characters`)
		return
	}
	if in.Model != nil && !s.setModel(w, r, r.PathValue("id"), *in.Model) {
		return
	}
	c, err := s.cfg.Store.RenameConversation(r.Context(), r.PathValue("id"), title)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if in.Model != nil {
		c.Model = strings.TrimSpace(*in.Model)
	}
	s.changes.Changed() // the title /mcp's resource list shows
	writeJSON(w, http.StatusOK, conversationJSON{c.ID, c.Title, c.CreatedAt, c.UpdatedAt, c.Model})
}

// exportConversation answers the whole conversation as a download:
// format=markdown (the default) for a person to read, format=json for the
// stored conversation, in the shape GET /api/conversations/{id} answers.
//
// It is streamed: written as the store reads the messages, one at a time,
// so that its memory is bounded by the largest message, not the
// conversation. A failure once the answer has started cannot change its
// status, so it aborts the response: the client sees a broken download,
// never a short file that looks whole.
func (s *Server) exportConversation(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "markdown"
	}
	if format != "markdown" && format != "json" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "format must be markdown or json")
		return
	}
	sw := &stickyWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.WriteTimeout}
	b := bufio.NewWriterSize(sw, 64<<10)
	j := &jsonExport{b: b}
	started, n := false, 0
	head := func(c store.Conversation, usage *store.Usage) error {
		ctype, ext := "text/markdown; charset=utf-8", "md"
		if format == "json" {
			ctype, ext = "application/json; charset=utf-8", "json"
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Disposition", exportDisposition(c, ext))
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		started = true
		if format == "json" {
			return j.head(c, usage)
		}
		markdownHead(b, c)
		return sw.err
	}
	each := func(m store.Message) error {
		n++
		if format == "json" {
			return j.message(m)
		}
		markdownMessage(b, n, m)
		return sw.err
	}
	err := s.cfg.Store.StreamConversation(r.Context(), r.PathValue("id"), head, each)
	if err == nil && format == "json" {
		err = j.end()
	}
	if err == nil {
		err = b.Flush()
	}
	switch {
	case err == nil:
	case !started:
		s.storeError(w, r, err)
	default:
		if sw.err == nil && r.Context().Err() == nil {
			s.logger.ErrorContext(r.Context(), "export", "conversation", r.PathValue("id"), "error", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// listTools answers the MCP definitions of the tools, each with the pack it
// belongs to, so that a client can group them (the page's tool bench does).
func (s *Server) listTools(w http.ResponseWriter, r *http.Request) {
	tools := s.cfg.Registry.Tools()
	servers := s.attachedTools()
	defs := make([]map[string]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		d, err := toolDefinition(t)
		if err == nil {
			_, offered := s.offered.Lookup(t.Name())
			err = addField(d, "offered", offered)
		}
		why := t.Unavailable()
		if st, ok := servers[t.Name()]; ok && err == nil {
			err = addField(d, "server", st.Name)
			if why == "" && !st.Connected && st.Error != "" {
				why = fmt.Sprintf("MCP server %q is not connected: %s", st.Name, st.Error)
			}
		}
		if why != "" && err == nil {
			err = addField(d, "unavailable", why)
		}
		if err != nil {
			s.logger.ErrorContext(r.Context(), "tool definitions", "tool", t.Name(), "error", err)
			writeError(w, http.StatusInternalServerError, "INTERNAL", "the tool definitions could not be built")
			return
		}
		defs = append(defs, d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": defs})
}

// attachedTools maps each attached MCP server's tool to its server's status.
func (s *Server) attachedTools() map[string]mcphost.Status {
	out := map[string]mcphost.Status{}
	if s.host == nil {
		return out
	}
	for _, st := range s.host.Status() {
		for _, name := range st.Tools {
			out[name] = st
		}
	}
	return out
}

// addField sets d[key] to v as JSON.
func addField(d map[string]json.RawMessage, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d[key] = raw
	return nil
}

// toolDefinition is t's MCP definition with "pack" (and "notice", when the
// tool has one) added.
func toolDefinition(t *tool.Tool) (map[string]json.RawMessage, error) {
	raw, err := t.DefinitionJSON(tool.FormatMCP)
	if err != nil {
		return nil, err
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	pack, err := json.Marshal(t.Spec().Pack)
	if err != nil {
		return nil, err
	}
	d["pack"] = pack
	if n := t.Spec().Notice; n != "" {
		if d["notice"], err = json.Marshal(n); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, ok := s.cfg.Registry.Lookup(name); !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no tool named "+strconv.Quote(name)+" (see GET /api/tools)")
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body must be the tool's arguments as a JSON object")
		return
	}
	res := s.cfg.Registry.Call(r.Context(), name, body)
	s.metrics.observeTool(name, res)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(append([]byte(res.JSON), '\n'))
}
