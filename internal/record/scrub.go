package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces every secret in a recording.
const Redacted = "REDACTED"

// MinSecretLen is the shortest value treated as a secret: shorter ones
// ("1", "en") would blank ordinary bytes all over a recording, and no real
// key is that short.
const MinSecretLen = 4

// secretParams are query and form parameter names whose values are
// credentials, compared case-insensitively with "-", "_" and "." removed.
var secretParams = []string{
	"key", "apikey", "apitoken", "token", "accesstoken", "refreshtoken", "idtoken",
	"clientsecret", "secret", "password", "passwd", "pwd", "auth", "authorization",
	"signature", "sig", "code", "codeverifier", "sessionid", "session", "cookie",
	"subscriptiontoken", "secretkey", "privatekey", "credential", "credentials",
}

// secretFields are the JSON field names whose string values are learnt as
// secrets. The list is narrower than secretParams: JSON bodies use "key" and
// "code" for ordinary data (CKAN extras, error codes such as RATE_LIMITED),
// which must not be blanked everywhere they appear.
var secretFields = []string{
	"apikey", "apitoken", "token", "accesstoken", "refreshtoken", "idtoken",
	"clientsecret", "secret", "password", "secretkey", "privatekey", "subscriptiontoken",
}

// secretHeaders are request or response headers whose values are
// credentials; their values are learnt as secrets and the headers are never
// written.
var secretHeaders = []string{
	"Authorization", "Proxy-Authorization", "X-Subscription-Token", "X-Api-Key", "Api-Key",
	"X-Goog-Api-Key", "Cookie", "Set-Cookie", "X-Auth-Token", "X-Access-Token",
}

// isSecretParam reports whether a query or form parameter holds a credential.
func isSecretParam(name string) bool { return slices.Contains(secretParams, normName(name)) }

// isSecretField reports whether a JSON field holds a credential.
func isSecretField(name string) bool { return slices.Contains(secretFields, normName(name)) }

func normName(name string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
}

func isSecretHeader(name string) bool {
	for _, h := range secretHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// Scrubber removes secrets from bytes. It knows the secrets it was given and
// learns more from what passes through it: values of credential headers,
// query and form parameters, and JSON fields named like credentials (an
// OAuth token response's access_token, for instance). It is safe for
// concurrent use.
type Scrubber struct {
	mu      sync.Mutex
	secrets []string // longest first, so a secret containing another goes whole
}

// NewScrubber returns a scrubber that knows secrets.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(secrets...)
	return s
}

// Add teaches the scrubber more secrets, with the forms they take in
// transit: URL-encoded, JSON-escaped and base64 (HTTP Basic credentials).
// Values shorter than [MinSecretLen] and forms found within [Redacted]
// itself are not learnt.
func (s *Scrubber) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen {
			continue
		}
		forms := []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v),
			base64.StdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))}
		for _, f := range forms {
			// A form inside the marker itself ("DACT") cannot be
			// redacted: every marker written would contain it again.
			if len(f) >= MinSecretLen && !strings.Contains(Redacted, f) && !slices.Contains(s.secrets, f) {
				s.secrets = append(s.secrets, f)
			}
		}
	}
	slices.SortStableFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
}

// jsonEscaped is v as it appears inside a JSON string, without the quotes.
func jsonEscaped(v string) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 {
		return v
	}
	return string(b[1 : len(b)-1])
}

// Bytes returns b with every known secret replaced by [Redacted]. b is not
// changed.
func (s *Scrubber) Bytes(b []byte) []byte {
	s.mu.Lock()
	secrets := s.secrets
	s.mu.Unlock()
	out := b
	for _, sec := range secrets {
		if bytes.Contains(out, []byte(sec)) {
			out = bytes.ReplaceAll(out, []byte(sec), []byte(Redacted))
		}
	}
	if len(secrets) == 0 {
		return bytes.Clone(b)
	}
	out = scrubEscapedStrings(out, secrets)
	if bytes.Contains(out, []byte(Redacted)) {
		out = scrubAcrossMarkers(out, secrets)
	}
	return out
}

