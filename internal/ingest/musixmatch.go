package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/textclip"
)

// Musixmatch settings, read by the commands that wire the client.
const (
	MusixmatchKeyEnv      = "MUSIXMATCH_API_KEY"
	MusixmatchBaseURLEnv  = "MUSIXMATCH_BASE_URL"
	MusixmatchDefaultBase = "https://api.musixmatch.com"
	musixmatchMaxBody     = 1 << 20
)

// musixmatchNotice ends the lyrics of the free, non-commercial tier, which
// are partial; it and what follows it are cut.
const musixmatchNotice = "******* This Lyrics is NOT for Commercial use *******"

// Musixmatch is a client of Musixmatch's track.lyrics.get by ISRC: the
// lyrics source the pipeline asks when LRCLIB has none and a key is
// configured. Its key travels in the query string, so no error it returns
// holds the URL.
type Musixmatch struct {
	http *http.Client
	base *url.URL
	key  string
}

// ErrMusixmatchNotFound: Musixmatch has no lyrics for the ISRC (a miss).
var ErrMusixmatchNotFound = errors.New("musixmatch: no lyrics")

// MusixmatchError is a failure Musixmatch reported, by HTTP status or by
// the status_code of its envelope (it may answer HTTP 200 with an error
// inside).
type MusixmatchError struct {
	StatusCode int
}

func (e *MusixmatchError) Error() string {
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden:
		return fmt.Sprintf("musixmatch: status %d: the API key was refused or its plan does not allow this call", e.StatusCode)
	}
	return fmt.Sprintf("musixmatch: status %d", e.StatusCode)
}

// NewMusixmatch returns a client; an empty baseURL means the real API.
func NewMusixmatch(hc *http.Client, baseURL, key string) (*Musixmatch, error) {
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("musixmatch: an API key is required")
	}
	if strings.TrimSpace(baseURL) == "" {
		baseURL = MusixmatchDefaultBase
	}
	u, err := httpclient.ParseBaseURL(baseURL)
	if err != nil {
		return nil, fmt.Errorf("musixmatch: %s: %w", MusixmatchBaseURLEnv, err)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Musixmatch{http: httpclient.NoRedirects(hc), base: u, key: key}, nil
}

// LyricsByISRC returns the lyrics Musixmatch has for isrc, and whether
// they are the free tier's partial lyrics (their notice is cut), or an
// error matching [ErrMusixmatchNotFound] when it has none.
func (m *Musixmatch) LyricsByISRC(ctx context.Context, isrc string) (string, bool, error) {
	u := httpclient.WithPath(m.base, "/ws/1.1/track.lyrics.get")
	u.RawQuery = url.Values{"track_isrc": {isrc}, "apikey": {m.key}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", false, errors.New("musixmatch: building the request failed")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Toolport/0.1 (https://github.com/toolport/toolport)")
	resp, err := m.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL holds the key: keep only the cause
		}
		return "", false, fmt.Errorf("musixmatch: %w", err)
	}
	defer resp.Body.Close()
	body, err := httpclient.ReadBody(resp.Body, musixmatchMaxBody)
	if err != nil {
		return "", false, fmt.Errorf("musixmatch: reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", false, &MusixmatchError{StatusCode: resp.StatusCode}
	}
	return ParseMusixmatchLyrics(body)
}

// ParseMusixmatchLyrics reads a track.lyrics.get answer:
// {"message":{"header":{"status_code"},"body":{"lyrics":{"lyrics_body"}}}}.
// The envelope's status_code decides (the HTTP status may be 200 on errors).
func ParseMusixmatchLyrics(body []byte) (text string, partial bool, err error) {
	var env struct {
		Message *struct {
			Header struct {
				StatusCode int `json:"status_code"`
			} `json:"header"`
			Body json.RawMessage `json:"body"`
		} `json:"message"`
	}
	if err := json.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &env); err != nil || env.Message == nil {
		return "", false, errors.New("musixmatch: malformed response: not a track.lyrics.get envelope")
	}
	switch sc := env.Message.Header.StatusCode; {
	case sc == http.StatusNotFound:
		return "", false, ErrMusixmatchNotFound
	case sc != http.StatusOK:
		return "", false, &MusixmatchError{StatusCode: sc}
	}
	var b struct {
		Lyrics *struct {
			Body string `json:"lyrics_body"`
		} `json:"lyrics"`
	}
	// An error envelope may carry "body": [] instead of an object.
	if err := json.Unmarshal(env.Message.Body, &b); err != nil || b.Lyrics == nil {
		return "", false, ErrMusixmatchNotFound
	}
	text = b.Lyrics.Body
	if i := strings.Index(text, musixmatchNotice); i >= 0 {
		text, partial = text[:i], true
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", false, ErrMusixmatchNotFound
	}
	return textclip.Prefix(text, maxLyricsBytes), partial, nil
}
