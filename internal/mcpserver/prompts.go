package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/agent/about"
	"github.com/toolport/toolport/tool"
)

// maxCompletions is MCP's limit on the values of one completion answer.
const maxCompletions = 100

// A CKANCatalog answers questions about the configured CKAN portals: the
// names a host can complete and a dataset's metadata. Portals are named by
// host; "" is the default portal. Only configured portals are served.
type CKANCatalog interface {
	// Portals lists the configured portals' hosts, the default first.
	Portals() []string
	// Organizations and Groups list the names of a portal's publishers and
	// dataset groups (bounded and cached by the implementation).
	Organizations(ctx context.Context, portal string) ([]string, error)
	Groups(ctx context.Context, portal string) ([]string, error)
	// Dataset returns a dataset's metadata as JSON, and its title. A dataset
	// the portal does not have is a *tool.Error with tool.CodeNotFound; a
	// portal that is not configured one with tool.CodeBlocked.
	Dataset(ctx context.Context, portal, name string) (body []byte, title string, err error)
}

// A packPrompt is a prompt that makes one pack useful in one step; it is
// offered only when its pack has tools in the selection.
type packPrompt struct {
	pack   string
	prompt *mcp.Prompt
	// task writes the request to the model from the prompt's arguments.
	task func(args map[string]string) string
}

// packPrompts are Toolport's prompts. What each pack is for is the chat
// agent's own text (package about), so a host's slash command and the
// Discover Chat ask the model for the same thing.
var packPrompts = []packPrompt{
	{
		pack: "music",
		prompt: &mcp.Prompt{
			Name:  "discover_music",
			Title: "Discover music",
			Description: "Find music for a mood, a moment or a taste: search the indexed library by meaning, " +
				"look further in the TIDAL catalogue, and present a playlist.",
			Arguments: []*mcp.PromptArgument{
				{Name: "request", Title: "What you want to hear", Required: true,
					Description: "A mood, an occasion, a sound or artists you like, in your words"},
				{Name: "mood", Title: "Mood", Description: "A mood word the index knows (completions offered)"},
			},
		},
		task: func(args map[string]string) string {
			s := "Help me " + about.Pack("music") + ".\n\n" +
				"First search my indexed tracks by meaning (semanticSearch), then check the TIDAL catalogue for more " +
				"(tidalSearch, albumTracks), and finish by suggesting a playlist with suggestPlaylist, one line of " +
				"reasoning per track.\n\nWhat I want: " + args["request"]
			if m := args["mood"]; m != "" {
				s += "\nMood: " + m
			}
			return s
		},
	},
	{
		pack: "ckan",
		prompt: &mcp.Prompt{
			Name:  "explore_open_data",
			Title: "Explore open data",
			Description: "Answer a question from open government data (data.gov.il or another configured CKAN portal): " +
				"find datasets, inspect the best one, query its rows and cite the dataset's page.",
			Arguments: []*mcp.PromptArgument{
				{Name: "question", Title: "Question", Required: true, Description: "What you want to know, in any language"},
				{Name: "portal", Title: "Portal", Description: "A configured portal's host; the default portal when empty"},
				{Name: "organization", Title: "Publisher", Description: "Only datasets of this publisher (organization name)"},
				{Name: "group", Title: "Group", Description: "Only datasets in this group (group name)"},
			},
		},
		task: func(args map[string]string) string {
			s := "Help me " + about.Pack("ckan") + ".\n\n" +
				"Find the datasets that can answer the question (searchDatasets), inspect the most relevant one " +
				"(getDatasetDetails; getDatasetSchema or previewResource for its files), query its rows with " +
				"queryDatastore when a resource is in the datastore, and answer with the figures you found, citing " +
				"each dataset's page (its portalUrl).\n\nQuestion: " + args["question"]
			if p := args["portal"]; p != "" {
				s += "\nPortal: https://" + p
			}
			if o := args["organization"]; o != "" {
				s += "\nOnly datasets published by the organization " + o + "."
			}
			if g := args["group"]; g != "" {
				s += "\nOnly datasets in the group " + g + "."
			}
			return s
		},
	},
	{
		pack: "web",
		prompt: &mcp.Prompt{
			Name:        "web_research",
			Title:       "Research on the web",
			Description: "Research a question on the web: search, read the most relevant pages, and answer citing them.",
			Arguments: []*mcp.PromptArgument{
				{Name: "question", Title: "Question", Required: true, Description: "What to research"},
			},
		},
		task: func(args map[string]string) string {
			return "Help me " + about.Pack("web") + ".\n\n" +
				"Search the web for the question, read the few most relevant pages in full (web_fetch) rather than " +
				"trusting snippets, and answer with a citation (the page's URL) for every claim.\n\nQuestion: " + args["question"]
		},
	},
}

