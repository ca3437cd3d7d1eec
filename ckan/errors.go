package ckan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
)

// CKAN error types (the "__type" of an error object) that callers branch on.
const (
	TypeNotFound      = "Not Found Error"
	TypeValidation    = "Validation Error"
	TypeAuthorization = "Authorization Error"
	TypeSearchQuery   = "Search Query Error"
	TypeSearch        = "Search Error"
)

// Error is a failure reported by the portal: an HTTP error status, or a body
// with "success": false (which CKAN also sends with HTTP 200).
type Error struct {
	Action     string // the action called, e.g. "package_show"
	StatusCode int    // the HTTP status; 200 for a success:false body
	Type       string // CKAN's "__type", e.g. "Not Found Error"; "" when the body had none
	Message    string // CKAN's message, unchanged (data.gov.il's may be Hebrew)
	// Fields holds a Validation Error's field-keyed messages, e.g.
	// {"filters": ["Cannot parse JSON"]}.
	Fields map[string][]string
	// RetryAfter is the raw Retry-After header of an HTTP error, if any.
	RetryAfter string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ckan: ")
	b.WriteString(e.Action)
	b.WriteString(": ")
	b.WriteString(e.Describe())
	return b.String()
}

// Describe is the error without the "ckan: action:" prefix: the type, the
// message and the field errors, or the HTTP status when the portal sent no
// error object.
func (e *Error) Describe() string {
	var parts []string
	if e.Type != "" {
		parts = append(parts, e.Type)
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	if len(e.Fields) > 0 {
		names := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			names = append(names, k)
		}
		slices.Sort(names)
		fs := make([]string, len(names))
		for i, k := range names {
			fs[i] = k + ": " + strings.Join(e.Fields[k], "; ")
		}
		parts = append(parts, strings.Join(fs, "; "))
	}
	if len(parts) == 0 || (e.Type == "" && e.StatusCode != http.StatusOK) {
		parts = append([]string{fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))}, parts...)
	}
	return strings.Join(parts, ": ")
}

// maxFieldErrors bounds how many field errors are kept from an error object.
const maxFieldErrors = 50

// parseErrorObject fills e from CKAN's error object:
// {"__type": "Validation Error", "message": "…", "name": ["Missing value"], …}.
// Field values are usually lists of strings; anything else is kept as
// compact JSON so nothing the portal said is lost.
func (e *Error) parseErrorObject(raw json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		var s string // some extensions send a bare string
		if json.Unmarshal(raw, &s) == nil {
			e.Message = s
		}
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := obj[k]
		switch k {
		case "__type":
			_ = json.Unmarshal(v, &e.Type)
			continue
		case "message":
			if json.Unmarshal(v, &e.Message) != nil {
				e.Message = compactJSON(v)
			}
			continue
		}
		if len(e.Fields) >= maxFieldErrors {
			continue
		}
		if e.Fields == nil {
			e.Fields = map[string][]string{}
		}
		var list []string
		var one string
		switch {
		case json.Unmarshal(v, &list) == nil:
			e.Fields[k] = list
		case json.Unmarshal(v, &one) == nil:
			e.Fields[k] = []string{one}
		default:
			e.Fields[k] = []string{compactJSON(v)}
		}
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return httpclient.ClipRunes(b.String(), 300)
}

// DecodeError reports a response the client could not understand: not JSON,
// truncated, not shaped like a CKAN response, or too large.
type DecodeError struct {
	Action     string
	StatusCode int
	Reason     string
	Snippet    string // the start of the body, for diagnosis
	Err        error  // the decoder's error, if any
}

func (e *DecodeError) Error() string {
	s := "ckan: " + e.Action + ": " + e.Reason
	if e.Snippet != "" {
		s += fmt.Sprintf(" (body starts %q)", e.Snippet)
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Err }

// NetworkError reports a request that got no HTTP response: refused or reset
// connection, DNS failure, TLS failure. Err is the transport's error, whose
// text may include the request URL.
type NetworkError struct {
	Action string
	Err    error
}

func (e *NetworkError) Error() string { return "ckan: " + e.Action + ": " + e.Err.Error() }
func (e *NetworkError) Unwrap() error { return e.Err }

// IsUnknownAction reports whether err says that the portal does not serve
// the action at all, rather than that the call failed: CKAN answers an
// unknown action with 400 "Bad request - Action name not known: …", and a
// portal or proxy that routes no such path answers 404 without a CKAN
// error object. A "Not Found Error" is ambiguous (a missing dataset looks
// the same) and is left to the caller.
func IsUnknownAction(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if strings.Contains(e.Message, "Action name not known") {
		return true
	}
	return e.StatusCode == http.StatusNotFound && e.Type == ""
}
