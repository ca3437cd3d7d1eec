package brave

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

func TestSearchSendsSnippetGoggleAndFilterParameters(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "web_search_what_is_semantic_kernel.json"))
	goggles := []string{"https://raw.githubusercontent.com/brave/goggles-quickstart/main/goggles/tech_blogs.goggle", "$boost=3,site=go.dev"}
	_, err := c.Search(context.Background(), &SearchParams{
		Query: "go", ExtraSnippets: true, Goggles: goggles, ResultFilter: []string{"web", "faq", "news"},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := last().URL.Query()
	if q.Get("extra_snippets") != "true" || q.Get("result_filter") != "web,faq,news" || !slices.Equal(q["goggles"], goggles) {
		t.Errorf("query = %v", q)
	}
}

// blocksBody is CONSTRUCTED from Brave's Web Search API reference (the
// recording holds only query, mixed and web): one result of each block,
// with the highlighting and entities live answers carry.
const blocksBody = `{"type":"search","query":{"original":"go generics","more_results_available":true},
"web":{"type":"search","results":[{"title":"Go <strong>generics</strong>","url":"https://go.dev/doc/tutorial/generics","description":"Tutorial","extra_snippets":["Type parameters &amp; constraints.","Second excerpt."]}]},
"faq":{"type":"faq","results":[{"question":"What are <strong>generics</strong>?","answer":"Code that works with any type.","title":"Go FAQ","url":"https://go.dev/doc/faq","meta_url":{"hostname":"go.dev"}}]},
"discussions":{"type":"search","results":[{"type":"discussion","title":"Generics in Go 1.18","url":"https://www.reddit.com/r/golang/comments/abc/","description":"thread","age":"2 years ago",
  "data":{"forum_name":"r/golang","num_answers":42,"score":"120","title":"Generics in Go 1.18","question":"Are they worth it?","top_comment":"Yes, for containers."}}]},
"infobox":{"type":"graph","results":[{"type":"infobox","title":"Go","url":"https://en.wikipedia.org/wiki/Go_(programming_language)","description":"Programming language","long_desc":"Go is a statically typed language.","attributes":[["Designed by","Robert Griesemer"],["First appeared",null]]}]},
"news":{"type":"news","results":[{"title":"Go 1.26 released","url":"https://go.dev/blog/go1.26","description":"News","age":"1 day ago","meta_url":{"hostname":"go.dev"}}]},
"videos":{"type":"videos","results":[{"type":"video_result","title":"Generics talk","url":"https://www.youtube.com/watch?v=x","age":"3 years ago","video":{"duration":"35:12","creator":"GopherCon","publisher":"YouTube"}}]}}`

func TestDecodeSearchResponseReadsEveryBlock(t *testing.T) {
	r, err := DecodeSearchResponse([]byte(blocksBody), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Results()[0].ExtraSnippets; len(got) != 2 || got[0] != "Type parameters &amp; constraints." {
		t.Errorf("extra snippets = %q", got)
	}
	if r.FAQ == nil || r.FAQ.Results[0].Question != "What are <strong>generics</strong>?" || r.FAQ.Results[0].MetaURL.Hostname != "go.dev" {
		t.Errorf("faq = %+v", r.FAQ)
	}
	if r.Discussions == nil || r.Discussions.Results[0].Data.NumAnswers != 42 || r.Discussions.Results[0].Data.Score != "120" ||
		r.Discussions.Results[0].Data.TopComment != "Yes, for containers." {
		t.Errorf("discussions = %+v", r.Discussions)
	}
	if r.Infobox == nil || r.Infobox.Results[0].LongDesc != "Go is a statically typed language." ||
		!slices.Equal(r.Infobox.Results[0].Attributes[1], []Text{"First appeared", ""}) {
		t.Errorf("infobox = %+v", r.Infobox)
	}
	if r.News == nil || r.News.Results[0].Age != "1 day ago" || r.News.Results[0].MetaURL.Hostname != "go.dev" {
		t.Errorf("news = %+v", r.News)
	}
	if r.Videos == nil || r.Videos.Results[0].Video.Duration != "35:12" || r.Videos.Results[0].Video.Creator != "GopherCon" {
		t.Errorf("videos = %+v", r.Videos)
	}
}

func TestRecordingHasNoExtraBlocks(t *testing.T) {
	// The recorded answer holds query, mixed and web only: every block must
	// come out nil, not empty-but-present.
	r, err := DecodeSearchResponse(fixture(t, "web_search_what_is_semantic_kernel.json"), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if r.FAQ != nil || r.Discussions != nil || r.Infobox != nil || r.News != nil || r.Videos != nil {
		t.Errorf("blocks = %+v %+v %+v %+v %+v", r.FAQ, r.Discussions, r.Infobox, r.News, r.Videos)
	}
}

func TestMalformedBlockIsDroppedNotFatal(t *testing.T) {
	// CONSTRUCTED: a faq block of the wrong shape and a null infobox beside a
	// good web block.
	body := `{"type":"search","web":{"type":"search","results":[{"title":"t","url":"https://a.example/","description":"d"}]},
"faq":{"type":"faq","results":"not a list"},"infobox":null,"news":{"type":"news","results":[{"title":"n","url":"https://b.example/"}]}}`
	r, err := DecodeSearchResponse([]byte(body), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results()) != 1 || r.FAQ != nil || r.Infobox != nil || r.News == nil || len(r.News.Results) != 1 {
		t.Errorf("got web %d, faq %+v, infobox %+v, news %+v", len(r.Results()), r.FAQ, r.Infobox, r.News)
	}
}

func TestTextTakesWhateverBraveSends(t *testing.T) {
	for body, want := range map[string]Text{`"15"`: "15", `15`: "15", `2.5`: "2.5", `null`: "", `"15 points"`: "15 points", `{"up":1}`: "", `[1]`: ""} {
		var f ForumData
		if err := json.Unmarshal([]byte(`{"score":`+body+`}`), &f); err != nil || f.Score != want {
			t.Errorf("%s: score %q, err %v; want %q", body, f.Score, err, want)
		}
	}
	// CONSTRUCTED: an infobox whose attribute values are a number, null
	// and an object still decodes.
	r, err := DecodeSearchResponse([]byte(`{"type":"search","infobox":{"type":"graph","results":[{"title":"Go","attributes":[["Version",1.26],["Logo",null],["Site",{"url":"https://go.dev"}]]}]}}`), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if r.Infobox == nil || !slices.Equal(r.Infobox.Results[0].Attributes[0], []Text{"Version", "1.26"}) || r.Infobox.Results[0].Attributes[2][1] != "" {
		t.Errorf("infobox = %+v", r.Infobox)
	}
}
