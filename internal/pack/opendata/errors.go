package opendata

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// toolError turns a client error into the *tool.Error agents see. It names
// the action and keeps the portal's message unchanged.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	var te *tool.Error
	if errors.As(err, &te) {
		return te
	}
	var ce *ckan.Error
	if errors.As(err, &ce) {
		return ckanErrorToTool(ce)
	}
	var de *ckan.DecodeError
	if errors.As(err, &de) {
		return &tool.Error{Code: tool.CodeParse, Status: de.StatusCode, Message: strings.TrimPrefix(de.Error(), "ckan: "), Err: err}
	}
	var blocked *safehttp.BlockedError
	if errors.As(err, &blocked) {
		// A per-call portal whose name resolves to a private address.
		return &tool.Error{Code: tool.CodeBlocked, Err: err, Message: fmt.Sprintf(
			"portal: %s resolves to %s, a %s address; only public portals may be named per call", blocked.Host, blocked.Addr, blocked.Reason)}
	}
	var ne *ckan.NetworkError
	if errors.As(err, &ne) {
		// tool.Classify words the message without the URL.
		c := tool.Classify(ne.Err)
		if c.Code == tool.CodeInternal {
			c = &tool.Error{Code: tool.CodeNetwork, Message: "network error", Retryable: true, Err: err}
		}
		c.Message = ne.Action + ": " + c.Message
		return c
	}
	return tool.Classify(err)
}

// maxRetryAfter bounds a portal's Retry-After: the registry waits only a few
// seconds anyway, and longer hints are passed on to the agent.
const maxRetryAfter = 24 * time.Hour

// ckanErrorToTool maps a portal's error to a tool code by CKAN's error type,
// then by HTTP status.
func ckanErrorToTool(e *ckan.Error) *tool.Error {
	msg := e.Action + ": " + e.Describe()
	var out *tool.Error
	switch e.Type {
	case ckan.TypeNotFound:
		out = &tool.Error{Code: tool.CodeNotFound}
	case ckan.TypeValidation, ckan.TypeSearchQuery:
		// The portal rejected the arguments: retrying cannot help.
		out = &tool.Error{Code: tool.CodeValidation}
	case ckan.TypeAuthorization:
		out = &tool.Error{Code: tool.CodeAuthInvalid}
	default:
		switch {
		case e.StatusCode >= 200 && e.StatusCode <= 299:
			out = &tool.Error{Code: tool.CodeAPI}
		case e.StatusCode == http.StatusForbidden && e.Type == "":
			// The action API needs no key for reading: a bare 403 is a CDN
			// or firewall refusing the client (data.gov.il's does so for
			// clients without a browser-like User-Agent).
			out = &tool.Error{Code: tool.CodeBlocked}
		default:
			out = tool.HTTPStatusError(e.StatusCode, httpclient.RetryAfter(e.RetryAfter, time.Now(), maxRetryAfter), "")
			if e.Type != "" && !out.Retryable && out.Code == tool.CodeHTTP {
				out.Code = tool.CodeAPI // a CKAN error object we have no better code for
			}
		}
	}
	out.Message, out.Status, out.Err = msg, e.StatusCode, e
	return out
}
