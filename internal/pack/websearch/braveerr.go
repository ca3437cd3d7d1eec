package websearch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/tool"
)

// braveFailure maps a failed Brave call of toolName, for every Brave tool:
// an error answer from Brave ([braveAPIError], or the plan lacking what the
// tool asked for), else what the exchange itself did wrong.
func braveFailure(toolName string, err error, parent context.Context, timeout time.Duration) *tool.Error {
	var be *brave.Error
	if !errors.As(err, &be) {
		return upstreamFailure("Brave Search", err, parent, timeout)
	}
	if be.Code == brave.CodeOptionNotInPlan {
		return &tool.Error{Code: tool.CodeAuthInvalid, Status: be.StatusCode, Err: be, Message: fmt.Sprintf(
			"Your Brave Search plan does not include %s (%s). Brave's Search plan includes news, image and video search; "+
				"or set TOOLPORT_BRAVE_TOOLS (or 'web_search.brave.tools' in the credentials file) to the searches your plan has, e.g. web.",
			toolName, describe(be.Code, be.Detail))}
	}
	return braveAPIError(be)
}
