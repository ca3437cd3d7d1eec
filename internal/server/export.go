package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// MaxExportResultBytes bounds each tool result in a Markdown export: results
// are often whole fetched pages, and a person reading the conversation wants
// the gist. The JSON export keeps them whole.
const MaxExportResultBytes = 4096

// exportBlock is a content block as the agent stores it (see llm.Block).
type exportBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// The Markdown export renders a conversation for a person to read: a
// heading per message, its text as written, tool calls and results as
// fenced JSON (each result clipped at MaxExportResultBytes, with a note
// saying so) and the error that ended a failed turn. It is written as the
// messages are read (markdownHead, then markdownMessage for each), so that
// a large conversation is never held whole.

// markdownHead writes the export's title and opening line.
func markdownHead(b *bufio.Writer, c store.Conversation) {
	title := oneLine(c.Title)
	if title == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "Conversation `%s`, started %s.\n", oneLine(c.ID), c.CreatedAt.UTC().Format(time.RFC3339))
}

// markdownMessage writes message number n (from 1).
func markdownMessage(b *bufio.Writer, n int, m store.Message) {
	role := "User"
	if m.Role == store.RoleAssistant {
		role = "Assistant"
	}
	fmt.Fprintf(b, "\n## %d. %s · %s\n", n, role, m.CreatedAt.UTC().Format(time.RFC3339))
	var blocks []json.RawMessage
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		fence(b, "json", string(m.Content))
	}
	for _, raw := range blocks {
		var bl exportBlock
		if err := json.Unmarshal(raw, &bl); err != nil {
			fence(b, "json", prettyJSON(raw))
			continue
		}
		switch bl.Type {
		case "text":
			if s := strings.TrimSpace(bl.Text); s != "" {
				fmt.Fprintf(b, "\n%s\n", s)
			}
		case "tool_use":
			fmt.Fprintf(b, "\n**Tool call** `%s` (id `%s`):\n", oneLine(bl.Name), oneLine(bl.ID))
			input := prettyJSON(bl.Input)
			if input == "" {
				input = "{}"
			}
			fence(b, "json", input)
		case "tool_result":
			label := "Tool result"
			if bl.IsError {
				label = "Tool error"
			}
			fmt.Fprintf(b, "\n**%s** for `%s`:\n", label, oneLine(bl.ToolUseID))
			out := prettyJSON(bl.Content)
			shown := textclip.Prefix(out, MaxExportResultBytes)
			fence(b, "json", shown)
			if len(shown) < len(out) {
				fmt.Fprintf(b, "\n*Clipped: the first %d of %d bytes are shown; the JSON export has the whole result.*\n", len(shown), len(out))
			}
		default:
			fmt.Fprintf(b, "\n*A %q block:*\n", bl.Type)
			fence(b, "json", prettyJSON(raw))
		}
	}
	if m.Incomplete {
		b.WriteString("\n*This message is incomplete: it was cut short.*\n")
	}
	if e := m.Error; e != nil {
		fmt.Fprintf(b, "\n> **Error** `%s`: %s\n", oneLine(e.Code), oneLine(e.Message))
	}
}

// jsonExport writes the JSON export, GET /api/conversations/{id}'s answer,
// byte for byte, as the messages are read: the head up to the messages'
// "[", then each message as the encoder writes a slice's elements.
type jsonExport struct {
	b *bufio.Writer
	n int
}

func (j *jsonExport) head(c store.Conversation, usage *store.Usage) error {
	h, err := tool.Marshal(conversationWithMessages{conversationJSON: conversationJSON{c.ID, c.Title, c.CreatedAt, c.UpdatedAt, c.Model},
		Usage: usage, Messages: []messageJSON{}})
	if err != nil {
		return err
	}
	_, err = j.b.Write(bytes.TrimSuffix(h, []byte("]}")))
	return err
}

func (j *jsonExport) message(m store.Message) error {
	out, err := tool.Marshal(messageJSON{m.ID, m.Role, m.Content, m.CreatedAt, m.Incomplete, m.Usage, m.Error})
	if err != nil {
		return err
	}
	if j.n > 0 {
		j.b.WriteByte(',')
	}
	j.n++
	_, err = j.b.Write(out)
	return err
}

func (j *jsonExport) end() error {
	_, err := j.b.WriteString("]}\n")
	return err
}

// stickyWriter keeps the first error writing to w (the client went away),
// so that an export stops reading the store once nobody reads it. Each
// write gets timeout (when rc is set): the export holds a store connection,
// which a client that stopped reading must not keep.
type stickyWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration
	err     error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.rc != nil {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// fence writes s as a fenced code block whose fence is longer than any run
// of backticks in s, so that s cannot close it.
func fence(b *bufio.Writer, lang, s string) {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	fmt.Fprintf(b, "\n%s%s\n%s\n%s\n", f, lang, strings.TrimRight(s, "\n"), f)
}

// prettyJSON indents JSON, or returns it as it is when it is not valid.
func prettyJSON(raw json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	return out.String()
}

// oneLine keeps a value that goes into a heading or inline code on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "'")), " ")
}

// exportDisposition is the Content-Disposition of an export: a file named
// after the conversation's title. filename is the ASCII form every client
// reads (the title's ASCII letters and digits, or "conversation");
// filename* (RFC 6266, RFC 8187) the title's letters and digits in any
// script, which browsers prefer, so that a Hebrew title names its file too.
// Both end with the start of the id, so that exports of two conversations
// of the same title differ; neither can hold a path separator, a quote or a
// control character.
func exportDisposition(c store.Conversation, ext string) string {
	ascii := exportFilename(c, ext, func(r rune) bool { return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	intl := exportFilename(c, ext, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) })
	return `attachment; filename="` + ascii + `"; filename*=UTF-8''` + url.PathEscape(intl)
}

// exportFilename is the title's characters that keep allows (lower case,
// runs of others one dash, at most 48 bytes), or "conversation", then the
// id's start and ext.
func exportFilename(c store.Conversation, ext string, keep func(rune) bool) string {
	slug := func(s string, n int) string {
		var b strings.Builder
		dash := false
		for _, r := range strings.ToLower(strings.ToValidUTF8(s, "")) {
			if b.Len()+utf8.RuneLen(r) > n {
				break
			}
			if keep(r) {
				if dash && b.Len() > 0 {
					b.WriteByte('-')
				}
				b.WriteRune(r)
				dash = false
			} else {
				dash = true
			}
		}
		return b.String()
	}
	name := slug(c.Title, 48)
	if name == "" {
		name = "conversation"
	}
	if id := slug(c.ID, 8); id != "" {
		name += "-" + id
	}
	return name + "." + ext
}
