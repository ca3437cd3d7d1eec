package safehttp

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
)

// TooLargeError reports a body over Options.MaxBodyBytes, counted as
// received or after decompression, whichever exceeds first.
type TooLargeError struct {
	Limit int64 // the cap in bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("safehttp: response body exceeds the %d-byte limit", e.Limit)
}

// ErrDecode reports a body that does not decode as its Content-Encoding says.
var ErrDecode = errors.New("safehttp: cannot decode response body")

// maxEncodings bounds how many stacked Content-Encodings are undone.
const maxEncodings = 2

// readBody reads resp.Body, undoing its Content-Encoding, and fails with
// *TooLargeError once either the bytes received or the bytes decoded pass
// limit. Capping the received bytes too bounds a stream that decodes to
// little or nothing (e.g. endless empty deflate blocks). It reports whether
// it decoded anything. Unknown encodings are left as they are, as browsers
// do, and the Content-Encoding header then tells the caller.
func readBody(resp *http.Response, limit int64) ([]byte, bool, error) {
	if resp.ContentLength > limit {
		return nil, false, &TooLargeError{Limit: limit}
	}
	br := bufio.NewReader(&capReader{r: resp.Body, left: limit, limit: limit})
	if _, err := br.Peek(1); err != nil {
		if err == io.EOF {
			return []byte{}, false, nil
		}
		return nil, false, err
	}

	encs, known := parseEncodings(resp.Header.Values("Content-Encoding"))
	var r io.Reader = br
	decoded := false
	if known && len(encs) > 0 {
		// Encodings are listed in the order applied; undo them in reverse.
		for i := len(encs) - 1; i >= 0; i-- {
			dr, err := decoder(encs[i], r)
			if err != nil {
				return nil, false, decodeErr(encs[i], err)
			}
			r = dr
		}
		decoded = true
	}
	// An identity body of known length is read into a buffer of that size:
	// growing one from nothing would allocate about twice the body.
	hint := int64(0)
	if !decoded && resp.ContentLength > 0 {
		hint = resp.ContentLength
	}
	body, err := readAll(&capReader{r: r, left: limit, limit: limit}, hint)
	if err != nil {
		if decoded {
			return nil, false, decodeErr(strings.Join(encs, ", "), err)
		}
		return nil, false, err
	}
	return body, decoded, nil
}

// decodeErr wraps a decoder failure in ErrDecode, unless it is really a
// cap or transport error (timeouts) passed up through the decoder.
func decodeErr(enc string, err error) error {
	var tl *TooLargeError
	if errors.As(err, &tl) || isTimeout(err) {
		return err
	}
	return fmt.Errorf("%w (%s): %w", ErrDecode, enc, err)
}

// parseEncodings splits Content-Encoding values into lower-case tokens,
// dropping identity. known is false if any token is one Get cannot undo
// or there are more than maxEncodings.
func parseEncodings(values []string) (encs []string, known bool) {
	for _, v := range values {
		for _, tok := range strings.Split(v, ",") {
			tok = strings.ToLower(strings.TrimSpace(tok))
			switch tok {
			case "", "identity":
				continue
			case "gzip", "x-gzip", "br", "deflate":
				encs = append(encs, tok)
			default:
				return nil, false
			}
		}
	}
	return encs, len(encs) <= maxEncodings
}

func decoder(enc string, r io.Reader) (io.Reader, error) {
	switch enc {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "br":
		return brotli.NewReader(r), nil
	case "deflate":
		// HTTP "deflate" is zlib-wrapped (RFC 9110), but many servers send
		// raw deflate; tell them apart by the zlib header, as browsers do.
		br := bufio.NewReader(r)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", enc)
}

// capReader passes through at most limit bytes and fails with
// *TooLargeError when the source has more.
type capReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &TooLargeError{Limit: c.limit}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		n = int(c.left)
		c.left = -1
		return n, &TooLargeError{Limit: c.limit}
	}
	c.left -= int64(n)
	return n, err
}

// readAll is io.ReadAll starting from a buffer of hint bytes, so that a body
// whose length is known is read without reallocation.
func readAll(r io.Reader, hint int64) ([]byte, error) {
	b := make([]byte, 0, max(hint+1, 512)) // +1: room to see EOF without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the next size
		}
	}
}
