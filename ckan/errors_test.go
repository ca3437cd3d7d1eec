package ckan

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

func TestClientBodyLimit(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	c, err := NewClient(srv.URL, WithHTTPClient(srv.Client()), WithMaxBodyBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.PackageSearch(context.Background(), &PackageSearchOptions{Rows: 3})
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "larger than 1000 bytes") {
		t.Fatalf("err = %v, want a DecodeError for the size", err)
	}
}

func TestErrorTyped(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"datastore_search": tooltest.Respond(409, "application/json", fixture(t, "data.gov.il/error_validation_filters.json")),
	})
	c, err := NewClient(srv.URL, WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.DatastoreSearch(context.Background(), &DatastoreSearchRequest{ResourceID: "r"})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want *ckan.Error", err, err)
	}
	if ce.Type != TypeValidation || ce.StatusCode != 409 || ce.Action != "datastore_search" ||
		len(ce.Fields["filters"]) != 1 || ce.Fields["filters"][0] != "Cannot parse JSON" {
		t.Errorf("error = %+v", ce)
	}
	if got, want := ce.Error(), "ckan: datastore_search: Validation Error: filters: Cannot parse JSON"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// datastore_search is posted as JSON, never built into a query string.
	if r := srv.Last(t); r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.URL.RawQuery != "" ||
		!strings.Contains(string(r.Body), `"resource_id":"r"`) {
		t.Errorf("request = %+v", r)
	}
}

func TestParseErrorObjectShapes(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"__type":"Validation Error","name":["Missing value"],"resources":[{},{"url":["Missing value"]}]}`,
			`Validation Error: name: Missing value; resources: [{},{"url":["Missing value"]}]`},
		{`"Bad request - JSON Error: No request body data"`, "Bad request - JSON Error: No request body data"},
		{`{"message":{"nested":true}}`, `{"nested":true}`},
		{`null`, "HTTP 200 OK"},
		{`{"__type":"Not Found Error","info":"x"}`, "Not Found Error: info: x"},
	}
	for _, tt := range tests {
		e := &Error{Action: "a", StatusCode: 200}
		e.parseErrorObject([]byte(tt.raw))
		if got := e.Describe(); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.raw, got, tt.want)
		}
	}
}

// A portal that never answers fails with the context's deadline, so that
// callers can tell a timeout from a network failure.
func TestClientTimeout(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answer
	}})
	c, err := NewClient(srv.URL, WithHTTPClient(srv.Client()), WithTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.PackageSearch(context.Background(), &PackageSearchOptions{Rows: 1})
	var ne *NetworkError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) {
		t.Fatalf("err = %T %v, want the context's deadline", err, err)
	}
}