// scrubAcrossMarkers removes secrets that a marker and the bytes beside it
// spell together, where a replacement completed a secret: "D000000" with
// the secret "D000" became "REDACTED000". Each such occurrence is
// replaced, together with every marker it touches, by one marker. That
// ends: a replacement either turns at least one byte outside the markers
// into marker, or joins two or more markers into one, and no secret lies
// within a single marker (Add refuses those).
//
// It runs in one pass, in time linear in len(b) for a given set of secrets:
// a body that an upstream fills with such occurrences (it can make any
// value a secret by naming a field "token") must not make the scrubber
// quadratic.
func scrubAcrossMarkers(b []byte, secrets []string) []byte {
	r := rewriter{b: b, secrets: secrets, longest: len(secrets[0]), next: make([]int, len(secrets))}
	for i := range r.next {
		r.next[i] = -1
	}
	return r.run()
}

// rewriter holds the text out ++ b[r:] while scrubAcrossMarkers rewrites
// it: out is the part already written, in which no secret lies whole.
type rewriter struct {
	out, b  []byte
	r       int
	secrets []string // longest first
	longest int
	next    []int // next[k]: where secrets[k] next occurs in b at or after r, len(b) for nowhere; below r: not known
}

func (w *rewriter) run() []byte {
	w.out = make([]byte, 0, len(w.b))
	for {
		// Occurrences that begin in out's tail: only the marker last
		// written can have made them, and they reach at most longest-1
		// bytes before it.
		if s, e, ok := w.inTail(); ok {
			w.replace(s, e)
			continue
		}
		// Otherwise the next occurrence lies in b whole.
		p, k := len(w.b), -1
		for i, sec := range w.secrets {
			if w.next[i] < w.r {
				w.next[i] = len(w.b) // none: never searched again
				if j := bytes.Index(w.b[w.r:], []byte(sec)); j >= 0 {
					w.next[i] = w.r + j
				}
			}
			if w.next[i] < p {
				p, k = w.next[i], i
			}
		}
		if k < 0 {
			return append(w.out, w.b[w.r:]...)
		}
		w.out = append(w.out, w.b[w.r:p]...)
		w.r = p
		w.replace(len(w.out), len(w.out)+len(w.secrets[k]))
	}
}

// inTail finds the first occurrence of a secret that begins in the last
// longest+len(Redacted)-1 bytes of out, as positions in out ++ b[r:].
func (w *rewriter) inTail() (start, end int, ok bool) {
	from := max(0, len(w.out)-(w.longest+len(Redacted)-1))
	window := slices.Concat(w.out[from:], w.b[w.r:min(len(w.b), w.r+w.longest-1)])
	start = -1
	for _, sec := range w.secrets {
		if i := bytes.Index(window, []byte(sec)); i >= 0 && from+i < len(w.out) && (start < 0 || from+i < start) {
			start, end = from+i, from+i+len(sec)
		}
	}
	return start, end, start >= 0
}

// at returns the byte at position i of out ++ b[r:], and false past its end.
func (w *rewriter) at(i int) (byte, bool) {
	if i < len(w.out) {
		return w.out[i], true
	}
	if i -= len(w.out); w.r+i < len(w.b) {
		return w.b[w.r+i], true
	}
	return 0, false
}

// markerAt reports whether a marker begins at position i of out ++ b[r:].
func (w *rewriter) markerAt(i int) bool {
	for j := range len(Redacted) {
		if c, ok := w.at(i + j); !ok || c != Redacted[j] {
			return false
		}
	}
	return true
}

