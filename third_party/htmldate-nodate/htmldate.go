// Package htmldate replaces github.com/markusmobius/go-htmldate in
// Toolport's build (see the replace directive in Toolport's go.mod).
//
// go-trafilatura imports go-htmldate for publication dates, and go-htmldate
// imports go-dateparser, whose package initialisation builds locale tables
// for every language: about 1.6 billion instructions and 78 MB allocated
// before main runs, in every binary that links an extractor. Toolport runs
// go-trafilatura with HtmlDateMode Disabled, so FromDocument is never
// called; this module provides the types go-trafilatura's API names, and
// FromDocument reports that date extraction is not built in.
//
// The exported names are those go-trafilatura v1.12 uses; they follow
// go-htmldate v1.9.1's API (Apache-2.0), without the dateparser settings.
package htmldate

import (
	"errors"
	"time"

	"golang.org/x/net/html"
)

// ErrNotBuiltIn is FromDocument's error: this build has no date extraction.
var ErrNotBuiltIn = errors.New("htmldate: date extraction is not built into this program")

// Options mirrors go-htmldate's options. None has an effect here.
type Options struct {
	ExtractTime         bool
	UseOriginalDate     bool
	URL                 string
	MinDate             time.Time
	MaxDate             time.Time
	EnableLog           bool
	SkipExtensiveSearch bool
	DeferUrlExtractor   bool
}

// Result is an extracted date.
type Result struct {
	DateTime    time.Time
	HasTime     bool
	HasTimezone bool
	SrcString   string
}

// IsZero reports whether the result is empty.
func (r Result) IsZero() bool { return r.DateTime.IsZero() }

// Format formats the date with layout.
func (r Result) Format(layout string) string { return r.DateTime.Format(layout) }

// FromDocument always fails with ErrNotBuiltIn.
func FromDocument(doc *html.Node, opts Options) (Result, error) {
	return Result{}, ErrNotBuiltIn
}
