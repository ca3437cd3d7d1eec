package agent

import (
	"context"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/textclip"
)

// Bounds of the call that names a conversation ([Config.Titles]).
const (
	// TitleMaxTokens bounds the model's answer: a title of a few words.
	TitleMaxTokens = 40
	// DefaultTitleTimeout bounds the call, within the turn's own bounds.
	DefaultTitleTimeout = 15 * time.Second
	// titleInputRunes bounds each of the question and the answer the
	// model is shown: their starts say what the conversation is about.
	titleInputRunes = 1500
)

// titleSystem is what the titling call asks of the model.
const titleSystem = "You write the titles of chat conversations. Reply with the title only: " +
	"at most six words, in the language of the user's message, without quotes, " +
	"without a full stop at the end, and without the word \"title\"."

// titlePrompt is the titling call's one user message: the conversation's
// first question and answer, each cut at titleInputRunes characters.
func titlePrompt(question, answer string) string {
	return "Write a short title for this conversation.\n\nUser: " + textclip.Runes(question, titleInputRunes) +
		"\n\nAssistant: " + textclip.Runes(answer, titleInputRunes)
}

// cleanTitle makes a model's reply a title: its first non-blank line,
// without a "Title:" label, wrapping quotes or markup, or a final full
// stop, cut as [Title] cuts; "" when nothing is left.
func cleanTitle(reply string) string {
	line := ""
	for l := range strings.Lines(reply) {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	if l, ok := strings.CutPrefix(strings.ToLower(line), "title:"); ok {
		line = strings.TrimSpace(line[len(line)-len(l):])
	}
	line = strings.TrimFunc(line, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`*#_«»“”‘’„", r)
	})
	line = strings.TrimRight(line, ".。")
	return Title(line)
}

// nameConversation asks the model for a title after the conversation's
// first answer and puts it in place of the provisional one (the first
// message's words) unless a person renamed the conversation meanwhile.
// It is bounded (TitleMaxTokens, the title timeout) and best effort: a
// failure keeps the provisional title and is logged.
func (t *turn) nameConversation(ctx context.Context, answer string) {
	if t.titleFrom == "" || t.model.Provider == nil || strings.TrimSpace(answer) == "" || ctx.Err() != nil {
		return
	}
	d := t.a.cfg.TitleTimeout
	if d <= 0 {
		d = DefaultTitleTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	s, err := t.model.Provider.Stream(ctx, llm.Request{System: titleSystem, MaxTokens: TitleMaxTokens,
		Messages: []llm.Message{llm.UserText(titlePrompt(t.question, answer))}})
	var resp *llm.Response
	if err == nil {
		resp, err = llm.Collect(s)
	}
	if err != nil {
		t.a.logger.WarnContext(ctx, "the model could not name the conversation", "conversation", t.convID, "error", modelErrorEvent(err).Message)
		return
	}
	t.span.SetAttributes(attribute.Int64("chat.title.input_tokens", resp.Usage.InputTokens),
		attribute.Int64("chat.title.output_tokens", resp.Usage.OutputTokens))
	title := cleanTitle(resp.Message.Text())
	if title == "" {
		return
	}
	if _, err := t.w.ReplaceTitle(ctx, t.convID, t.titleFrom, title); err != nil {
		t.a.logger.WarnContext(ctx, "saving the conversation's title failed", "conversation", t.convID, "error", err)
	}
}
