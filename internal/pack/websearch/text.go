package websearch

import (
	"strconv"
	"strings"
)

// The text a model reads of a search (after the summary line, which says
// how many results the query found): a numbered list of Markdown links,
// each with its snippet on the next line, and only the fields that say
// something. The JSON keeps every field for the page's cards and MCP's
// structuredContent.

// Text renders the results.
func (o Output) Text() string {
	var b strings.Builder
	for i, r := range o.Results {
		item(&b, i, r.Title, r.URL)
		line(&b, r.Snippet)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the results and Brave's extra blocks.
func (o BraveOutput) Text() string {
	var b strings.Builder
	for i, r := range o.Results {
		item(&b, i, r.Title, r.URL)
		line(&b, r.Snippet)
		for _, s := range r.ExtraSnippets {
			line(&b, s)
		}
	}
	if len(o.FAQ) > 0 {
		b.WriteString("\nFAQ:\n")
		for i, f := range o.FAQ {
			item(&b, i, f.Question, f.URL)
			line(&b, f.Answer)
		}
	}
	if len(o.Discussions) > 0 {
		b.WriteString("\nDiscussions:\n")
		for i, d := range o.Discussions {
			item(&b, i, d.Title, d.URL)
			line(&b, joinPresent(" · ", d.Forum, count(d.Answers, "answers"), d.Age))
			line(&b, d.Question)
			line(&b, d.TopComment)
		}
	}
	if len(o.Infobox) > 0 {
		b.WriteString("\nInfobox:\n")
		for i, ib := range o.Infobox {
			item(&b, i, ib.Title, ib.URL)
			line(&b, ib.Description)
			line(&b, strings.Join(ib.Attributes, "; "))
		}
	}
	if len(o.News) > 0 {
		b.WriteString("\nNews:\n")
		newsText(&b, o.News)
	}
	if len(o.Videos) > 0 {
		b.WriteString("\nVideos:\n")
		videoText(&b, o.Videos)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the articles.
func (o NewsOutput) Text() string {
	var b strings.Builder
	newsText(&b, o.Results)
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the images: the page, the image itself and its size.
func (o ImageOutput) Text() string {
	var b strings.Builder
	for i, r := range o.Results {
		item(&b, i, r.Title, r.URL)
		size := ""
		if r.Width > 0 && r.Height > 0 {
			size = strconv.Itoa(r.Width) + "×" + strconv.Itoa(r.Height)
		}
		line(&b, joinPresent(" · ", r.ImageURL, size, r.Source))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the videos.
func (o VideoOutput) Text() string {
	var b strings.Builder
	videoText(&b, o.Results)
	return strings.TrimSuffix(b.String(), "\n")
}

func newsText(b *strings.Builder, news []NewsResult) {
	for i, r := range news {
		item(b, i, r.Title, r.URL)
		line(b, joinPresent(" · ", r.Source, r.Age))
		line(b, r.Description)
	}
}

func videoText(b *strings.Builder, videos []VideoResult) {
	for i, r := range videos {
		item(b, i, r.Title, r.URL)
		views := ""
		if r.Views > 0 {
			views = strconv.FormatInt(r.Views, 10) + " views"
		}
		line(b, joinPresent(" · ", r.Creator, r.Publisher, r.Duration, views, r.Age))
		line(b, r.Description)
	}
}

// item writes "N. [title](url)", or the title alone when there is no URL.
func item(b *strings.Builder, i int, title, url string) {
	b.WriteString(strconv.Itoa(i + 1))
	b.WriteString(". ")
	if url == "" {
		b.WriteString(title)
	} else {
		b.WriteByte('[')
		b.WriteString(strings.ReplaceAll(title, "]", `\]`))
		b.WriteString("](")
		b.WriteString(url)
		b.WriteByte(')')
	}
	b.WriteByte('\n')
}

// line writes an indented line under an item, unless s is empty.
func line(b *strings.Builder, s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	b.WriteString("   ")
	b.WriteString(strings.ReplaceAll(s, "\n", " "))
	b.WriteByte('\n')
}

func count(n int, noun string) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n) + " " + noun
}

// joinPresent joins the parts that are not empty.
func joinPresent(sep string, parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
