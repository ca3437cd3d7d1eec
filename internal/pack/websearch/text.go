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
			line(&b, joinNonEmpty(" · ", d.Forum, count(d.Answers, "answers"), d.Age))
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
		line(&b, joinNonEmpty(" · ", r.ImageURL, size, r.Source))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the videos.
func (o VideoOutput) Text() string {
	var b strings.Builder
	videoText(&b, o.Results)
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the places, each with one line of what a visitor asks:
// address, phone, rating, today's hours, distance, price, kinds; then the
// description, when asked for.
func (o LocalOutput) Text() string {
	var b strings.Builder
	for i, p := range o.Places {
		item(&b, i, p.Name, p.URL)
		rating := ""
		if p.Rating > 0 {
			rating = strconv.FormatFloat(p.Rating, 'g', -1, 64)
			if p.RatingMax > 0 {
				rating += "/" + strconv.FormatFloat(p.RatingMax, 'g', -1, 64)
			}
			if p.Reviews > 0 {
				rating += " (" + count(p.Reviews, "reviews") + ")"
			}
		}
		where := ""
		if p.Latitude != nil && p.Longitude != nil {
			where = strconv.FormatFloat(*p.Latitude, 'f', -1, 64) + "," + strconv.FormatFloat(*p.Longitude, 'f', -1, 64)
		}
		line(&b, joinNonEmpty(" · ", p.Address, p.Phone, rating, p.HoursToday, p.Distance, p.PriceRange,
			strings.Join(p.Categories, ", "), where))
		line(&b, p.Description)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders each source's link (its bare URL when untitled) and date,
// then its passages, whose line breaks are kept: they may be code or tables.
func (o LLMContextOutput) Text() string {
	var b strings.Builder
	for i, s := range o.Sources {
		if s.Title == "" {
			item(&b, i, s.URL, "")
		} else {
			item(&b, i, s.Title, s.URL)
		}
		line(&b, s.Date)
		for _, sn := range s.Snippets {
			block(&b, sn)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text renders the answer, whose [n] marks cite the numbered list of links
// after it.
func (o AnswerOutput) Text() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(o.Answer))
	if len(o.Citations) > 0 {
		b.WriteString("\n\nCitations:\n")
		for i, c := range o.Citations {
			n := c.Number
			if n <= 0 {
				n = i + 1
			}
			item(&b, n-1, c.URL, "")
			line(&b, c.Snippet)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func newsText(b *strings.Builder, news []NewsResult) {
	for i, r := range news {
		item(b, i, r.Title, r.URL)
		line(b, joinNonEmpty(" · ", r.Source, r.Age))
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
		line(b, joinNonEmpty(" · ", r.Creator, r.Publisher, r.Duration, views, r.Age))
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

// block writes s indented under an item, keeping its line breaks, unless
// it is blank.
func block(b *strings.Builder, s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	b.WriteString("   ")
	b.WriteString(strings.ReplaceAll(s, "\n", "\n   "))
	b.WriteByte('\n')
}

func count(n int, noun string) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n) + " " + noun
}

// joinNonEmpty joins the parts that are not blank, each trimmed.
func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, sep)
}
