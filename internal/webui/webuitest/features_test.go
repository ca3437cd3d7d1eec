package webuitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// The feature checks run the page against the real chat server (in
// process, on SQLite) with a scripted model and tools that answer with fixed
// results in the shapes of the real packs' (CONSTRUCTED from their output
// types: web search, CKAN dataset search and datastore rows, semantic track
// search), so every card type shows with Hebrew and English content.

type cardQuery struct {
	Query string `json:"query"`
}

type webResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Source  string `json:"source,omitempty"`
}

type webOut struct {
	Results []webResult `json:"results"`
}

func (o webOut) Summary() string { return fmt.Sprintf("%d results", len(o.Results)) }

type orgRef struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

type datasetHit struct {
	Name         string   `json:"name"`
	Title        string   `json:"title"`
	Description  string   `json:"description"`
	Organization orgRef   `json:"organization"`
	Formats      []string `json:"formats"`
	DatasetURL   string   `json:"datasetUrl"`
	PortalURL    string   `json:"portalUrl"`
}

type datasetsOut struct {
	Total    int          `json:"total"`
	Datasets []datasetHit `json:"datasets"`
}

func (o datasetsOut) Summary() string {
	return fmt.Sprintf("%d of %d datasets", len(o.Datasets), o.Total)
}

type field struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

type rowsOut struct {
	Fields  []field          `json:"fields"`
	Records []map[string]any `json:"records"`
	Total   int              `json:"total"`
}

func (o rowsOut) Summary() string { return fmt.Sprintf("%d rows", len(o.Records)) }

type resourceHit struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Format          string `json:"format"`
	URL             string `json:"url"`
	Size            int64  `json:"size"`
	DatastoreActive bool   `json:"datastore_active"`
	PortalURL       string `json:"portalUrl"`
}

type resourcesOut struct {
	Count     int           `json:"count"`
	Resources []resourceHit `json:"resources"`
}

func (o resourcesOut) Summary() string { return fmt.Sprintf("%d resources", len(o.Resources)) }

type previewColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type previewOut struct {
	Format    string           `json:"format"`
	Encoding  string           `json:"encoding"`
	Columns   []previewColumn  `json:"columns"`
	Rows      []map[string]any `json:"rows"`
	PortalURL string           `json:"portalUrl"`
}

func (o previewOut) Summary() string { return fmt.Sprintf("%d rows", len(o.Rows)) }

type trackHit struct {
	TidalID        string  `json:"tidalId,omitempty"`
	ISRC           string  `json:"isrc"`
	Title          string  `json:"title"`
	Artist         string  `json:"artist"`
	Album          string  `json:"album"`
	Duration       float64 `json:"duration"`
	Score          float64 `json:"score"`
	IsIndexed      bool    `json:"isIndexed"`
	Interpretation string  `json:"interpretation"`
}

type tracksOut struct {
	Tracks []trackHit `json:"tracks"`
	Note   string     `json:"note,omitempty"`
}

func (o tracksOut) Summary() string { return fmt.Sprintf("%d tracks", len(o.Tracks)) }

// cardNote is a semanticSearch note in the shape the music pack writes
// (index.Reading.Note), longer than the card's summary line shows.
const cardNote = "The index reads English text; the words in Hebrew script (עצוב) were not read, so the results match only the rest of the query. Search in English, or configure a multilingual embeddings endpoint (TOOLPORT_EMBEDDINGS_URL)."

