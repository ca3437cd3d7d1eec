// Package pdftext turns PDF documents into Markdown text with page markers.
//
// Parsing uses github.com/ledongthuc/pdf, a maintained fork of rsc.io/pdf
// that decodes fonts' ToUnicode maps and encodings (see BENCHMARKS.md for
// the comparison that chose it). That library reports malformed input by
// panicking, so an Extractor runs it on its own goroutine: panics become
// ErrMalformed, a deadline ends the wait, and a fixed number of workers
// bounds the documents parsed at once.
//
// The library also follows references without bounds: a /Prev cycle of
// cross-reference sections, a /Kids or /Parent cycle in the page tree or an
// /Extends cycle of object streams would keep it looping, and an object
// stream stored inside itself makes it recurse until the process dies.
// Before it is trusted with them, the package checks the cross-reference
// chain and object streams itself (xref.go) and walks the page tree with
// visited bounds (pages.go), refusing such documents as ErrMalformed. As a
// last resort the parser reads the document through a guard (guard.go)
// that refuses every read once the deadline has passed or the parser has
// recursed too deep; since each turn of the library's loops over
// references reads the document again, a worker ends soon after its
// deadline. The loops that do not read, the tokenizer's at the end of a
// stream that ends inside a <hex string> and the linear scans of its font
// lookups, are ruled out before a page is read (pageCost) and, for object
// streams, before the document is (xref.go).
//
// Each page starts with a line "<!-- page N -->" (N from 1): an HTML
// comment, so renderers hide it while a reader (or a model) can still
// cite pages and see where a page break falls.
package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Errors an extraction can end with; test with errors.Is.
var (
	// ErrEncrypted: the document needs a password to be read.
	ErrEncrypted = errors.New("pdftext: the PDF is encrypted")
	// ErrNoText: the document has pages but no extractable text (a scan,
	// or text drawn as images or outlines).
	ErrNoText = errors.New("pdftext: the PDF has no text layer")
	// ErrMalformed: the document could not be parsed.
	ErrMalformed = errors.New("pdftext: malformed PDF")
	// ErrTooLarge: the document is larger than Options.MaxBytes.
	ErrTooLarge = errors.New("pdftext: the PDF is too large")
	// ErrBusy: every worker is taken (possibly by stuck documents) and
	// none freed up before the context ended.
	ErrBusy = errors.New("pdftext: too many PDFs are being read")
)

// Defaults of Options.
const (
	DefaultMaxPages   = 500
	DefaultMaxChars   = 2_000_000
	DefaultMaxBytes   = 32 << 20
	DefaultTimeout    = 20 * time.Second
	DefaultMaxWorkers = 2
	// DefaultMaxPageContent is far above real pages' content (a dense
	// page of text is 10–100 KiB of operators).
	DefaultMaxPageContent = 16 << 20
)

// Options bound an Extractor. Zero fields take the defaults.
type Options struct {
	// MaxPages is how many pages are read; later pages are left out and
	// Document.Truncated is set.
	MaxPages int
	// MaxChars caps the Markdown's length in bytes; reading stops at the
	// first page past it and Document.Truncated is set.
	MaxChars int
	// MaxBytes refuses larger documents outright (ErrTooLarge).
	MaxBytes int64
	// Timeout bounds one extraction, on top of the context's deadline.
	Timeout time.Duration
	// MaxWorkers bounds the documents parsed at once. A document that
	// outlives its deadline keeps its worker until the parser returns,
	// which it does at its next read of the document.
	MaxWorkers int
	// MaxPageContent caps one page's content streams once decompressed
	// (default 16 MiB): the parser holds a page's text in memory, and a
	// few KiB of Flate can expand to gigabytes. Such a page is skipped.
	MaxPageContent int64
}

// Document is an extracted PDF.
type Document struct {
	Title     string // the Info dictionary's Title, if any
	Markdown  string // the text, each page after a "<!-- page N -->" line
	Pages     int    // pages in the document
	PagesRead int    // pages whose text is in Markdown
	Truncated bool   // pages were left out (MaxPages or MaxChars)
	Skipped   []int  // pages left out: content over MaxPageContent, text too costly to decode, or content the parser would never finish
}

type progressKey struct{}

