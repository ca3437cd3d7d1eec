package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Role is who wrote a message.
type Role string

// The two roles of a conversation. Tool results travel in user messages, as in
// the Anthropic Messages API.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content [Block].
type BlockType string

// The content block types of the stored conversation format.
const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Message is one turn of a conversation: a role and its content blocks.
//
// Its JSON form is {"role":"user","content":[blocks…]}. When decoding, a
// content that is a plain string is accepted as a single text block.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UserText returns a user message holding one text block.
func UserText(s string) Message {
	return Message{Role: RoleUser, Content: []Block{Text(s)}}
}

// Text returns the concatenated text of m's text blocks.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// UnmarshalJSON decodes a stored message, checking its role and blocks.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("llm: decoding message: %w", err)
	}
	if raw.Role != RoleUser && raw.Role != RoleAssistant {
		return fmt.Errorf("llm: message role %q: want %q or %q", raw.Role, RoleUser, RoleAssistant)
	}
	content := bytes.TrimSpace(raw.Content)
	var blocks []Block
	switch {
	case len(content) > 0 && content[0] == '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return fmt.Errorf("llm: decoding message content: %w", err)
		}
		blocks = []Block{Text(s)}
	default:
		var err error
		if blocks, err = DecodeBlocks(content); err != nil {
			return err
		}
	}
	*m = Message{Role: raw.Role, Content: blocks}
	return nil
}