func cardTools(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	err := reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "web_search_brave", Description: "Searches the web.", Pack: "web"},
			func(ctx context.Context, in cardQuery) (webOut, error) {
				var out webOut
				for i := 1; i <= 7; i++ {
					out.Results = append(out.Results, webResult{Title: fmt.Sprintf("Air quality report %d", i),
						URL: fmt.Sprintf("https://www.example.org/air/%d", i), Snippet: "Measurements of PM2.5 across the country.", Source: map[bool]string{true: "Example Org"}[i == 1]})
				}
				return out, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "searchDatasets", Description: "Searches datasets.", Pack: "ckan"},
			func(ctx context.Context, in cardQuery) (datasetsOut, error) {
				return datasetsOut{Total: 2, Datasets: []datasetHit{
					{Name: "air-quality", Title: "איכות אוויר – תחנות ניטור 2024", Description: "נתוני ניטור איכות האוויר מ-54 תחנות.",
						Organization: orgRef{Name: "moep", Title: "המשרד להגנת הסביבה"}, Formats: []string{"CSV", "XLSX"},
						DatasetURL: "https://data.gov.il/dataset/air-quality", PortalURL: "https://data.gov.il/he/datasets/moep/air-quality"},
					{Name: "noise", Title: "Noise measurements", Organization: orgRef{Name: "city", Title: "City of Haifa"}, Formats: []string{"JSON"},
						DatasetURL: "https://data.gov.il/dataset/noise"},
				}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "queryDatastore", Description: "Queries datastore rows.", Pack: "ckan"},
			func(ctx context.Context, in cardQuery) (rowsOut, error) {
				out := rowsOut{Fields: []field{{"תחנה", "text"}, {"PM2.5", "numeric"}}, Total: 23}
				for i := 1; i <= 23; i++ {
					out.Records = append(out.Records, map[string]any{"תחנה": fmt.Sprintf("חיפה %d", i), "PM2.5": 10 + i})
				}
				return out, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "searchResources", Description: "Searches resources.", Pack: "ckan"},
			func(ctx context.Context, in cardQuery) (resourcesOut, error) {
				return resourcesOut{Count: 2, Resources: []resourceHit{
					{ID: "r1", Name: "תחנות ניטור 2024", Format: "CSV", URL: "https://data.gov.il/files/air.csv", Size: 2048, DatastoreActive: true,
						PortalURL: "https://data.gov.il/he/datasets/moep/air-quality/r1"},
					{ID: "r2", Name: "Noise", Format: "XLSX", URL: "https://data.gov.il/files/noise.xlsx"},
				}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "previewResource", Description: "Previews a file.", Pack: "ckan"},
			func(ctx context.Context, in cardQuery) (previewOut, error) {
				out := previewOut{Format: "csv", Encoding: "windows-1255", PortalURL: "https://data.gov.il/he/datasets/moep/air-quality/r1",
					Columns: []previewColumn{{"תחנה", "string"}, {"PM2.5", "number"}}}
				for i := 1; i <= 3; i++ {
					out.Rows = append(out.Rows, map[string]any{"תחנה": fmt.Sprintf("עכו %d", i), "PM2.5": fmt.Sprint(20 + i)})
				}
				return out, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "semanticSearch", Description: "Finds tracks by meaning.", Pack: "music"},
			func(ctx context.Context, in cardQuery) (tracksOut, error) {
				return tracksOut{Tracks: []trackHit{
					{TidalID: "1781871", ISRC: "GBBKS1000351", Title: "Someone Like You", Artist: "Adele", Album: "21", Duration: 285, Score: 0.91, IsIndexed: true,
						Interpretation: "A bittersweet piano ballad about meeting a former love again."},
					{ISRC: "ILA000000001", Title: "שיר לשלום", Artist: "להקת הנח\"ל", Duration: 200, Score: 0.8, IsIndexed: true,
						Interpretation: "שיר מחאה אופטימי על תקווה לשלום."},
					{ISRC: "QZMCP2300001", Title: "MusicCaps clip -0Gj8-vB1q4@30", Artist: "MusicCaps", Album: "MusicCaps", Duration: 10, Score: 0.7, IsIndexed: true,
						Interpretation: "A ballad with sustained strings and a mellow piano."},
				}, Note: cardNote}, nil
			})),
	)
	if err == nil {
		err = reg.Register(braveCardTools()...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// cardTurns scripts the model: "cards" calls every tool, then answers; a
// Hebrew prompt gets a Hebrew answer with a dataset card; other prompts play
// the ordered answers (first answer, regenerated, edited).
func cardTurns() []servertest.Turn {
	return []servertest.Turn{
		{Match: "short title for this conversation", Events: []servertest.Event{servertest.Text("\"Go snippets and tables.\"")}},
		{Match: "code please", Events: []servertest.Event{servertest.Text(dailyAnswer)}, InputTokens: 100, OutputTokens: 50},
		{Match: "cards", Events: []servertest.Event{servertest.Text("Looking everywhere."),
			servertest.Call("c1", "web_search_brave", `{"query":"air quality"}`),
			servertest.Call("c2", "searchDatasets", `{"query":"air quality"}`),
			servertest.Call("c3", "queryDatastore", `{"query":"haifa"}`),
			servertest.Call("c4", "semanticSearch", `{"query":"bittersweet"}`),
			servertest.Call("c5", "searchResources", `{"query":"air"}`),
			servertest.Call("c6", "previewResource", `{"query":"r1"}`),
			servertest.Call("c7", "local_search_brave", `{"query":"monitoring station haifa"}`),
			servertest.Call("c8", "llm_context_brave", `{"query":"pm2.5"}`),
			servertest.Call("c9", "answer_brave", `{"query":"is haifa's air good?"}`)}, InputTokens: 900, OutputTokens: 40},
		{Match: "cards", Step: 1, Events: []servertest.Event{servertest.Text("Here is what I found.")}, InputTokens: 4000, OutputTokens: 60},
		{Match: "מאגרים", Events: []servertest.Event{servertest.Text("אחפש מאגרים."),
			servertest.Call("h1", "searchDatasets", `{"query":"איכות אוויר"}`)}, InputTokens: 700, OutputTokens: 20},
		{Match: "מאגרים", Step: 1, Events: []servertest.Event{servertest.Text("מצאתי **שני** מאגרים, למשל data.gov.il עם קובצי CSV.\n\n- איכות אוויר 2024\n- Noise measurements")}, InputTokens: 1500, OutputTokens: 50},
		{Events: []servertest.Event{servertest.Text("First answer.")}, InputTokens: 1200, OutputTokens: 80},
		{Events: []servertest.Event{servertest.Text("Second answer, regenerated.")}, InputTokens: 1210, OutputTokens: 90},
		{Events: []servertest.Event{servertest.Text("Answer to the edited question.")}, InputTokens: 1300, OutputTokens: 70},
		{Events: []servertest.Event{servertest.Text("Answered by the other model.")}, InputTokens: 1400, OutputTokens: 30},
	}
}

type featureEnv struct {
	url   string
	db    *sqlstore.DB
	model *servertest.ModelServer
}

func newFeatureEnv(t *testing.T) *featureEnv { return newFeatureEnvTitled(t, false) }

// newFeatureEnvTitled is newFeatureEnv whose agent asks the model for a
// title after a conversation's first answer when titles is set.
func newFeatureEnvTitled(t *testing.T, titles bool) *featureEnv {
	db := newStore(t)
	scripted, ms := scriptedAgent(t, cardTurns()...)
	other, err := llm.NewOpenAI("other-model", llm.Options{APIKey: servertest.APIKey, BaseURL: ms.OpenAIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	scripted.Models = []agent.Model{{Name: "openai:other-model", Provider: other}}
	scripted.Titles = titles
	base := startServer(t, server.Config{Store: db, Registry: cardTools(t)}, server.Wiring{Agent: scripted})
	return &featureEnv{url: base, db: db, model: ms}
}

// storedTexts lists a conversation's messages as role:text from the store.
func (e *featureEnv) storedTexts(t *testing.T, id string) []string {
	c, err := e.db.GetConversation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range c.Messages {
		var blocks []struct{ Type, Text string }
		json.Unmarshal(m.Content, &blocks)
		s := string(m.Role) + ":"
		for _, b := range blocks {
			if b.Type == "text" {
				s += b.Text
			}
		}
		out = append(out, s)
	}
	return out
}

const currentID = `new URLSearchParams(location.search).get('c')`

func artifacts(t *testing.T, sub string) string {
	dir := os.Getenv("TOOLPORT_ARTIFACTS_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, sub)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConversationFeatures drives regenerate, edit and resend, rename,
// search, export, the model picker and token usage as a person does, against
// the real server, checking what the page shows and what the server stored.
func TestConversationFeatures(t *testing.T) {
	e := newFeatureEnv(t)
	dir := artifacts(t, "features")
	b := openPage(t, e.url, Options{}, SetView(desktop(), "light"))
	to := 60 * time.Second

	// A first answer, with its token usage and the context window filling.
	b.Do(t, to, send("hello"), WaitFor(lastAssistant(`?.textContent.includes('First answer.')`)), waitIdle(),
		WaitFor(`!document.getElementById('context-meter').hidden`))
	id := Eval[string](t, b, to, currentID)
	if u := Eval[string](t, b, to, lastAssistant(`.querySelector('.msg-usage').textContent`)); u != "1,200 in · 80 out" {
		t.Errorf("answer usage = %q, want 1,200 in · 80 out", u)
	}
	if c := Eval[string](t, b, to, `document.getElementById('conv-usage').textContent`); c != "1,280 tokens" {
		t.Errorf("conversation usage = %q, want 1,280 tokens", c)
	}
	if m := Eval[string](t, b, to, `document.getElementById('context-meter').getAttribute('aria-label')`); !strings.Contains(m, "12.8%") || !strings.Contains(m, "10,000") {
		t.Errorf("context meter = %q, want 12.8%% of 10,000", m)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-usage"))

	// Regenerate replaces the answer; the server keeps only the new one.
	b.Do(t, to, chromedp.Click(css(".msg-regenerate")),
		WaitFor(lastAssistant(`?.textContent.includes('Second answer, regenerated.')`)), waitIdle())
	if n := Eval[int](t, b, to, `document.querySelectorAll('#messages > li').length`); n != 2 {
		t.Errorf("after regenerate the thread has %d messages, want 2", n)
	}
	if got := strings.Join(e.storedTexts(t, id), "|"); got != "user:hello|assistant:Second answer, regenerated." {
		t.Errorf("stored after regenerate: %s", got)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-regenerated"))

	// Edit and resend, keyboard only: the edit button, the text, Enter.
	b.Do(t, to, chromedp.Focus(css(".msg-edit")), chromedp.KeyEvent("\r"), WaitFor(`document.activeElement.classList.contains('edit-input')`),
		Screenshot(t, dir, "desktop-light-editing"),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.select()`), chromedp.SendKeys(css(".edit-input"), "hello again"), enter(0),
		WaitFor(lastAssistant(`?.textContent.includes('Answer to the edited question.')`)), waitIdle())
	if got := strings.Join(e.storedTexts(t, id), "|"); got != "user:hello again|assistant:Answer to the edited question." {
		t.Errorf("stored after the edit: %s", got)
	}
	if u := Eval[string](t, b, to, `document.querySelector('#messages > li.msg-user .bubble').textContent`); u != "hello again" {
		t.Errorf("the edited bubble shows %q", u)
	}

	// Rename through the dialog.
	b.Do(t, to, chromedp.Click(css("#rename-btn")), chromedp.WaitVisible(css("#rename-input")),
		chromedp.SendKeys(css("#rename-input"), "Renamed chat"), enter(0),
		WaitFor(`document.getElementById('conv-title').textContent === 'Renamed chat'`),
		WaitFor(`[...document.querySelectorAll('.conv-name')].some(e => e.textContent === 'Renamed chat')`))
	if c, _ := e.db.GetConversation(context.Background(), id); c.Title != "Renamed chat" {
		t.Errorf("stored title = %q", c.Title)
	}
	if Eval[string](t, b, to, `document.activeElement.id`) != "rename-btn" {
		t.Errorf("focus did not return to the rename button after the dialog")
	}

	// Search: a second conversation, then the sidebar filtered by text.
	b.Do(t, to, chromedp.Click(css("#new-chat")), send("cards please"), waitIdle(),
		WaitFor(`document.querySelectorAll('.conv').length === 2`),
		chromedp.SendKeys(css("#conv-search"), "edited"),
		WaitFor(`document.querySelectorAll('.conv').length === 1 && document.querySelector('.conv-name').textContent === 'Renamed chat'`),
		Screenshot(t, dir, "desktop-light-search"),
		setField("#conv-search", "zzzz"),
		WaitFor(`document.querySelectorAll('.conv').length === 0 && !document.getElementById('conv-empty').hidden`),
		// A query with no word in it matches nothing, without an error banner.
		setField("#conv-search", "!!!"),
		WaitFor(`document.querySelectorAll('.conv').length === 0 && document.getElementById('conv-empty').textContent === 'No conversation matches.'`),
		WaitForAsync(`new Promise(r => setTimeout(() => r(document.getElementById('load-error').hidden), 800))`),
		setField("#conv-search", ""),
		WaitFor(`document.querySelectorAll('.conv').length === 2`))

	// Export: the download holds the conversation as Markdown.
	downloads := t.TempDir()
	b.Do(t, to, cdpCall(browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}),
		chromedp.Click(css(`.conv[data-id="`+id+`"] .conv-open`)), WaitFor(`document.getElementById('conv-title').textContent === 'Renamed chat'`),
		chromedp.Click(css("#export-md")))
	var md []byte
	waitUntil(t, "the Markdown export to be downloaded", func() bool {
		files, _ := filepath.Glob(filepath.Join(downloads, "*.md"))
		if len(files) == 1 {
			md, _ = os.ReadFile(files[0])
		}
		return len(md) > 0
	})
	if !strings.Contains(string(md), "hello again") || !strings.Contains(string(md), "Answer to the edited question.") || !strings.Contains(string(md), "Renamed chat") {
		t.Errorf("the export lacks the conversation:\n%s", md)
	}

	// The model picker: the choice is stored and the next turn uses it.
	b.Do(t, to, chromedp.WaitVisible(css("#model-picker")),
		setField("#model-picker", "openai:other-model"))
	waitUntil(t, "the model choice to be stored", func() bool {
		c, _ := e.db.GetConversation(context.Background(), id)
		return c.Model == "openai:other-model"
	})
	b.Do(t, to, send("and once more"), waitIdle(), WaitFor(lastAssistant(`?.textContent.includes('Answered by the other model.')`)))
	reqs := e.model.Requests()
	if got := reqs[len(reqs)-1].JSON()["model"]; got != "other-model" {
		t.Errorf("the turn after picking ran on %v, want other-model", got)
	}
	b.Do(t, to, chromedp.Reload(), waitReady(), WaitFor(`document.getElementById('model-picker').value === 'openai:other-model'`),
		Screenshot(t, dir, "desktop-light-picker"))
	for _, v := range []struct {
		size   Viewport
		scheme string
	}{{desktop(), "dark"}, {phone(), "light"}, {phone(), "dark"}} {
		name := fmt.Sprintf("%s-%s-conversation", map[bool]string{true: "phone", false: "desktop"}[v.size == phone()], v.scheme)
		b.Do(t, to, SetView(v.size, v.scheme), Screenshot(t, dir, name))
	}
}

// setField sets a form field's value as typing or choosing does, with the
// input and change events.
func setField(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(e => { e.value = ` + jsString(value) + `; e.dispatchEvent(new Event('input')); e.dispatchEvent(new Event('change')); })(document.querySelector(` + jsString(sel) + `))`)
}

// cdpCall runs one DevTools command on the tab.
func cdpCall[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cmd, params)
		return err
	})
}

// hebrew makes the browser a Hebrew reader's: the languages it asks pages
// in (its own user agent kept) and the locale Intl formats with.
func hebrew() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		ua, err := chromedp.Evaluate[string](`navigator.userAgent`)(ctx, tg)
		if err != nil {
			return fmt.Errorf("read the user agent: %w", err)
		}
		if _, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "he-IL,he"}); err != nil {
			return fmt.Errorf("set the languages: %w", err)
		}
		if _, err := cdp.Call(ctx, tg, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "he_IL"}); err != nil {
			return fmt.Errorf("set the locale: %w", err)
		}
		return nil
	})
}