// addPrompts adds the prompts of the packs that have tools in reg.
func (s *service) addPrompts(srv *mcp.Server, reg *tool.Registry) {
	tools := map[string][]string{}
	for _, t := range reg.Tools() {
		tools[t.Spec().Pack] = append(tools[t.Spec().Pack], t.Name())
	}
	for _, pp := range packPrompts {
		names := tools[pp.pack]
		if len(names) == 0 {
			continue
		}
		p := *pp.prompt
		p.Icons = icon(pp.pack)
		task := pp.task
		srv.AddPrompt(&p, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			for _, a := range p.Arguments {
				if a.Required && strings.TrimSpace(args[a.Name]) == "" {
					return nil, fmt.Errorf("prompt %s: argument %q is required", p.Name, a.Name)
				}
			}
			// The tools are named as exposed, so the model is not sent
			// looking for one the selection left out.
			text := task(args) + "\n\nUse only these tools: " + strings.Join(names, ", ") + ". " + about.ToolResults
			return &mcp.GetPromptResult{
				Description: p.Description,
				Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
			}, nil
		})
	}
}

// complete answers completion/complete for the prompts' arguments and the
// resource templates' variables; an argument Toolport cannot answer gets no
// values (not an error: hosts ask for every argument).
func (s *service) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var ctxArgs map[string]string
	if p.Context != nil {
		ctxArgs = p.Context.Arguments
	}
	var values []string
	var err error
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "discover_music" && p.Argument.Name == "mood":
		values = s.opts.Moods
	case (p.Ref.Type == "ref/prompt" && p.Ref.Name == "explore_open_data" || p.Ref.Type == "ref/resource" && p.Ref.URI == ckanDatasetTemplate) &&
		p.Argument.Name == "portal" && s.opts.CKAN != nil:
		values = s.opts.CKAN.Portals()
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "explore_open_data" && p.Argument.Name == "organization" && s.opts.CKAN != nil:
		values, err = s.opts.CKAN.Organizations(ctx, ctxArgs["portal"])
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "explore_open_data" && p.Argument.Name == "group" && s.opts.CKAN != nil:
		values, err = s.opts.CKAN.Groups(ctx, ctxArgs["portal"])
	}
	if err != nil {
		// A portal that is down costs the host its suggestions, not an error
		// dialog in the middle of typing.
		s.logger.Warn("mcpserver: completion", "ref", p.Ref.Name, "argument", p.Argument.Name, "error", err)
		values = nil
	}
	return &mcp.CompleteResult{Completion: matchCompletions(values, p.Argument.Value)}, nil
}

// matchCompletions keeps the values that contain typed (ignoring case),
// those that start with it first, at most maxCompletions of them.
func matchCompletions(values []string, typed string) mcp.CompletionResultDetails {
	typed = strings.ToLower(strings.TrimSpace(typed))
	var prefix, inside []string
	for _, v := range values {
		lv := strings.ToLower(v)
		switch {
		case strings.HasPrefix(lv, typed):
			prefix = append(prefix, v)
		case strings.Contains(lv, typed):
			inside = append(inside, v)
		}
	}
	all := slices.Concat(prefix, inside)
	out := mcp.CompletionResultDetails{Values: all[:min(len(all), maxCompletions)], Total: len(all)}
	out.HasMore = len(all) > maxCompletions
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}
