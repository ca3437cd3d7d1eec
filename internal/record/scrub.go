package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted replaces every secret in a recording. It is the marker the tool
// registry and the model client's errors use too, so that one search finds
// every place a secret was removed.
const Redacted = "[REDACTED]"

// legacyRedacted is the marker of recordings made before Redacted took
// brackets; the recordings committed then are data and stay as they are.
const legacyRedacted = "REDACTED"

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

// nameSeparators is built once: building it per name was half the time
// of learning from a body of many fields.
var nameSeparators = strings.NewReplacer("-", "", "_", "", ".", "")

func normName(name string) string { return strings.ToLower(nameSeparators.Replace(name)) }

func isSecretHeader(name string) bool {
	for _, h := range secretHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// Learning is bounded, because an upstream chooses what is learnt: every
// value of a field named "token" in its answer becomes a secret.
const (
	// MaxLearntPerBody bounds the values learnt from one body, one header
	// set or one query. An OAuth answer holds a handful; an answer with more
	// is not learnt past the bound (the recorder then redacts its
	// credential fields in place and reports the recording incomplete).
	MaxLearntPerBody = 256
	// MaxLearnt bounds the values a scrubber learns in all, and
	// maxLearntBytes their total length: together they bound the automaton
	// (each value is scrubbed in six forms) that every later byte runs
	// through, and the work of building it again after each exchange that
	// teaches something.
	MaxLearnt      = 4096
	maxLearntBytes = 256 << 10
	// maxLearntLen is the longest value learnt (a JWT is a few KiB).
	maxLearntLen = 16 << 10
)

// Scrubber removes secrets from bytes. It knows the secrets it was given and
// learns more from what passes through it: values of credential headers,
// query and form parameters, and JSON fields named like credentials (an
// OAuth token response's access_token, for instance). It is safe for
// concurrent use.
//
// All the secrets' forms are matched at once by one Aho–Corasick automaton,
// so scrubbing takes time linear in the bytes scrubbed whatever the number
// of secrets.
type Scrubber struct {
	mu           sync.Mutex
	forms        map[string]struct{}
	learnt       int // values learnt (not given)
	learntBytes  int
	m            *matcher     // nil when forms changed since it was built
	steps        atomic.Int64 // automaton transitions taken, for the tests' complexity checks
	learnSkipped atomic.Int64 // values not learnt because of the bounds
}

// NewScrubber returns a scrubber that knows secrets.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{forms: map[string]struct{}{}}
	s.Add(secrets...)
	return s
}

// Add teaches the scrubber more secrets, with the forms they take in
// transit: URL-encoded, JSON-escaped and base64 (HTTP Basic credentials).
// Values shorter than [MinSecretLen] and forms found within [Redacted]
// itself are not learnt. Given secrets are not bounded; learnt ones are
// (see [MaxLearntPerBody]).
func (s *Scrubber) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		s.addLocked(v)
	}
}

// addLocked adds v's forms.
func (s *Scrubber) addLocked(v string) {
	v = strings.TrimSpace(v)
	if len(v) < MinSecretLen {
		return
	}
	for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v),
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))} {
		// A form inside the marker itself ("DACT") cannot be
		// redacted: every marker written would contain it again.
		if _, ok := s.forms[f]; !ok && len(f) >= MinSecretLen && !strings.Contains(Redacted, f) {
			s.forms[f] = struct{}{}
			s.m = nil
		}
	}
}

// learn adds values found in transit, within the bounds, and returns how
// many it left out.
func (s *Scrubber) learn(values []string) (skipped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen {
			continue
		}
		if _, known := s.forms[v]; known {
			continue
		}
		if n >= MaxLearntPerBody || s.learnt >= MaxLearnt || len(v) > maxLearntLen || s.learntBytes+len(v) > maxLearntBytes {
			skipped++
			continue
		}
		s.addLocked(v)
		n++
		s.learnt++
		s.learntBytes += len(v)
	}
	s.learnSkipped.Add(int64(skipped))
	return skipped
}

// matcher returns the automaton of the secrets known now, nil for none.
func (s *Scrubber) matcher() *matcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil && len(s.forms) > 0 {
		s.m = newMatcher(slices.Collect(maps.Keys(s.forms)))
	}
	return s.m
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
	m := s.matcher()
	if m == nil {
		return bytes.Clone(b)
	}
	var steps int
	defer func() { s.steps.Add(int64(steps)) }()
	out := m.scrub(b, &steps)
	if esc, changed := scrubEscapedStrings(out, m, &steps); changed {
		// What was re-encoded may spell a secret with a marker beside it.
		out = m.scrub(esc, &steps)
	}
	return out
}