// waitUntil polls cond until it holds, failing the test after a generous
// bound. It is for what Chromium does on its own, outside the page: writing a
// download, reporting problems on the DevTools connection. State in the page
// is waited for inside it (WaitFor), not polled.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEveryCardType shows each pack's card with its content: web results
// with sites and links, datasets with organisation, formats and the portal
// link, datastore rows as a paged table, tracks with their caption.
func TestEveryCardType(t *testing.T) {
	e := newFeatureEnv(t)
	dir := artifacts(t, "cards")
	b := openPage(t, e.url, Options{}, SetView(desktop(), "light"))
	to := 60 * time.Second
	b.Do(t, to, send("show me cards"), waitIdle(),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 9`),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.tool-card .tool-head').forEach(h => h.click())`))

	type card struct {
		Sites, Links, Orgs, Formats, Portal, Captions []string
		Rows, Pages                                   int
		Range, Note                                   string
	}
	read := func() map[string]card {
		return Eval[map[string]card](t, b, to, `Object.fromEntries([...document.querySelectorAll('.tool-card')].map(c => [c.dataset.tool, {
			Sites: [...c.querySelectorAll('.web-site')].map(e => e.textContent),
			Links: [...c.querySelectorAll('.web-title a, .dataset-title a, a.resource-name')].map(a => a.href),
			Orgs: [...c.querySelectorAll('.dataset-org')].map(e => e.textContent),
			Formats: [...c.querySelectorAll('.chip-format')].map(e => e.textContent),
			Portal: [...c.querySelectorAll('.dataset-portal a')].map(a => a.href),
			Captions: [...c.querySelectorAll('.track-caption')].map(e => e.textContent),
			Rows: c.querySelectorAll('tbody tr, .web-result').length,
			Pages: c.querySelectorAll('.pager').length,
			Range: c.querySelector('.pager-status')?.textContent || '',
			Note: c.querySelector('.result-note')?.textContent || '',
		}]))`)
	}
	got := read()
	web := got["web_search_brave"]
	if len(web.Sites) != 5 || web.Sites[0] != "Example Org" || web.Sites[1] != "example.org" || web.Rows != 5 || web.Range != "1–5 of 7" {
		t.Errorf("web card = %+v, want 5 of 7 results, the publisher or host as the site", web)
	}
	ds := got["searchDatasets"]
	if len(ds.Orgs) != 2 || ds.Orgs[0] != "המשרד להגנת הסביבה" || strings.Join(ds.Formats, ",") != "CSV,XLSX,JSON" ||
		len(ds.Portal) != 2 || ds.Portal[0] != "https://data.gov.il/he/datasets/moep/air-quality" || ds.Portal[1] != "https://data.gov.il/dataset/noise" {
		t.Errorf("datasets card = %+v, want organisations, formats and portal links", ds)
	}
	rows := got["queryDatastore"]
	if rows.Rows != 10 || rows.Range != "1–10 of 23" {
		t.Errorf("datastore card = %+v, want the first 10 of 23 rows", rows)
	}
	res := got["searchResources"]
	if strings.Join(res.Formats, ",") != "CSV,XLSX" || len(res.Links) != 2 ||
		res.Links[0] != "https://data.gov.il/he/datasets/moep/air-quality/r1" || res.Links[1] != "https://data.gov.il/files/noise.xlsx" {
		t.Errorf("resources card = %+v, want formats and links to the portal page (else the file)", res)
	}
	preview := got["previewResource"]
	if preview.Rows != 3 || len(preview.Portal) != 1 || preview.Portal[0] != "https://data.gov.il/he/datasets/moep/air-quality/r1" {
		t.Errorf("preview card = %+v, want the 3 rows as a table and the portal link", preview)
	}
	tracks := got["semanticSearch"]
	if len(tracks.Captions) != 3 || !strings.Contains(tracks.Captions[0], "bittersweet piano ballad") {
		t.Errorf("tracks card = %+v, want each track's caption", tracks)
	}
	if tracks.Note != cardNote {
		t.Errorf("tracks card note %q, want the result's note whole", tracks.Note)
	}
	if p := got["local_search_brave"]; p.Rows != 2 || len(p.Links) != 1 || p.Links[0] != "https://www.example.org/station" ||
		len(p.Sites) != 2 || p.Sites[0] != "1 HaNassi Ave, Haifa" {
		t.Errorf("places card = %+v, want 2 places, the first linked, with addresses", p)
	}
	if c := got["llm_context_brave"]; c.Rows != 1 || len(c.Sites) != 1 || c.Sites[0] != "example.org" {
		t.Errorf("context card = %+v, want its one source and host", c)
	}
	if a := got["answer_brave"]; a.Rows != 1 || len(a.Links) != 1 || a.Links[0] != "https://www.example.org/air/1" {
		t.Errorf("answer card = %+v, want its one citation linked", a)
	}
	placeText := Eval[string](t, b, to, `document.querySelector('.tool-card[data-tool="local_search_brave"] .web-result').textContent`)
	answerText := Eval[string](t, b, to, `document.querySelector('.tool-card[data-tool="answer_brave"] .answer-text').textContent`)
	if !strings.Contains(placeText, "★ 4.5/5 (12)") || !strings.Contains(placeText, "Monday 08:00-16:00") || answerText != "Haifa's air is mostly good [1]." {
		t.Errorf("place %q, answer %q", placeText, answerText)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-cards"))

	// Paging inside a card: Next twice reaches the last rows, Previous
	// comes back; the buttons are disabled at the ends.
	table := `document.querySelector('.tool-card[data-tool="queryDatastore"]')`
	b.Do(t, to, chromedp.Click(css(`.tool-card[data-tool="queryDatastore"] .pager-next`)),
		chromedp.Click(css(`.tool-card[data-tool="queryDatastore"] .pager-next`)),
		WaitFor(table+`.querySelector('.pager-status').textContent === '21–23 of 23'`))
	if n := Eval[int](t, b, to, table+`.querySelectorAll('tbody tr').length`); n != 3 {
		t.Errorf("the last page has %d rows, want 3", n)
	}
	if !Eval[bool](t, b, to, table+`.querySelector('.pager-next').disabled && !`+table+`.querySelector('.pager-prev').disabled`) {
		t.Errorf("on the last page Next should be disabled and Previous enabled")
	}
	if c := Eval[string](t, b, to, table+`.querySelector('tbody td').textContent`); c != "חיפה 21" {
		t.Errorf("the last page starts with %q, want חיפה 21", c)
	}
	b.Do(t, to, chromedp.Click(css(`.tool-card[data-tool="queryDatastore"] .pager-prev`)),
		WaitFor(table+`.querySelector('.pager-status').textContent === '11–20 of 23'`))
	for _, v := range []struct {
		size   Viewport
		scheme string
		name   string
	}{{desktop(), "dark", "desktop-dark-cards"}, {phone(), "light", "phone-light-cards"}, {phone(), "dark", "phone-dark-cards"}} {
		b.Do(t, to, SetView(v.size, v.scheme), Screenshot(t, dir, v.name))
	}
	if w := Eval[int](t, b, to, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px the page is %d px wide: something overflows", w)
	}
}

