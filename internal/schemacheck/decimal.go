package schemacheck

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// decimal is an exact JSON number: 0.digits × 10^exp, digits without
// leading or trailing zeros ("" for zero). Comparing two takes time linear
// in their digits whatever their exponents, where math/big would expand
// 1e999999999 into a billion digits: arguments are untrusted.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp saturates exponents; no schema bound comes near it.
const maxExp = 1 << 40

// parseDecimal reads a JSON number. It reports false for anything else.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	intEnd := 0
	for intEnd < len(s) && isDigit(s[intEnd]) {
		intEnd++
	}
	if intEnd == 0 || (s[0] == '0' && intEnd > 1) {
		return decimal{}, false
	}
	intPart, frac, rest := s[:intEnd], "", s[intEnd:]
	if strings.HasPrefix(rest, ".") {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 {
			return decimal{}, false
		}
		frac, rest = rest[1:n], rest[n:]
	}
	var exp int64
	if rest != "" {
		if rest[0] != 'e' && rest[0] != 'E' {
			return decimal{}, false
		}
		rest = rest[1:]
		negExp := false
		if rest != "" && (rest[0] == '+' || rest[0] == '-') {
			negExp, rest = rest[0] == '-', rest[1:]
		}
		if rest == "" {
			return decimal{}, false
		}
		for i := 0; i < len(rest); i++ {
			if !isDigit(rest[i]) {
				return decimal{}, false
			}
			if exp < maxExp {
				exp = exp*10 + int64(rest[i]-'0')
			}
		}
		exp = min(exp, maxExp)
		if negExp {
			exp = -exp
		}
	}
	digits := intPart + frac
	point := int64(len(intPart)) + exp
	trimmed := strings.TrimLeft(digits, "0")
	point -= int64(len(digits) - len(trimmed))
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return decimal{}, true // zero, and -0 is zero
	}
	d.digits, d.exp = trimmed, point
	return d, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// decimalOf reads a decoded JSON number: a json.Number (decoders with
// UseNumber) or a finite float64.
func decimalOf(v any) (decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return decimal{}, false
		}
		return floatDecimal(x), true
	}
	return decimal{}, false
}

// floatDecimal is the shortest decimal that reads back as f: the number
// encoding/json writes for it, and so the bound a schema publishes.
func floatDecimal(f float64) decimal {
	d, _ := parseDecimal(strconv.FormatFloat(f, 'e', -1, 64))
	return d
}

func (d decimal) isZero() bool { return d.digits == "" }

// isInt says whether d has no fractional part (1.0 and 1e2 are integers).
func (d decimal) isInt() bool {
	return d.isZero() || int64(len(d.digits)) <= d.exp
}

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than e.
func (d decimal) cmp(e decimal) int {
	sign := func(x decimal) int {
		switch {
		case x.isZero():
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, se := sign(d), sign(e)
	if sd != se || sd == 0 {
		return cmp.Compare(sd, se)
	}
	mag := cmp.Compare(d.exp, e.exp)
	if mag == 0 {
		// Same exponent: the digits compare as strings, a prefix being
		// smaller (no trailing zeros).
		mag = strings.Compare(d.digits, e.digits)
	}
	return mag * sd
}

// maxIntText bounds the integers written out digit by digit; larger ones
// are written as floats.
const maxIntText = 400

// String writes d for a message: integers in full ("1e3" is 1000), other
// numbers as the nearest float64 in its shortest form.
func (d decimal) String() string {
	if d.isZero() {
		return "0"
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	if d.isInt() && d.exp <= maxIntText {
		return sign + d.digits + strings.Repeat("0", int(d.exp)-len(d.digits))
	}
	f, _ := strconv.ParseFloat(sign+"0."+d.digits+"e"+strconv.FormatInt(d.exp, 10), 64)
	return strconv.FormatFloat(f, 'g', -1, 64)
}
