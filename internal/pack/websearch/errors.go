package websearch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/google"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/searxng"
	"github.com/toolport/toolport/tool"
)

// The texts of web-tool-schemas.md, verbatim, so that ikigai users see what
// they expect. They name only ikigai's credentials file: braveMissing and
// googleMissing add where Toolport reads the keys from.
const (
	braveAuthMissing = "Web search requires API key configuration.\n\nBrave Search offers 2,000 free searches/month.\nGet your key: https://brave.com/search/api/\nAdd to: ~/.config/ikigai/credentials.json as 'web_search.brave.api_key'"
	braveConfigEvent = "⚠ Configuration Required\n\nWeb search needs an API key. Brave Search offers 2,000 free searches/month.\n\nGet your key: https://brave.com/search/api/\nAdd to: ~/.config/ikigai/credentials.json\n\nExample:\n{\n  \"web_search\": {\n    \"brave\": {\n      \"api_key\": \"your-api-key-here\"\n    }\n  }\n}"
	braveConfigData  = "{\"tool\": \"web_search_brave\", \"credential\": \"api_key\", \"signup_url\": \"https://brave.com/search/api/\"}"
	braveQuotaLimit  = "Rate limit exceeded. You've used your free search quota (2,000/month)."

	googleAuthMissing = "Web search requires API key configuration.\n\nGoogle Custom Search offers 100 free searches/day.\nGet API key: https://developers.google.com/custom-search/v1/overview\nGet Search Engine ID: https://programmablesearchengine.google.com/controlpanel/create\nAdd to: ~/.config/ikigai/credentials.json as 'web_search.google.api_key' and 'web_search.google.engine_id'"
	googleConfigEvent = "⚠ Configuration Required\n\nWeb search needs an API key and Search Engine ID. Google Custom Search offers 100 free searches/day.\n\nGet API key: https://developers.google.com/custom-search/v1/overview\nGet Search Engine ID: https://programmablesearchengine.google.com/controlpanel/create\nAdd to: ~/.config/ikigai/credentials.json\n\nExample:\n{\n  \"web_search\": {\n    \"google\": {\n      \"api_key\": \"your-api-key-here\",\n      \"engine_id\": \"your-search-engine-id\"\n    }\n  }\n}"
	googleConfigData  = "{\"tool\": \"web_search_google\", \"credentials\": [\"api_key\", \"engine_id\"]}"
	googleQuotaLimit  = "Rate limit exceeded. You've used your free search quota (100/day)."
)

// Where Toolport reads the keys from, besides ikigai's file (see package
// internal/config): a newcomer to Toolport has neither ikigai nor its file.
const (
	braveToolportHint = "\nOr set BRAVE_API_KEY in the environment, " +
		"or add it to ~/.config/toolport/credentials.json as 'web_search.brave.api_key'."
	googleToolportHint = "\nOr set GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID in the environment, " +
		"or add them to ~/.config/toolport/credentials.json as 'web_search.google.api_key' and 'web_search.google.engine_id'."
)

// braveMissing is the spec's AUTH_MISSING error; the event's data names the
// tool that was called (the spec's text is web_search_brave's).
func braveMissing(toolName string) *tool.Error {
	data := braveConfigData
	if toolName != "web_search_brave" {
		data = strings.Replace(data, `"web_search_brave"`, strconv.Quote(toolName), 1)
	}
	return &tool.Error{Code: tool.CodeAuthMissing, Message: braveAuthMissing + braveToolportHint,
		Event: &tool.Event{Kind: "config_required", Content: braveConfigEvent + "\n" + braveToolportHint, DataJSON: data}}
}

func googleMissing() *tool.Error {
	return &tool.Error{Code: tool.CodeAuthMissing, Message: googleAuthMissing + googleToolportHint,
		Event: &tool.Event{Kind: "config_required", Content: googleConfigEvent + "\n" + googleToolportHint, DataJSON: googleConfigData}}
}

// upstreamFailure classifies what the HTTP exchange itself did wrong: a body
// over the cap, a body that is not JSON, a timeout or a network error. The
// messages never quote the request URL.
func upstreamFailure(provider string, err error, parent context.Context, timeout time.Duration) *tool.Error {
	var (
		bp *brave.ParseError
		gp *google.ParseError
		sp *searxng.ParseError
	)
	switch {
	case errors.Is(err, brave.ErrBodyTooLarge), errors.Is(err, google.ErrBodyTooLarge), errors.Is(err, searxng.ErrBodyTooLarge):
		return &tool.Error{Code: tool.CodeParse, Message: provider + " sent an answer larger than the size limit; it was not read", Err: err}
	case errors.As(err, &bp):
		return parseFailure(provider, bp.ContentType, err)
	case errors.As(err, &gp):
		return parseFailure(provider, gp.ContentType, err)
	case errors.As(err, &sp):
		return parseFailure(provider, sp.ContentType, err)
	case parent.Err() != nil:
		return tool.Classify(parent.Err()) // the caller gave up: CANCELED or TIMEOUT
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		return &tool.Error{Code: tool.CodeTimeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("%s did not answer within %s", provider, timeout)}
	}
	te := tool.Classify(err)
	if te.Code == tool.CodeInternal {
		return te
	}
	cp := *te
	cp.Message = provider + ": " + te.Message
	return &cp
}