// scrubEscapedStrings handles secrets hidden by JSON escapes that byte
// search cannot see ("\u002d" for "-"): every quoted string with a
// backslash in it is decoded, and if the decoded text holds a secret the
// string is re-encoded with the secret replaced. Other bytes are untouched;
// what is not a JSON string literal is left as it is.
func scrubEscapedStrings(b []byte, m *matcher, steps *int) (_ []byte, changed bool) {
	if !bytes.Contains(b, []byte(`\`)) {
		return b, false
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
				if scrubbed := m.scrubString(v, steps); scrubbed != v {
					enc, _ := json.Marshal(scrubbed)
					out = append(append(out, b[last:i]...), enc...)
					last = end + 1
				}
			}
		}
		i = end
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}

// String is [Scrubber.Bytes] for a string.
func (s *Scrubber) String(v string) string { return string(s.Bytes([]byte(v))) }

// LearnHeader learns the credentials in h's secret headers: the whole
// value, the value after an auth scheme ("Bearer x"), the parts of HTTP
// Basic credentials and each cookie's value. It returns how many values
// the bounds ([MaxLearntPerBody], [MaxLearnt]) left out.
func (s *Scrubber) LearnHeader(h http.Header) (skipped int) {
	var learn []string
	for name, values := range h {
		if !isSecretHeader(name) {
			continue
		}
		for _, v := range values {
			learn = append(learn, v)
			scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
			if ok {
				learn = append(learn, cred)
				if strings.EqualFold(scheme, "Basic") {
					if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
						user, pass, _ := strings.Cut(string(dec), ":")
						learn = append(learn, string(dec), user, pass)
					}
				}
			}
			for part := range strings.SplitSeq(v, ";") {
				if _, val, ok := strings.Cut(part, "="); ok {
					learn = append(learn, val)
				}
			}
		}
	}
	return s.learn(learn)
}

// LearnValues learns the values of credential-named parameters and returns
// how many the bounds left out.
func (s *Scrubber) LearnValues(v url.Values) (skipped int) {
	var learn []string
	for name, values := range v {
		if isSecretParam(name) {
			learn = append(learn, values...)
		}
	}
	return s.learn(learn)
}

// LearnJSON learns the string values of credential-named fields anywhere in
// a JSON document, in the document's order, and returns how many the bounds
// left out. Bytes that are not JSON teach nothing.
func (s *Scrubber) LearnJSON(body []byte) (skipped int) {
	values, _ := credentialFields(body)
	return s.learn(values)
}

// credentialFields returns the string values of credential-named fields in
// a JSON document and where each lies in body, quotes included; nothing for
// bytes that are not one JSON document. It reads the document as a stream
// of tokens, in time linear in its length and at any depth.
func credentialFields(body []byte) (values []string, at []span) {
	if !json.Valid(body) {
		return nil, nil
	}
	type level struct{ object, wantKey bool }
	var stack []level
	var key string
	keyEnd := 0
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return values, at // io.EOF: body was checked valid
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, level{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:top]
				if top > 0 && stack[top-1].object {
					stack[top-1].wantKey = true
				}
			}
			continue
		}
		if top < 0 {
			continue
		}
		if stack[top].object && stack[top].wantKey {
			key, _ = tok.(string)
			keyEnd = int(dec.InputOffset())
			stack[top].wantKey = false
			continue
		}
		if str, ok := tok.(string); ok && stack[top].object && isSecretField(key) {
			// Between a key and its value lie only spaces and the colon.
			start := keyEnd + bytes.IndexByte(body[keyEnd:], '"')
			values = append(values, str)
			at = append(at, span{start, int(dec.InputOffset())})
		}
		if stack[top].object {
			stack[top].wantKey = true
		}
	}
}

// redactFields returns body with each of the stretches at (sorted, apart)
// replaced by the quoted marker.
func redactFields(body []byte, at []span) []byte {
	out := make([]byte, 0, len(body))
	last := 0
	for _, sp := range at {
		out = append(append(out, body[last:sp.start]...), `"`+Redacted+`"`...)
		last = sp.end
	}
	return append(out, body[last:]...)
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
