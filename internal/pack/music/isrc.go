package music

import (
	"fmt"
	"strings"
)

// ISRCLen is the length of a normalised ISRC (ISO 3901).
const ISRCLen = 12

// NormalizeISRC brings an ISRC to its canonical form: trimmed, upper case,
// hyphens and inner spaces removed ("us-rc1-23-45678" → "USRC12345678"). It
// reports an error unless the result is 2 letters (country), 3 letters or
// digits (registrant), and 7 digits (year and designation).
func NormalizeISRC(s string) (string, error) {
	if len(s) > 64 {
		return "", fmt.Errorf("%q… is not an ISRC (too long)", s[:16])
	}
	n := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(strings.TrimSpace(s)))
	if !validISRC(n) {
		return "", fmt.Errorf("%q is not an ISRC (want 12 characters: 2 letters, 3 letters or digits, 7 digits, e.g. USRC17607839)", s)
	}
	return n, nil
}

func validISRC(s string) bool {
	if len(s) != ISRCLen {
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
