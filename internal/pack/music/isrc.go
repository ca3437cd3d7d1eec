package music

import "github.com/toolport/toolport/internal/isrc"

// ISRCLen is the length of a normalised ISRC (ISO 3901).
const ISRCLen = isrc.Len

// NormalizeISRC brings an ISRC to its canonical form ("us-rc1-23-45678" →
// "USRC12345678") or says why it is not one: the one rule, [isrc.Normalize].
func NormalizeISRC(s string) (string, error) { return isrc.Normalize(s) }

func validISRC(s string) bool { return isrc.Valid(s) }
