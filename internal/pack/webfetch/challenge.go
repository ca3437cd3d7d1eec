package webfetch

import (
	"bytes"

	"github.com/toolport/toolport/safehttp"
)

// challengeMarkers are strings that only anti-bot interstitials carry. They
// are matched in the first part of the body, where those pages put them.
var challengeMarkers = [][]byte{
	[]byte("cf-browser-verification"),
	[]byte("/cdn-cgi/challenge-platform/"),
	[]byte("cf_chl_opt"),
	[]byte("<title>Just a moment...</title>"),
	[]byte("<title>Attention Required! | Cloudflare</title>"),
	[]byte("captcha-delivery.com"), // DataDome
	[]byte("px-captcha"),           // PerimeterX / HUMAN
	[]byte("_Incapsula_Resource"),  // Imperva
	[]byte("sgcaptcha"),            // SiteGround
	[]byte("Pardon Our Interruption"),
}

// isChallenge reports whether a response is an anti-bot challenge page rather
// than the content asked for. Cloudflare marks its challenges with a header;
// others are recognised by markers in a short page.
func isChallenge(resp *safehttp.Response, body []byte) bool {
	if resp.Header.Get("Cf-Mitigated") == "challenge" {
		return true
	}
	// Real articles can mention these words; challenge pages are small and
	// say them near the top.
	const window = 32 << 10
	if len(body) > 256<<10 {
		return false
	}
	head := body[:min(len(body), window)]
	for _, m := range challengeMarkers {
		if bytes.Contains(head, m) {
			return true
		}
	}
	return false
}