func parseFailure(provider, contentType string, err error) *tool.Error {
	msg := provider + " sent a response that is not valid JSON"
	if contentType != "" && !strings.Contains(strings.ToLower(contentType), "json") {
		msg = fmt.Sprintf("%s sent %s instead of JSON", provider, httpclient.ClipRunes(contentType, 60))
	}
	return &tool.Error{Code: tool.CodeParse, Message: msg, Err: err}
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// braveAPIError maps an error answer from Brave.
func braveAPIError(e *brave.Error) *tool.Error {
	te := &tool.Error{Status: e.StatusCode, RetryAfter: e.RetryAfter, Err: e}
	detail := describe(e.Code, e.Detail)
	switch {
	case e.StatusCode == http.StatusTooManyRequests || e.Code == brave.CodeRateLimited || e.Code == brave.CodeQuotaLimited:
		te.Code = tool.CodeRateLimit
		if e.QuotaExceeded() {
			// The monthly quota is spent: a retry in seconds cannot succeed.
			te.Message = braveQuotaLimit
			if w, ok := e.RateLimit.Longest(); ok && w.Limit > 0 && w.Limit != 2000 {
				te.Message = fmt.Sprintf("Rate limit exceeded. You've used your search quota (%s/month).", thousands(w.Limit))
			}
			return te
		}
		te.Retryable = true
		perSecond := 1
		if w, ok := e.RateLimit.Shortest(); ok && w.Limit > 0 {
			perSecond = w.Limit
		}
		te.Message = fmt.Sprintf("Rate limit exceeded. Brave Search allows %d request(s) per second on this plan; retry in a moment.", perSecond)
	case e.Code == brave.CodeTokenInvalid || e.Code == brave.CodeSubscriptionNotFound ||
		e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		te.Code = tool.CodeAuthInvalid
		te.Message = "Brave Search rejected the API key (" + detail + "). Check BRAVE_API_KEY or 'web_search.brave.api_key' in ~/.config/ikigai/credentials.json."
	case e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity:
		te.Code = tool.CodeAPI
		te.Message = "Brave Search rejected the request (" + detail + ")."
	default:
		te = tool.HTTPStatusError(e.StatusCode, e.RetryAfter, fmt.Sprintf("Brave Search answered HTTP %d (%s)", e.StatusCode, detail))
		te.Err = e
	}
	return te
}

// googleAPIError maps an error answer from Google.
func googleAPIError(e *google.Error) *tool.Error {
	te := &tool.Error{Status: e.StatusCode, RetryAfter: e.RetryAfter, Err: e}
	detail := describe(strings.Join(e.Reasons, ", "), e.Message)
	switch {
	case e.QuotaExceeded():
		te.Code = tool.CodeRateLimit
		switch {
		case e.RetryAfter > 0:
			te.Retryable = true
			te.Message = googleQuotaLimit
		case strings.Contains(strings.ToLower(e.Message), "per minute"):
			te.Retryable = true
			te.Message = "Rate limit exceeded. Google Custom Search allows a limited number of queries per minute; retry in a minute."
		default:
			// A daily quota: retrying before it resets (midnight Pacific time) fails again.
			te.Message = googleQuotaLimit
		}
	case e.KeyInvalid():
		te.Code = tool.CodeAuthInvalid
		te.Message = "Google Custom Search rejected the API key (" + detail + "). Check GOOGLE_SEARCH_API_KEY or 'web_search.google.api_key' in ~/.config/ikigai/credentials.json."
	case e.StatusCode == http.StatusForbidden:
		te.Code = tool.CodeAuthInvalid
		te.Message = "Google Custom Search refused access (" + detail + "). The API is closed to new customers; check that the project behind the key has it enabled."
	case e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone:
		te.Code = tool.CodeUpstreamGone
		te.Message = fmt.Sprintf("Google Custom Search answered HTTP %d: the API is gone or moved (Google shuts it down on 2027-01-01). Use web_search_brave, or check GOOGLE_SEARCH_BASE_URL.", e.StatusCode)
	case e.StatusCode == http.StatusBadRequest:
		te.Code = tool.CodeAPI
		te.Message = "Google Custom Search rejected the request (" + detail + "). Check the query and GOOGLE_SEARCH_ENGINE_ID."
	default:
		te = tool.HTTPStatusError(e.StatusCode, e.RetryAfter, fmt.Sprintf("Google Custom Search answered HTTP %d (%s)", e.StatusCode, detail))
		te.Err = e
	}
	return te
}

func describe(code, detail string) string {
	switch {
	case code != "" && detail != "":
		return code + ": " + detail
	case code != "":
		return code
	case detail != "":
		return detail
	}
	return "no details"
}

// thousands formats 15000 as "15,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
