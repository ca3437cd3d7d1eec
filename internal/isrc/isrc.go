// Package isrc is the one rule for International Standard Recording Codes
// (ISO 3901) in Toolport: what an ISRC looks like and its canonical form.
// The music pack, the chat server, the index build and the TIDAL and
// ReccoBeats clients use it.
package isrc

import (
	"fmt"
	"strings"
)

// Len is the length of a canonical ISRC.
const Len = 12

// maxInput bounds what Normalize looks at: an ISRC written with every
// separator is 15 characters; anything much longer is not one.
const maxInput = 64

// separators are the characters people write inside an ISRC
// ("US-RC1-76-07839", "US RC1 76 07839"), removed by Normalize.
var separators = strings.NewReplacer("-", "", " ", "")

// Normalize brings an ISRC to its canonical form: trimmed, upper case,
// hyphens and inner spaces removed ("us-rc1-23-45678" → "USRC12345678"). It
// reports an error unless the result is 2 letters (country), 3 letters or
// digits (registrant), and 7 digits (year and designation).
func Normalize(s string) (string, error) {
	if len(s) > maxInput {
		return "", fmt.Errorf("%q… is not an ISRC (too long)", s[:16])
	}
	n := strings.ToUpper(separators.Replace(strings.TrimSpace(s)))
	if !Valid(n) {
		return "", fmt.Errorf("%q is not an ISRC (want 12 characters: 2 letters, 3 letters or digits, 7 digits, e.g. USRC17607839)", s)
	}
	return n, nil
}

// Valid reports whether s is an ISRC in canonical form.
func Valid(s string) bool {
	if len(s) != Len {
		return false
	}
	for i := range len(s) {
		c := s[i]
		letter := c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		switch {
		case i < 2 && !letter:
			return false
		case i >= 2 && i < 5 && !letter && !digit:
			return false
		case i >= 5 && !digit:
			return false
		}
	}
	return true
}
