package httpclient

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Success reports a 2xx status, the one range every client accepts.
func Success(status int) bool { return status >= 200 && status < 300 }

// TemporaryStatus reports whether a call answered with status may succeed
// later: a 429 or a 5xx other than 501 (which will not start working).
func TemporaryStatus(status int) bool {
	return status == http.StatusTooManyRequests || (status >= 500 && status != http.StatusNotImplemented)
}

// StatusIs is a typed error's Is over its HTTP status: target matches when
// it is notFound and status is 404, or rateLimited and status is 429.
func StatusIs(status int, target, notFound, rateLimited error) bool {
	switch {
	case target == nil:
		return false
	case target == notFound:
		return status == http.StatusNotFound
	case target == rateLimited:
		return status == http.StatusTooManyRequests
	}
	return false
}

// ErrorText is the text of a client's status error: "name: HTTP status",
// then " label" (the upstream's code or name) and ": message" when set.
func ErrorText(name string, status int, label, message string) string {
	s := fmt.Sprintf("%s: HTTP %d", name, status)
	if label != "" {
		s += " " + label
	}
	if message != "" {
		s += ": " + message
	}
	return s
}

// IsJSON reports a JSON media type: application/json, text/json or a
// +json suffix.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json"
}

// ParseErrorText is the text of a client's ParseError: it names what came
// instead of JSON when the Content-Type says so, and the decoder's error
// (a position, never the body).
func ParseErrorText(name, contentType string, err error) string {
	if contentType != "" && !IsJSON(contentType) {
		return fmt.Sprintf("%s: expected JSON, got %s: %v", name, contentType, err)
	}
	return fmt.Sprintf("%s: malformed JSON: %v", name, err)
}

// bom is the UTF-8 byte-order mark some upstreams put before JSON.
var bom = []byte("\xef\xbb\xbf")

// TrimBOM returns body without a leading UTF-8 byte-order mark.
func TrimBOM(body []byte) []byte { return bytes.TrimPrefix(body, bom) }

// GetDecoded is [Core.Get], then decode of the body and Content-Type of a
// success: the whole of a read endpoint whose client decodes one type.
func GetDecoded[R any](ctx context.Context, c *Core, path string, query url.Values, check CheckFunc,
	decode func(body []byte, contentType string) (*R, error)) (*R, error) {
	resp, body, err := c.Get(ctx, path, query, check)
	if err != nil {
		return nil, err
	}
	return decode(body, resp.Header.Get("Content-Type"))
}

// Build finishes a client's NewClient: core (the client's own, held by c)
// sends through hc ([Core.SetHTTPClient]), then opts run on c in order. The
// first option's error is returned with a nil client.
func Build[C any, O ~func(*C) error](c *C, core *Core, hc *http.Client, opts []O) (*C, error) {
	core.SetHTTPClient(hc)
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
