package tidal

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// maxDurationLen bounds the input of [ParseDuration]: real values are a
// dozen bytes ("PT1H23M45S"), so anything long is junk, not a duration.
const maxDurationLen = 64

// ParseDuration parses an ISO-8601 duration as TIDAL writes them ("PT3M",
// "PT2H16S", "PT4M5S"). Every component is optional but at least one must be
// present; weeks and days are accepted (as 7 and 1 × 24 h) and the seconds may
// carry a fraction ("PT1.5S"). Years and months have no fixed length, so they
// are rejected, as are negative values and results that overflow
// time.Duration.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > maxDurationLen {
		return 0, errors.New("tidal: duration too long")
	}
	if len(s) < 2 || s[0] != 'P' {
		return 0, fmt.Errorf("tidal: duration %q: must start with P", s)
	}
	// Units in the order ISO-8601 requires; the index into this table only
	// moves forward, which rejects "PT5S3M" and duplicates.
	type unit struct {
		designator byte
		inTime     bool
		size       time.Duration
	}
	units := [...]unit{
		{'W', false, 7 * 24 * time.Hour},
		{'D', false, 24 * time.Hour},
		{'H', true, time.Hour},
		{'M', true, time.Minute},
		{'S', true, time.Second},
	}
	var (
		total      float64 // in nanoseconds; float so that overflow is detectable
		next       int     // first unit still allowed
		inTime     bool
		components int
		timeParts  int
	)
	for i := 1; i < len(s); {
		if s[i] == 'T' {
			if inTime {
				return 0, fmt.Errorf("tidal: duration %q: repeated T", s)
			}
			inTime = true
			i++
			continue
		}
		// A number: digits with an optional fraction.
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		intEnd := i
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			i++
			fracStart := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i == fracStart {
				return 0, fmt.Errorf("tidal: duration %q: empty fraction", s)
			}
		}
		if intEnd == start || i == len(s) {
			return 0, fmt.Errorf("tidal: duration %q: malformed component", s)
		}
		number := s[start:i]
		fractional := i > intEnd
		d := s[i]
		i++
		u := -1
		for k := next; k < len(units); k++ {
			if units[k].designator == d && units[k].inTime == inTime {
				u = k
				break
			}
		}
		if u < 0 {
			return 0, fmt.Errorf("tidal: duration %q: unexpected %q", s, d)
		}
		if fractional && (units[u].designator != 'S' || i != len(s)) {
			return 0, fmt.Errorf("tidal: duration %q: only seconds may have a fraction", s)
		}
		v, err := parseDecimal(number)
		if err != nil {
			return 0, fmt.Errorf("tidal: duration %q: %w", s, err)
		}
		total += v * float64(units[u].size)
		if total > math.MaxInt64 {
			return 0, fmt.Errorf("tidal: duration %q: out of range", s)
		}
		next = u + 1
		components++
		if inTime {
			timeParts++
		}
	}
	if components == 0 || (inTime && timeParts == 0) {
		return 0, fmt.Errorf("tidal: duration %q: no components", s)
	}
	return time.Duration(math.Round(total)), nil
}

// parseDecimal reads digits with an optional ',' or '.' fraction. The caller
// has checked the characters; this only bounds the magnitude.
func parseDecimal(s string) (float64, error) {
	var v, scale float64 = 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' || c == ',' {
			scale = 1
			continue
		}
		if scale == 0 {
			v = v*10 + float64(c-'0')
		} else {
			scale /= 10
			v += float64(c-'0') * scale
		}
		if v > 1e18 {
			return 0, errors.New("number too large")
		}
	}
	return v, nil
}
