package llm_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/tool"
)

// realToolDefs returns the definitions of every tool of every pack, from
// the packs themselves (no network: tools are only declared here).
func realToolDefs(tb testing.TB) []llm.ToolDef {
	tb.Helper()
	all := []string{websearch.BraveWeb, websearch.BraveNews, websearch.BraveImages, websearch.BraveVideos}
	defs, err := llm.ToolDefs(realRegistry(tb, all))
	if err != nil {
		tb.Fatal(err)
	}
	return defs
}

// realRegistry holds every tool of every pack, the Brave searches
// braveTools names (nil: websearch.DefaultBraveTools), configured with no
// upstream keys (no TIDAL login either).
func realRegistry(tb testing.TB, braveTools []string) *tool.Registry {
	tb.Helper()
	var tools []*tool.Tool
	tools = append(tools, websearch.Tools(websearch.Config{BraveTools: braveTools})...)
	tools = append(tools, webfetch.Tool(webfetch.Config{}))
	tools = append(tools, opendata.Tools(opendata.Config{})...)
	tools = append(tools, music.Tools(music.Open(music.Config{TidalUser: music.TidalUserConfig{TokenFile: filepath.Join(tb.TempDir(), "tidal-login.json")}}, nil))...)
	reg := tool.NewRegistry()
	if err := reg.Register(tools...); err != nil {
		tb.Fatal(err)
	}
	return reg
}

// Scripted replies: a tool call, then text, as a model on loopback sends them.
var (
	benchOpenAIReply = "" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"web_search","arguments":"{\"query\":"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Searching."},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":20,"total_tokens":920}}` + "\n\n" +
		"data: [DONE]\n\n"
	benchAnthropicReply = "" +
		"event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":900,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"web_search","input":{}}}` + "\n\n" +
		"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}` + "\n\n" +
		"event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}` + "\n\n" +
		"event: content_block_start\ndata: " + `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Searching."}}` + "\n\n" +
		"event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":1}` + "\n\n" +
		"event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}` + "\n\n" +
		"event: message_stop\ndata: " + `{"type":"message_stop"}` + "\n\n"
)

func benchServer(b *testing.B, reply string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, reply)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchStream(b *testing.B, p llm.Provider) {
	defs := realToolDefs(b)
	size := 0
	for _, d := range defs {
		size += len(d.Name) + len(d.Description) + len(d.InputSchema)
	}
	b.Logf("%d tools, %d bytes of definitions", len(defs), size)
	req := llm.Request{System: "Be brief.", Tools: defs, Messages: []llm.Message{llm.UserText("find go")}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := p.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		r, err := llm.Collect(s)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.ToolCalls) != 1 || !strings.Contains(r.Message.Text(), "Searching") {
			b.Fatalf("response = %+v", r)
		}
	}
}

// BenchmarkOpenAIStreamRealTools is one model call of a chat turn through the
// real SDK, with the chat server's real tool definitions.
func BenchmarkOpenAIStreamRealTools(b *testing.B) {
	p, err := llm.NewOpenAI("m", llm.Options{APIKey: "k", BaseURL: benchServer(b, benchOpenAIReply) + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	benchStream(b, p)
}

// BenchmarkAnthropicStreamRealTools is the same through the Anthropic SDK.
func BenchmarkAnthropicStreamRealTools(b *testing.B) {
	p, err := llm.NewAnthropic("m", llm.Options{APIKey: "k", BaseURL: benchServer(b, benchAnthropicReply)})
	if err != nil {
		b.Fatal(err)
	}
	benchStream(b, p)
}
