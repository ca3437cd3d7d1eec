package extract

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gogs/chardet"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// metaScanLimit is how much of the page is searched for a <meta> charset
// declaration. HTML requires it in the first 1024 bytes, but real pages put
// long scripts and styles first, so we look further.
const metaScanLimit = 16 << 10

// sniffLimit is how much of the page the statistical detector reads.
const sniffLimit = 64 << 10

// DecodeHTML converts a page body to UTF-8. The encoding is taken, in
// order, from a byte order mark, the charset parameter of contentType (the
// HTTP Content-Type header, may be empty), a <meta charset> or <meta
// http-equiv="Content-Type"> near the top of the page, and finally a
// statistical sniff.
//
// Pages lie about their charset, so a declaration is only followed while it
// decodes the bytes cleanly: bytes that are valid UTF-8 (and not plain
// ASCII) are taken as UTF-8 whatever a header or meta says, and a declared
// charset that yields undecodable sequences gives way to the next candidate.
// When no candidate decodes cleanly the one with the fewest errors wins, and
// errors become U+FFFD. A leading byte order mark is removed.
func DecodeHTML(body []byte, contentType string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("extract: internal error decoding page: %v", r)
		}
	}()
	// A byte order mark is authoritative (as in the HTML standard).
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return toValidUTF8(body[3:]), nil
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), body[2:])
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), body[2:])
	}

	ascii := isASCII(body)
	validUTF8 := utf8.Valid(body)
	if validUTF8 && !ascii {
		return body, nil // UTF-8 by its bytes, whatever is declared
	}

	var candidates []string
	if label := headerCharset(contentType); label != "" {
		candidates = append(candidates, label)
	}
	if label := metaCharset(body); label != "" {
		candidates = append(candidates, label)
	}
	if ascii {
		// Pure ASCII reads the same in every ASCII-compatible charset; only a
		// declared 7-bit or 16-bit one (ISO-2022-JP, UTF-16) changes it.
		for _, label := range candidates {
			if e := lookup(label); e != nil {
				if out, err := decodeWith(e, body); err == nil && !bytes.Contains(out, []byte("\uFFFD")) {
					return out, nil
				}
			}
		}
		return body, nil
	}
	var best []byte
	bestErrs := -1
	tried := make(map[encoding.Encoding]bool)
	// try decodes with label; it reports whether the result is clean.
	try := func(label string) bool {
		e := lookup(label)
		if e == nil || tried[e] {
			return false
		}
		tried[e] = true
		out, err := decodeWith(e, body)
		if err != nil {
			return false
		}
		errs := bytes.Count(out, []byte("\uFFFD")) - bytes.Count(body, []byte("\uFFFD"))
		if errs <= 0 {
			best, bestErrs = out, 0
			return true
		}
		if bestErrs < 0 || errs < bestErrs {
			best, bestErrs = out, errs
		}
		return false
	}
	for _, label := range candidates {
		if try(label) {
			return best, nil
		}
	}
	// The statistical sniff (milliseconds on a large page) runs only when
	// no declared charset decodes the page cleanly.
	for _, label := range []string{sniffCharset(body), "windows-1252"} { // 1252: the web's default for legacy pages
		if label != "" && try(label) {
			return best, nil
		}
	}
	if best == nil {
		return nil, fmt.Errorf("extract: no usable character encoding for page")
	}
	return best, nil
}

// lookup maps a charset label to an encoding the way browsers do (WHATWG
// labels), or returns nil for an unknown label or the "replacement"
// encoding, which decodes nothing.
func lookup(label string) encoding.Encoding {
	e, err := htmlindex.Get(strings.TrimSpace(label))
	if err != nil || e == encoding.Replacement {
		return nil
	}
	if e == encoding.Nop {
		return nil
	}
	return e
}

func isUTF16(e encoding.Encoding) bool {
	name, _ := htmlindex.Name(e)
	return strings.HasPrefix(name, "utf-16")
}

func decodeWith(e encoding.Encoding, b []byte) ([]byte, error) {
	if name, _ := htmlindex.Name(e); name == "utf-8" {
		return toValidUTF8(b), nil
	}
	out, err := e.NewDecoder().Bytes(b)
	if err != nil {
		return nil, fmt.Errorf("extract: decode page: %w", err)
	}
	return out, nil
}

func toValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// headerCharset returns the charset parameter of a Content-Type value.
func headerCharset(contentType string) string {
	if contentType == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		// Tolerate sloppy headers such as "text/html; charset=utf-8;".
		i := strings.Index(strings.ToLower(contentType), "charset=")
		if i < 0 {
			return ""
		}
		v := contentType[i+len("charset="):]
		if j := strings.IndexAny(v, "; "); j >= 0 {
			v = v[:j]
		}
		return strings.Trim(v, `"'`)
	}
	return params["charset"]
}

// metaCharset finds a charset declared by <meta charset> or <meta
// http-equiv="Content-Type" content="…; charset=…"> before the body starts.
// A declared UTF-16 is read as UTF-8, as the HTML standard prescribes: a
// page that can be scanned as ASCII is not UTF-16.
func metaCharset(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body[:min(len(body), metaScanLimit)]))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body":
				return ""
			case "meta":
			default:
				continue
			}
			var charset, httpEquiv, content string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch strings.ToLower(string(k)) {
				case "charset":
					charset = string(v)
				case "http-equiv":
					httpEquiv = string(v)
				case "content":
					content = string(v)
				}
			}
			if charset == "" && strings.EqualFold(strings.TrimSpace(httpEquiv), "content-type") {
				charset = headerCharset(content)
			}
			if charset = strings.TrimSpace(charset); charset != "" {
				if e := lookup(charset); e != nil && isUTF16(e) {
					return "utf-8"
				}
				return charset
			}
		}
	}
}

// sniffCharset guesses the charset of a page that is not valid UTF-8 from
// its byte statistics. It returns "" when it cannot tell.
func sniffCharset(body []byte) string {
	r, err := chardet.NewHtmlDetector().DetectBest(body[:min(len(body), sniffLimit)])
	if err != nil || r == nil || r.Confidence < 30 {
		return ""
	}
	switch r.Charset {
	case "GB-18030":
		return "gb18030"
	case "ISO-2022-JP", "ISO-2022-KR", "ISO-2022-CN":
		return strings.ToLower(r.Charset)
	}
	return r.Charset
}
