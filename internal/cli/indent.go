package cli

import (
	"bytes"
	"encoding/json"
)

// indent pretty-prints JSON, leaving invalid input as it is.
func indent(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return raw
	}
	return b.Bytes()
}