// WithProgress returns a context under which Extract reports its progress to
// fn: the pages read so far and the most it will read, after each page. fn
// runs on the extraction's goroutine; it is not called once Extract has
// returned.
func WithProgress(ctx context.Context, fn func(read, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// Extractor reads PDFs within its Options. It is safe for concurrent use.
type Extractor struct {
	opts    Options
	workers chan struct{}
}

// New returns an Extractor with opts (zero fields defaulted).
func New(opts Options) *Extractor {
	if opts.MaxPages <= 0 {
		opts.MaxPages = DefaultMaxPages
	}
	if opts.MaxChars <= 0 {
		opts.MaxChars = DefaultMaxChars
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxWorkers <= 0 {
		opts.MaxWorkers = DefaultMaxWorkers
	}
	if opts.MaxPageContent <= 0 {
		opts.MaxPageContent = DefaultMaxPageContent
	}
	return &Extractor{opts: opts, workers: make(chan struct{}, opts.MaxWorkers)}
}

// IsPDF reports whether data starts like a PDF ("%PDF-" within the first
// KiB, where readers accept it).
func IsPDF(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-"))
}

// Extract reads data's text as Markdown. It fails with ErrEncrypted,
// ErrNoText, ErrMalformed, ErrTooLarge, ErrBusy or the context's error
// (context.DeadlineExceeded also when Options.Timeout runs out).
func (e *Extractor) Extract(ctx context.Context, data []byte) (*Document, error) {
	if int64(len(data)) > e.opts.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(data), e.opts.MaxBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	select {
	case e.workers <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrBusy, ctx.Err())
	}
	type result struct {
		doc *Document
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned worker must not block
	var stop atomic.Bool
	var progress func(read, total int)
	if fn, ok := ctx.Value(progressKey{}).(func(read, total int)); ok && fn != nil {
		progress = func(read, total int) {
			if !stop.Load() { // the caller has gone: report nothing more
				fn(read, total)
			}
		}
	}
	go func() {
		defer func() { <-e.workers }()
		var r result
		defer func() {
			if p := recover(); p != nil {
				var abort abortError
				if err, ok := p.(error); ok && errors.As(err, &abort) {
					r = result{err: abort.err} // the guard's reason (guard.go)
				} else {
					r = result{err: fmt.Errorf("%w: %v", ErrMalformed, p)}
				}
			}
			done <- r
		}()
		r.doc, r.err = e.read(data, &stop, progress)
	}()
	select {
	case r := <-done:
		return r.doc, r.err
	case <-ctx.Done():
		stop.Store(true) // the worker stops at the next page
		return nil, ctx.Err()
	}
}

// read parses data; it may panic (the caller recovers).
func (e *Extractor) read(data []byte, stop *atomic.Bool, progress func(read, total int)) (*Document, error) {
	if !IsPDF(data) {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrMalformed)
	}
	// The library follows /Prev and object-stream references without
	// bounds: check them first (xref.go).
	if err := checkXref(data); err != nil {
		return nil, err
	}
	g := &guardedReader{data: data, stop: stop}
	doc, err := e.parse(g, data, progress)
	if aerr := g.aborted(); aerr != nil {
		// The library may have turned the abort into an error of its own
		// (or swallowed it and gone on): the abort is the reason.
		return nil, aerr
	}
	return doc, err
}

// parse reads the document through g.
func (e *Extractor) parse(g *guardedReader, data []byte, progress func(read, total int)) (*Document, error) {
	r, err := pdf.NewReader(g, int64(len(data)))
	if err != nil {
		// The parser's messages may quote the encryption dictionary's
		// binary keys: say what kind of failure it was, not its text.
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return nil, fmt.Errorf("%w with a password", ErrEncrypted)
		}
		if encrypted(data) {
			return nil, fmt.Errorf("%w with a scheme this reader does not support", ErrEncrypted)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	// Not Reader.Page: it follows /Kids cycles forever (pages.go).
	pages, more, err := collectPages(r, e.opts.MaxPages)
	if err != nil {
		return nil, err
	}
	doc := &Document{Pages: len(pages), Truncated: more, Title: cleanLine(r.Trailer().Key("Info").Key("Title").Text())}
	if more {
		doc.Pages = max(r.NumPage(), len(pages)+1)
	}
	var md strings.Builder
	textChars := 0
	for i, page := range pages {
		n := i + 1
		if g.stop.Load() {
			return nil, context.DeadlineExceeded
		}
		if md.Len() >= e.opts.MaxChars {
			doc.Truncated = true
			break
		}
		text := ""
		size, work, endless := pageCost(page, e.opts.MaxPageContent)
		oversized, costly := size > e.opts.MaxPageContent, work > maxDecodeWork
		if oversized || costly || endless {
			doc.Skipped = append(doc.Skipped, n)
		} else {
			// nil: fonts are looked up per page, their names being page-local.
			if text, err = page.GetPlainText(nil); err != nil {
				return nil, fmt.Errorf("%w: page %d: %v", ErrMalformed, n, err)
			}
		}
		text = normalise(text)
		textChars += utf8.RuneCountInString(text)
		if md.Len() > 0 {
			md.WriteString("\n\n")
		}
		fmt.Fprintf(&md, "<!-- page %d -->\n", n)
		switch {
		case oversized:
			fmt.Fprintf(&md, "<!-- page %d skipped: over %d MiB of content -->\n", n, e.opts.MaxPageContent>>20)
		case costly:
			fmt.Fprintf(&md, "<!-- page %d skipped: its text would take too long to decode -->\n", n)
		case endless:
			fmt.Fprintf(&md, "<!-- page %d skipped: its content ends inside a hex string -->\n", n)
		}
		if text != "" {
			md.WriteString("\n")
			md.WriteString(text)
		}
		doc.PagesRead++
		if progress != nil {
			progress(doc.PagesRead, min(doc.Pages, e.opts.MaxPages))
		}
	}
	if textChars == 0 {
		if doc.Pages == 0 {
			return nil, fmt.Errorf("%w: no pages", ErrMalformed)
		}
		if len(doc.Skipped) > 0 {
			return nil, fmt.Errorf("%w: %d pages over %d MiB of content once decompressed, too costly to decode or malformed, and no text on the others", ErrTooLarge, len(doc.Skipped), e.opts.MaxPageContent>>20)
		}
		return nil, fmt.Errorf("%w (%d pages, all without text: a scan or images)", ErrNoText, doc.Pages)
	}
	doc.Markdown = md.String()
	return doc, nil
}

// maxDecodeWork bounds a page's decoding work, in code-by-entry
// comparisons (~10 ns each, measured): the library looks each character
// code up by a linear scan of its font's ToUnicode entries or /Differences
// array, in memory, where the guard cannot stop it. Without the bound a
// 45 KB page (200 000 codes, a 20 000-entry map) held its worker for 41 s,
// and the content limits allow hours. A page over it would not be read
// within the deadline anyway.
const maxDecodeWork = 1 << 30

// pageCost measures, decompressed, what the parser reads whole for a
// page (its content streams and its fonts' ToUnicode maps; at most
// limit+1 bytes read, none kept), and bounds the work of decoding its
// text: content bytes (each at most one code) times the largest font's
// entries (a ToUnicode entry takes at least 10 bytes, "<01><0041>").
// endless reports a stream the library's tokenizer would never finish
// (see tailWatch).
func pageCost(page pdf.Page, limit int64) (size, work int64, endless bool) {
	var tail tailWatch
	content := contentSize(page.V.Key("Contents"), limit, &tail)
	size, endless = content, tail.endsInHexString()
	fonts := page.Resources().Key("Font")
	var entries int64
	for _, name := range fonts.Keys() {
		if size > limit {
			break
		}
		font := fonts.Key(name)
		var cmap cmapWatch
		n := contentSize(font.Key("ToUnicode"), limit-size, &cmap)
		size += n
		endless = endless || cmap.tail.endsInHexString()
		entries = max(entries, cmap.entries()+int64(font.Key("Encoding").Key("Differences").Len()))
	}
	if entries > maxCMapEntries {
		// The library would build a map this large before decoding a
		// character: refuse it as too costly whatever the content.
		return size, math.MaxInt64, endless
	}
	return size, content * entries, endless
}

// maxCMapEntries bounds the entries the library may build from one
// ToUnicode map (32–56 bytes each). Real maps have a few thousand.
const maxCMapEntries = 1 << 20

// cmapWatch is an io.Writer that keeps a ToUnicode map's bytes and their
// tailWatch. The library's map reader appends, at each endbfchar or
// endbfrange, as many entries as the count last given, without checking
// them against the data: "1000000000 beginbfchar endbfchar" is a 40 GB
// map. That count is a number written in the stream (directly, or through
// a name it was def'd to), so the largest number times the end operators
// bounds the entries.
type cmapWatch struct {
	buf  []byte
	tail tailWatch
}

func (w *cmapWatch) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return w.tail.Write(p)
}

// entries bounds the map's entries.
func (w *cmapWatch) entries() int64 {
	l := &lexer{data: w.buf}
	var most, ends int64
	for l.pos < len(l.data) {
		start := l.pos
		tok, err := l.token()
		if err != nil {
			l.pos = start + 1 // the library stops or skips there too; go on
			continue
		}
		switch t := tok.(type) {
		case int64:
			most = max(most, t)
		case keyword:
			if t == "endbfchar" || t == "endbfrange" {
				ends++
			}
		}
	}
	if most <= 0 || ends == 0 {
		return 0
	}
	if most > math.MaxInt64/ends {
		return math.MaxInt64
	}
	return most * ends
}

// contentSize measures a stream or an array of streams once decompressed,
// reading at most limit+1 bytes into w.
func contentSize(v pdf.Value, limit int64, w io.Writer) int64 {
	var total int64
	measure := func(s pdf.Value) {
		if !rowsFit(s, limit) {
			total = limit + 1
			return
		}
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(w, io.LimitReader(rc, limit+1-total))
		total += n
	}
	switch v.Kind() {
	case pdf.Stream:
		measure(v)
	case pdf.Array:
		for i := 0; i < v.Len() && total <= limit; i++ {
			if s := v.Index(i); s.Kind() == pdf.Stream {
				measure(s)
			}
		}
	}
	return total
}

// rowsFit reports whether the rows of s's predictor (/DecodeParms
// /Columns, the only thing the library sizes by it) fit in limit: the
// library allocates two rows before it reads, and reads a whole row at a
// time whatever the stream's size, so /Columns 10^12 is a fatal
// out-of-memory error rather than a large page.
func rowsFit(s pdf.Value, limit int64) bool {
	params := s.Key("DecodeParms")
	if params.Kind() == pdf.Array {
		for i := range params.Len() {
			if c := params.Index(i).Key("Columns").Int64(); c > limit {
				return false
			}
		}
		return true
	}
	return params.Key("Columns").Int64() <= limit
}

// tailWatch is an io.Writer that keeps the last byte written that is
// neither a hex digit nor white space. The library's tokenizer, at the
// end of a content stream, ToUnicode map or object stream, reads '\n'
// for ever after: inside a <hex string> that is white space, so it loops
// without end and without reading the file (where the guard would stop
// it). It is inside one at the end exactly when a '<' opened it and only
// hex digits and white space followed, which is what endsInHexString
// reports (also, harmlessly, for such a tail in a string or comment).
type tailWatch struct{ last byte }

func (w *tailWatch) Write(p []byte) (int, error) {
	for i := len(p) - 1; i >= 0; i-- {
		if c := p[i]; !isWhite(c) && !isHexDigit(c) {
			w.last = c
			break
		}
	}
	return len(p), nil
}

func (w *tailWatch) endsInHexString() bool { return w.last == '<' }

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// encrypted reports whether the document's trailer names an /Encrypt
// dictionary: the parser's error for a scheme it does not support says
// nothing about encryption.
func encrypted(data []byte) bool {
	tail := data[max(0, len(data)-4096):]
	return bytes.Contains(tail, []byte("/Encrypt")) || bytes.Contains(data[:min(len(data), 4096)], []byte("/Encrypt"))
}

// normalise trims each line, drops control characters, keeps at most one
// blank line in a row and none at either end.
func normalise(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var b strings.Builder
	blank := false
	for _, line := range strings.Split(text, "\n") {
		line = cleanLine(line)
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
			if blank {
				b.WriteString("\n")
			}
		}
		blank = false
		b.WriteString(line)
	}
	return b.String()
}

// cleanLine collapses a line's white space and removes control
// characters (NUL and the like from undecodable glyphs).
func cleanLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
