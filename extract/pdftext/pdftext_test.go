package pdftext_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/extract/pdftext"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExtractText(t *testing.T) {
	tests := []struct {
		file      string
		pages     int
		wantTexts []string // in this order
	}{
		{"walden.pdf", 2, []string{"<!-- page 1 -->", "WALDEN", "THOREAU", "<!-- page 2 -->"}},
		{"hybrid.pdf", 1, []string{"<!-- page 1 -->"}},
		{"adobe-errata.pdf", 18, []string{"<!-- page 1 -->", "Errata", "<!-- page 2 -->", "<!-- page 18 -->"}},
	}
	x := pdftext.New(pdftext.Options{})
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc, err := x.Extract(context.Background(), read(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if doc.Pages != tt.pages || doc.PagesRead != tt.pages || doc.Truncated {
				t.Errorf("pages %d, read %d, truncated %v; want %d, all", doc.Pages, doc.PagesRead, doc.Truncated, tt.pages)
			}
			rest := doc.Markdown
			for _, w := range tt.wantTexts {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%q missing (or out of order) in:\n%.600s", w, doc.Markdown)
				}
				rest = rest[i+len(w):]
			}
			if strings.ContainsAny(doc.Markdown, "\x00\r") || strings.Contains(doc.Markdown, "\n\n\n") {
				t.Errorf("control characters or runs of blank lines left in the text")
			}
		})
	}
}

func TestExtractFailures(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"user password, RC4", read(t, "walden-encrypted-rc4.pdf"), pdftext.ErrEncrypted},
		{"user password, AES-256", read(t, "walden-encrypted-aes256.pdf"), pdftext.ErrEncrypted},
		{"scanned page", read(t, "blank-scan.pdf"), pdftext.ErrNoText},
		{"not a PDF", []byte("<html>hello</html>"), pdftext.ErrMalformed},
		{"header only", []byte("%PDF-1.7\n"), pdftext.ErrMalformed},
		{"cut in half", read(t, "walden.pdf")[:20000], pdftext.ErrMalformed},
	}
	x := pdftext.New(pdftext.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := x.Extract(context.Background(), tt.data)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v (doc %v), want %v", err, doc != nil, tt.want)
			}
		})
	}
}