// TestHebrewConversation opens the page with Hebrew as the browser's
// language: the page's strings are Hebrew and it reads right to left; a
// Hebrew answer and the Hebrew fields of its card run right to left, while
// English fields beside them stay left to right.
func TestHebrewConversation(t *testing.T) {
	e := newFeatureEnv(t)
	dir := artifacts(t, "hebrew")
	b := openPage(t, e.url, Options{}, hebrew(), SetView(desktop(), "light"))
	to := 60 * time.Second
	if got := Eval[[]string](t, b, to, `[document.documentElement.lang, document.documentElement.dir, document.getElementById('new-chat').textContent, document.getElementById('composer-input').placeholder]`); strings.Join(got, "|") != "he|rtl|שיחה חדשה|אפשר לשאול הכול…" {
		t.Errorf("page language, direction and strings = %q, want Hebrew, rtl", got)
	}
	b.Do(t, to, send("אילו מאגרים יש על איכות אוויר?"), waitIdle(),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 1`),
		chromedp.Click(css(".tool-card .tool-head")))
	if q := Eval[string](t, b, to, `document.querySelector('.tool-input dd').textContent`); q != "איכות אוויר" {
		t.Errorf("the call's Hebrew query shows as %q", q)
	}
	dirs := Eval[map[string]string](t, b, to, `(() => {
		const d = (el) => el ? getComputedStyle(el).direction : 'missing';
		const md = [...document.querySelectorAll('#messages .msg-assistant .md p')];
		return {
			userBubble: d(document.querySelector('.msg-user .plain')),
			answer: d(md[md.length - 1]),
			listItem: d(document.querySelector('#messages .msg-assistant .md li')),
			hebrewTitle: d(document.querySelectorAll('.dataset-title')[0]),
			englishTitle: d(document.querySelectorAll('.dataset-title')[1]),
			org: d(document.querySelector('.dataset-org')),
			input: d(document.getElementById('composer-input')),
		};
	})()`)
	want := map[string]string{"userBubble": "rtl", "answer": "rtl", "listItem": "rtl", "hebrewTitle": "rtl", "englishTitle": "ltr", "org": "rtl", "input": "rtl"}
	for k, w := range want {
		if dirs[k] != w {
			t.Errorf("%s direction = %q, want %q", k, dirs[k], w)
		}
	}
	// English typed into the empty (right-to-left) box turns it left to right.
	b.Do(t, to, chromedp.SendKeys(css("#composer-input"), "hello"))
	if d := Eval[string](t, b, to, `getComputedStyle(document.getElementById('composer-input')).direction`); d != "ltr" {
		t.Errorf("the message box with English text is %s, want ltr", d)
	}
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](`(i => { i.value = ''; i.dispatchEvent(new Event('input')); })(document.getElementById('composer-input'))`))
	if got := Eval[string](t, b, to, `document.querySelector('.tool-card .badge.status').textContent`); got != "הושלם" {
		t.Errorf("card status = %q, want the Hebrew הושלם", got)
	}
	// The bench in Hebrew: its strings, and a query field that follows
	// what is typed in it.
	b.Do(t, to, chromedp.Click(css("#bench-btn")), chromedp.Click(css(`.bench-tool[data-tool="semanticSearch"]`)),
		chromedp.WaitVisible(css("#bench-semanticSearch-query")), chromedp.SendKeys(css("#bench-semanticSearch-query"), "שיר עצוב"))
	if got := Eval[[]string](t, b, to, `[document.querySelector('.bench-title').textContent, document.querySelector('.bench-run').textContent,
		getComputedStyle(document.getElementById('bench-semanticSearch-query')).direction]`); strings.Join(got, "|") != "ספסל הכלים|הרצה|rtl" {
		t.Errorf("Hebrew bench = %q", got)
	}
	b.Do(t, to, setField("#bench-semanticSearch-query", ""), chromedp.SendKeys(css("#bench-semanticSearch-query"), "sad song"))
	if d := Eval[string](t, b, to, `getComputedStyle(document.getElementById('bench-semanticSearch-query')).direction`); d != "ltr" {
		t.Errorf("an English query in the Hebrew bench is %s, want ltr", d)
	}
	b.Do(t, to, Screenshot(t, dir, "desktop-light-hebrew-bench"), chromedp.Click(css("#bench-btn")))
	for _, v := range []struct {
		size   Viewport
		scheme string
		name   string
	}{{desktop(), "light", "desktop-light-hebrew"}, {desktop(), "dark", "desktop-dark-hebrew"}, {phone(), "light", "phone-light-hebrew"}, {phone(), "dark", "phone-dark-hebrew"}} {
		b.Do(t, to, SetView(v.size, v.scheme), Screenshot(t, dir, v.name))
	}
	_ = e
}

// axeSource reads axe-core, which scripts/test installs (pinned) from npm.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("TOOLPORT_AXE_CORE")
	if path == "" {
		path = testexec.NPMFile(t, "axe-core/axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("TOOLPORT_AXE_CORE: %v", err)
	}
	return string(b)
}

// axeViolation is one failed axe-core rule with the elements that fail it.
type axeViolation struct {
	ID, Impact, Help string
	Targets          []string
}

const runAxe = `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
	.then(r => r.violations.map(v => ({ID: v.id, Impact: v.impact || '', Help: v.help, Targets: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))`

// reportAxe runs axe-core (already loaded into the page) and fails t with
// each violation, under name.
func reportAxe(t *testing.T, b *Browser, to time.Duration, name string) {
	t.Helper()
	for _, v := range Eval[[]axeViolation](t, b, to, runAxe) {
		t.Errorf("%s: axe %s (%s): %s: %v", name, v.ID, v.Impact, v.Help, v.Targets)
	}
}

// TestAccessibility checks the page with axe-core (WCAG 2.1 A and AA rules:
// names and labels of every control, contrast, ARIA use) in light and dark,
// on desktop and phone, with a conversation of tool cards open, in English
// and Hebrew; and that the keyboard alone reaches every control in a
// sensible order.
func TestAccessibility(t *testing.T) {
	e := newFeatureEnv(t)
	axe := axeSource(t)
	b := openPage(t, e.url, Options{}, SetView(desktop(), "light"))
	to := 90 * time.Second
	b.Do(t, to, send("cards for axe"), waitIdle(),
		WaitFor(`document.querySelectorAll('.tool-card[data-status="completed"]').length === 9`),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.tool-card .tool-head').forEach(h => h.click())`),
		chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "desktop light")
	b.Do(t, to, SetView(desktop(), "dark"))
	reportAxe(t, b, to, "desktop dark")
	b.Do(t, to, SetView(phone(), "light"))
	reportAxe(t, b, to, "phone light")
	b.Do(t, to, SetView(phone(), "dark"))
	reportAxe(t, b, to, "phone dark")
	b.Do(t, to, SetView(desktop(), "light"), chromedp.Click(css("#bench-btn")), chromedp.WaitVisible(css(".bench-form")))
	reportAxe(t, b, to, "tool bench")

	// Keyboard only: from the top of a fresh page, Tab goes through the
	// skip link, the sidebar, the top bar and the thread to the message box,
	// in the order they are read; nothing jumps the order with a positive
	// tabindex.
	b.Do(t, to, chromedp.Navigate(e.url+"/?c="+Eval[string](t, b, to, currentID)), waitReady(),
		WaitFor(`document.querySelectorAll('#messages > li').length === 2`))
	if n := Eval[int](t, b, to, `[...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0).length`); n != 0 {
		t.Errorf("%d elements have a positive tabindex", n)
	}
	var order []string
	for range 40 {
		b.Do(t, to, chromedp.KeyEvent("\t"))
		order = append(order, Eval[string](t, b, to, `(e => e.id || e.className.split(' ').filter(c => !c.startsWith('btn')).join('.') || e.tagName.toLowerCase())(document.activeElement)`))
		if order[len(order)-1] == "composer-input" {
			break
		}
	}
	want := []string{"skip-link", "new-chat", "conv-search", "conv-open", "conv-delete", "model-picker", "rename-btn", "export-md", "export-json", "bench-btn", "settings-btn", "msg-edit", "tool-head", "tool-head", "tool-head", "tool-head", "tool-head", "tool-head", "tool-head", "tool-head", "tool-head", "copy-btn.msg-copy", "msg-regenerate", "composer-input"}
	var got []string
	for _, o := range order {
		// "Jump to latest" is a tab stop only while the view is scrolled
		// up, which moving the focus through the cards may or may not do
		// (it depends on the window's height): not part of the fixed order.
		if o == "jump-latest" {
			continue
		}
		if len(got) == 0 || got[len(got)-1] != o || o == "tool-head" {
			got = append(got, o)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Tab order:\n got %q\nwant %q", got, want)
	}
	// Enter on the skip link's target is the message box; Escape closes an
	// edit without sending.
	b.Do(t, to, chromedp.Focus(css(".msg-edit")), chromedp.KeyEvent("\r"), WaitFor(`document.activeElement.classList.contains('edit-input')`),
		chromedp.KeyEvent("\x1b"), WaitFor(`document.activeElement.classList.contains('msg-edit') && !document.querySelector('.edit-form')`))

	// The Hebrew page passes the same rules.
	ua := Eval[string](t, b, to, `navigator.userAgent`)
	b.Do(t, to, cdpCall(emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "he-IL,he"}),
		chromedp.Reload(), waitReady(), WaitFor(`document.documentElement.dir === 'rtl'`), chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "Hebrew")
}
