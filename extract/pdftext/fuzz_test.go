package pdftext_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolport/toolport/extract/pdftext"
)

// FuzzExtract feeds arbitrary bytes to the PDF path: every input must end
// in a Document or one of the package's errors, never a panic or a hang.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"walden.pdf", "blank-scan.pdf", "walden-encrypted-rc4.pdf"} {
		f.Add(read(f, name))
	}
	f.Add(buildPDF(f, []byte("BT /F1 12 Tf 72 700 Td (Hello) Tj ET"), []byte("BT (x) ' T* [(a) -250 (b)] TJ ET")))
	f.Add([]byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"))
	// Documents whose references loop (/Prev, /Kids, /Parent, object
	// streams): the mutator rewrites their numbers into other graphs.
	for _, data := range pdftext.HostilePDFs() {
		f.Add(data)
	}
	x := pdftext.New(pdftext.Options{MaxPages: 20, MaxBytes: 1 << 20, Timeout: 2 * time.Second, MaxWorkers: 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := x.Extract(context.Background(), data)
		switch {
		case err == nil:
			if doc == nil || doc.PagesRead == 0 || doc.PagesRead > 20 {
				t.Fatalf("no error but doc %+v", doc)
			}
		case errors.Is(err, pdftext.ErrMalformed), errors.Is(err, pdftext.ErrEncrypted), errors.Is(err, pdftext.ErrNoText),
			errors.Is(err, pdftext.ErrTooLarge), errors.Is(err, pdftext.ErrBusy), errors.Is(err, context.DeadlineExceeded):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