func TestExtractBounds(t *testing.T) {
	data := read(t, "adobe-errata.pdf")
	t.Run("pages", func(t *testing.T) {
		doc, err := pdftext.New(pdftext.Options{MaxPages: 3}).Extract(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		if doc.PagesRead != 3 || !doc.Truncated || doc.Pages != 18 || strings.Contains(doc.Markdown, "<!-- page 4 -->") {
			t.Errorf("read %d of %d pages, truncated %v", doc.PagesRead, doc.Pages, doc.Truncated)
		}
	})
	t.Run("characters", func(t *testing.T) {
		doc, err := pdftext.New(pdftext.Options{MaxChars: 1}).Extract(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		if doc.PagesRead != 1 || !doc.Truncated {
			t.Errorf("read %d pages, truncated %v; want the first page only", doc.PagesRead, doc.Truncated)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		_, err := pdftext.New(pdftext.Options{MaxBytes: 1000}).Extract(context.Background(), data)
		if !errors.Is(err, pdftext.ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := pdftext.New(pdftext.Options{}).Extract(ctx, data)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the context's error", err)
		}
	})
	t.Run("workers", func(t *testing.T) {
		// One worker, held by a document whose caller gave up: the next
		// call waits for it rather than starting a second parser.
		x := pdftext.New(pdftext.Options{MaxWorkers: 1, Timeout: time.Nanosecond})
		_, err := x.Extract(context.Background(), data)
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, pdftext.ErrBusy) {
			t.Fatalf("got %v, want a deadline error", err)
		}
	})
}

func TestIsPDF(t *testing.T) {
	for in, want := range map[string]bool{"%PDF-1.4\n": true, "\xef\xbb\xbf%PDF-1.7": true, "<html>": false, "": false} {
		if got := pdftext.IsPDF([]byte(in)); got != want {
			t.Errorf("IsPDF(%q) = %v", in, got)
		}
	}
}

// BenchmarkExtract measures pages per second on the 18-page errata.
func BenchmarkExtract(b *testing.B) {
	data := read(b, "adobe-errata.pdf")
	x := pdftext.New(pdftext.Options{})
	pages := 0
	for b.Loop() {
		doc, err := x.Extract(context.Background(), data)
		if err != nil {
			b.Fatal(err)
		}
		pages += doc.PagesRead
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}

// buildPDF writes a PDF (CONSTRUCTED here, offsets computed) whose pages
// have the given content streams, Flate-compressed.
func buildPDF(t testing.TB, contents ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	kids := ""
	for i := range contents {
		kids += fmt.Sprintf("%d 0 R ", 4+2*i)
	}
	obj("<</Type/Catalog/Pages 2 0 R>>")
	obj(fmt.Sprintf("<</Type/Pages/Kids[%s]/Count %d>>", kids, len(contents)))
	obj("<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
	for i, c := range contents {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(c)
		zw.Close()
		obj(fmt.Sprintf("<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>/Contents %d 0 R>>", 5+2*i))
		obj(fmt.Sprintf("<</Length %d/Filter/FlateDecode>>\nstream\n%s\nendstream", z.Len(), z.Bytes()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func TestDecompressionBomb(t *testing.T) {
	// Page 2 expands from ~10 KiB to 10 MiB of text operators.
	bomb := bytes.Repeat([]byte("BT /F1 12 Tf 72 700 Td (aaaaaaaaaaaaaaaaaaaa) Tj ET\n"), 10<<20/51)
	data := buildPDF(t, []byte("BT /F1 12 Tf 72 700 Td (Hello from page one) Tj ET"), bomb,
		[]byte("BT /F1 12 Tf 72 700 Td (And page three) Tj ET"))
	if len(data) > 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed; want it small", len(data))
	}
	doc, err := pdftext.New(pdftext.Options{MaxPageContent: 1 << 20}).Extract(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Skipped) != 1 || doc.Skipped[0] != 2 || strings.Contains(doc.Markdown, "aaaa") ||
		!strings.Contains(doc.Markdown, "Hello from page one") || !strings.Contains(doc.Markdown, "And page three") ||
		!strings.Contains(doc.Markdown, "<!-- page 2 skipped: over 1 MiB of content -->") {
		t.Errorf("skipped %v, markdown:\n%.400s", doc.Skipped, doc.Markdown)
	}
	// A document that is nothing but such pages is too large, not a scan.
	if _, err := pdftext.New(pdftext.Options{MaxPageContent: 1 << 20}).Extract(context.Background(), buildPDF(t, bomb)); !errors.Is(err, pdftext.ErrTooLarge) {
		t.Errorf("bomb only: got %v, want ErrTooLarge", err)
	}
	// Under the default cap the same page is read.
	doc, err = pdftext.New(pdftext.Options{}).Extract(context.Background(), data)
	if err != nil || len(doc.Skipped) != 0 || !strings.Contains(doc.Markdown, "aaaa") {
		t.Errorf("default cap: err %v, skipped %v", err, doc.Skipped)
	}
}

func TestExtractReportsProgress(t *testing.T) {
	var got []string
	ctx := pdftext.WithProgress(context.Background(), func(read, total int) { got = append(got, fmt.Sprintf("%d/%d", read, total)) })
	doc, err := pdftext.New(pdftext.Options{MaxPages: 4}).Extract(ctx, read(t, "adobe-errata.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	// The total is the most that will be read: MaxPages of the 18.
	if want := []string{"1/4", "2/4", "3/4", "4/4"}; strings.Join(got, " ") != strings.Join(want, " ") || doc.PagesRead != 4 {
		t.Errorf("progress %v (%d pages read), want %v", got, doc.PagesRead, want)
	}
	got = nil
	if _, err := pdftext.New(pdftext.Options{}).Extract(ctx, read(t, "walden.pdf")); err != nil || strings.Join(got, " ") != "1/2 2/2" {
		t.Errorf("walden: progress %v, %v", got, err)
	}
}