// replace replaces positions [start, end) of out ++ b[r:], widened to the
// whole of any marker they touch at either edge, by one marker.
func (w *rewriter) replace(start, end int) {
	for lo := max(0, start-len(Redacted)+1); lo < start; lo++ {
		if w.markerAt(lo) {
			start = lo
			break
		}
	}
	for hi := end - 1; hi >= max(start, end-len(Redacted)+1); hi-- {
		if w.markerAt(hi) {
			end = hi + len(Redacted)
			break
		}
	}
	var rest []byte // what out held after end
	if end < len(w.out) {
		rest = slices.Clone(w.out[end:])
	} else {
		w.r += end - len(w.out)
	}
	w.out = append(append(w.out[:start], Redacted...), rest...)
}

// scrubEscapedStrings handles secrets hidden by JSON escapes that byte
// search cannot see ("\u002d" for "-"): every quoted string with a
// backslash in it is decoded, and if the decoded text holds a secret the
// string is re-encoded with the secret replaced. Other bytes are untouched;
// what is not a JSON string literal is left as it is.
func scrubEscapedStrings(b []byte, secrets []string) []byte {
	if !bytes.Contains(b, []byte(`\`)) {
		return b
	}
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, escaped := i+1, false
		for ; end < len(b) && b[end] != '"'; end++ {
			if b[end] == '\\' {
				escaped = true
				end++
			}
		}
		if end >= len(b) {
			break
		}
		if escaped {
			var v string
			if json.Unmarshal(b[i:end+1], &v) == nil {
				scrubbed := v
				for _, sec := range secrets {
					scrubbed = strings.ReplaceAll(scrubbed, sec, Redacted)
				}
				if scrubbed != v {
					enc, _ := json.Marshal(scrubbed)
					out = append(append(out, b[last:i]...), enc...)
					last = end + 1
				}
			}
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// String is [Scrubber.Bytes] for a string.
func (s *Scrubber) String(v string) string { return string(s.Bytes([]byte(v))) }

// LearnHeader learns the credentials in h's secret headers: the whole
// value, the value after an auth scheme ("Bearer x"), the parts of HTTP
// Basic credentials and each cookie's value.
func (s *Scrubber) LearnHeader(h http.Header) {
	for name, values := range h {
		if !isSecretHeader(name) {
			continue
		}
		for _, v := range values {
			s.Add(v)
			scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
			if ok {
				s.Add(cred)
				if strings.EqualFold(scheme, "Basic") {
					if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
						user, pass, _ := strings.Cut(string(dec), ":")
						s.Add(string(dec), user, pass)
					}
				}
			}
			for part := range strings.SplitSeq(v, ";") {
				if _, val, ok := strings.Cut(part, "="); ok {
					s.Add(val)
				}
			}
		}
	}
}

// LearnValues learns the values of credential-named parameters.
func (s *Scrubber) LearnValues(v url.Values) {
	for name, values := range v {
		if isSecretParam(name) {
			s.Add(values...)
		}
	}
}

// maxLearnDepth bounds the JSON nesting LearnJSON walks.
const maxLearnDepth = 64

// LearnJSON learns the string values of credential-named fields anywhere in
// a JSON document. Bytes that are not JSON teach nothing.
func (s *Scrubber) LearnJSON(body []byte) {
	if !json.Valid(body) {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return
	}
	s.learnJSON(v, 0)
}

func (s *Scrubber) learnJSON(v any, depth int) {
	if depth > maxLearnDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if str, ok := val.(string); ok && isSecretField(k) {
				s.Add(str)
				continue
			}
			s.learnJSON(val, depth+1)
		}
	case []any:
		for _, val := range x {
			s.learnJSON(val, depth+1)
		}
	}
}

// Query returns a raw query with the values of credential-named parameters
// replaced by [Redacted] and every known secret scrubbed. The parameters'
// order is kept.
func (s *Scrubber) Query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && isSecretParam(name) {
			parts[i] = k + "=" + Redacted
		}
	}
	return s.String(strings.Join(parts, "&"))
}
