package music

import (
	"errors"

	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// tidalConfigEvent tells the human, through the agent's UI, how to configure
// TIDAL when a tool is called without credentials.
const (
	tidalConfigContent = "⚠ Configuration Required\n\nTIDAL catalogue tools need API client credentials.\n\n" +
		"Get them: https://developer.tidal.com/dashboard\nAdd to: ~/.config/toolport/credentials.json\n\n" +
		"Example:\n{\n  \"tidal\": {\n    \"client_id\": \"your-client-id\",\n    \"client_secret\": \"your-client-secret\"\n  }\n}"
	tidalConfigData = `{"service":"tidal","credentials":["client_id","client_secret"],"signup_url":"https://developer.tidal.com/dashboard"}`
)

// tidalError turns an error of the TIDAL client into the *tool.Error agents
// see: the code follows the error's kind (and, for other error statuses, the
// HTTP status, as for every upstream), the message is the client's, which
// never holds a secret.
func tidalError(err error) error {
	var e *tidal.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	te := &tool.Error{Message: e.Message, Status: e.StatusCode, Err: err}
	switch e.Kind {
	case tidal.ErrAuthMissing:
		te.Code = tool.CodeAuthMissing
		te.Event = &tool.Event{Kind: "config_required", Content: tidalConfigContent, DataJSON: tidalConfigData}
	case tidal.ErrAuthInvalid:
		te.Code = tool.CodeAuthInvalid
	case tidal.ErrNotFound:
		te.Code = tool.CodeNotFound
	case tidal.ErrRateLimited:
		te.Code, te.Retryable, te.RetryAfter = tool.CodeRateLimit, true, e.RetryAfter
	case tidal.ErrInvalidInput:
		te.Code = tool.CodeValidation
	case tidal.ErrConfig:
		te.Code = tool.CodeConfig
	case tidal.ErrMalformed:
		te.Code = tool.CodeParse
	case tidal.ErrNetwork:
		// Classify words cancellations and timeouts without the request URL.
		if c := tool.Classify(e.Err); c.Code != tool.CodeInternal {
			return c
		}
		te.Code, te.Retryable = tool.CodeNetwork, true
	default: // tidal.ErrStatus
		te = tool.HTTPStatusError(e.StatusCode, e.RetryAfter, e.Message)
		te.Err = err
	}
	return te
}