// Block is one content block: text, a tool call (tool_use) or a tool's result
// (tool_result). Which fields are used depends on Type.
//
// The JSON encodings are exactly
//
//	{"type":"text","text":"…"}
//	{"type":"tool_use","id":"…","name":"…","input":{…}}
//	{"type":"tool_result","tool_use_id":"…","content":…,"is_error":true}
//
// where is_error is present only when true.
//
// Decoding is strict about what the model APIs need and lenient about the
// rest: unknown fields are ignored, but a block of an unknown type is
// rejected with an error naming it, rather than silently dropped, because a
// conversation sent back to a model without one of its blocks would no longer
// be the conversation that was stored.
type Block struct {
	Type BlockType

	// Text is the text of a text block. In a tool_result block it is, when
	// set, what the model reads instead of Content: the tool's own text
	// form of its result (tool.Texter), Content staying the JSON that
	// other readers (the page's cards) use.
	Text string

	// ID and Name identify a tool_use block's call; Input is the call's
	// arguments, a JSON object.
	ID    string
	Name  string
	Input json.RawMessage

	// ToolUseID is the ID of the tool_use block a tool_result answers.
	// Content is the tool's result (for Toolport tools, the result envelope
	// JSON); IsError marks a failed call.
	ToolUseID string
	Content   json.RawMessage
	IsError   bool
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUse returns a tool_use block. A nil or empty input stands for {}.
func ToolUse(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns a tool_result block answering the tool_use block toolUseID.
func ToolResult(toolUseID string, content json.RawMessage, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// emptyObject is the input of a tool call that has no arguments.
var emptyObject = json.RawMessage(`{}`)

// inputOrEmpty returns in, or {} when in is empty or null.
func inputOrEmpty(in json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(in)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return emptyObject
	}
	return in
}

// MarshalJSON encodes b in its stored form.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(struct {
			Type BlockType `json:"type"`
			Text string    `json:"text"`
		}{b.Type, b.Text})
	case BlockToolUse:
		input := inputOrEmpty(b.Input)
		if !json.Valid(input) {
			return nil, fmt.Errorf("llm: tool_use block %q: input is not valid JSON", b.ID)
		}
		return json.Marshal(struct {
			Type  BlockType       `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	case BlockToolResult:
		// The content (a tool's whole result) is checked and compacted in
		// one pass, as json.Marshal would write it as a json.RawMessage.
		id, err := json.Marshal(b.ToolUseID)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		out.Grow(len(b.Content) + len(id) + 64)
		out.WriteString(`{"type":"tool_result","tool_use_id":`)
		out.Write(id)
		out.WriteString(`,"content":`)
		if content := bytes.TrimSpace(b.Content); len(content) == 0 {
			out.WriteString(`null`)
		} else if err := compactRaw(&out, content); err != nil {
			return nil, fmt.Errorf("llm: tool_result block for %q: content is not valid JSON", b.ToolUseID)
		}
		if b.IsError {
			out.WriteString(`,"is_error":true`)
		}
		if b.Text != "" {
			text, err := json.Marshal(b.Text)
			if err != nil {
				return nil, err
			}
			out.WriteString(`,"text":`)
			out.Write(text)
		}
		out.WriteByte('}')
		return out.Bytes(), nil
	}
	return nil, fmt.Errorf("llm: cannot encode content block of type %q", b.Type)
}

// compactRaw appends raw to out as json.Marshal writes a json.RawMessage:
// compacted, with <, >, &, U+2028 and U+2029 escaped. It fails, leaving out
// as it was, when raw is not valid JSON.
func compactRaw(out *bytes.Buffer, raw []byte) error {
	start := out.Len()
	if err := json.Compact(out, raw); err != nil {
		out.Truncate(start)
		return err
	}
	if c := out.Bytes()[start:]; bytes.ContainsAny(c, "<>&\u2028\u2029") {
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, c)
		out.Truncate(start)
		out.Write(escaped.Bytes())
	}
	return nil
}

// MarshalBlocks is json.Marshal(blocks), without json.Marshal's second
// pass over what each block's MarshalJSON wrote (compact JSON already):
// a turn's answer is saved after every model call, tool results and all.
func MarshalBlocks(blocks []Block) ([]byte, error) {
	if blocks == nil {
		return []byte(`null`), nil
	}
	out := []byte{'['}
	for i, b := range blocks {
		enc, err := b.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("json: error calling MarshalJSON for type llm.Block: %w", err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, enc...)
	}
	return append(out, ']'), nil
}

// UnmarshalJSON decodes a stored block; see [Block] for what it accepts.
func (b *Block) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type      *BlockType      `json:"type"`
		Text      *string         `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   *bool           `json:"is_error"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("llm: decoding content block: %w", err)
	}
	if raw.Type == nil {
		return errors.New(`llm: content block has no "type"`)
	}
	switch *raw.Type {
	case BlockText:
		if raw.Text == nil {
			return errors.New(`llm: text block has no "text"`)
		}
		*b = Text(*raw.Text)
	case BlockToolUse:
		if raw.ID == "" || raw.Name == "" {
			return errors.New(`llm: tool_use block needs a non-empty "id" and "name"`)
		}
		input := inputOrEmpty(raw.Input)
		if t := bytes.TrimSpace(input); t[0] != '{' {
			return fmt.Errorf("llm: tool_use block %q: input must be a JSON object", raw.ID)
		}
		*b = ToolUse(raw.ID, raw.Name, bytes.Clone(input))
	case BlockToolResult:
		if raw.ToolUseID == "" {
			return errors.New(`llm: tool_result block needs a non-empty "tool_use_id"`)
		}
		content := raw.Content
		if bytes.Equal(bytes.TrimSpace(content), []byte("null")) {
			content = nil
		}
		*b = ToolResult(raw.ToolUseID, bytes.Clone(content), raw.IsError != nil && *raw.IsError)
		if raw.Text != nil {
			b.Text = *raw.Text
		}
	default:
		return fmt.Errorf("llm: unsupported content block type %q (want text, tool_use or tool_result)", *raw.Type)
	}
	return nil
}

// DecodeBlocks decodes a stored JSON array of content blocks, such as the
// content column of a message. null decodes to no blocks.
func DecodeBlocks(data []byte) ([]Block, error) {
	var blocks []Block
	if err := json.Unmarshal(data, &blocks); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syn) || errors.As(err, &typ) {
			return nil, fmt.Errorf("llm: decoding content blocks: %w", err)
		}
		return nil, err
	}
	return blocks, nil
}
