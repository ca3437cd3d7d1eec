package webfetch

import (
	"strconv"
	"strings"
)

// Text is what a model reads of a fetched page (after the summary line,
// which names the title and the part returned): the URL when a redirect
// changed it, where to go on when there is more, the notice, then the
// content itself, unescaped. The
// JSON's other fields (totalLines, contentType, lang…) stay in the
// structured result.
func (o Output) Text() string {
	var b strings.Builder
	b.Grow(len(o.URL) + len(o.Notice) + len(o.Content) + 64)
	if o.URL != o.requested {
		b.WriteString("URL: " + o.URL + "\n")
	}
	switch {
	case o.NextStartIndex != nil:
		b.WriteString("More: start_index " + strconv.Itoa(*o.NextStartIndex) + "\n")
	case o.HasMore && o.NextOffset > 0:
		b.WriteString("More: offset " + strconv.Itoa(o.NextOffset) + "\n")
	}
	if o.Notice != "" {
		b.WriteString("Notice: " + o.Notice + "\n")
	}
	if o.Raw {
		b.WriteString("Raw " + o.ContentType + ":\n")
	}
	b.WriteByte('\n')
	b.WriteString(o.Content)
	return b.String()
}
