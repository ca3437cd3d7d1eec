package ckan

import (
	"strings"
	"testing"
)

func TestParseDatastoreSort(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"_id", "_id", ""},
		{"שם ישוב desc", "שם ישוב desc", ""},
		{"a ASC,b", "a asc, b", ""},
		{"total population   desc", "total population desc", ""},
		{"", "", "must be"},
		{`"quoted" desc`, "", "must be"},
		{"a,,b", "", "must be"},
	}
	for _, tt := range tests {
		got, err := ParseDatastoreSort(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseDatastoreSort(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
