// Package rendertest holds the single-page app the tests of internal/render
// and of web_fetch's rendering load in Chromium.
package rendertest

import (
	"fmt"
	"net/http"

	"github.com/chromedp/chromedp"
)

// AppShell is a single-page app's document (CONSTRUCTED, in the shape
// create-react-app and similar tools emit): an empty root, a <noscript>
// and a script that builds the article from Article, fetched from its
// origin at /api/article.json. probes is script run first.
func AppShell(probes string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Rivers</title></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div>
<script>
` + probes + `
fetch("/api/article.json").then(r => r.json()).then(a => {
  const art = document.createElement("article");
  const h = document.createElement("h1"); h.textContent = a.title; art.appendChild(h);
  for (const p of a.paragraphs) { const e = document.createElement("p"); e.textContent = p; art.appendChild(e); }
  document.getElementById("root").appendChild(art);
});
</script></body></html>`
}

// Article is the JSON the app fetches (CONSTRUCTED): long enough for
// web_fetch's extraction to take it for an article once rendered.
const Article = `{"title":"Rivers of the North","paragraphs":[
"Rivers carry water from the hills to the sea, shaping valleys over thousands of years, and every valley keeps a record of the floods that made it.",
"In spring the melt swells them, and the towns along the banks prepare for floods with levees, sandbags and the patience of long practice.",
"In late summer they run low and clear, and the stones of their beds, rounded by centuries of current, show through the shallows."]}`

// App serves Article at /api/article.json and AppShell(probes) at every
// other path.
func App(probes string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/article.json" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, Article)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, AppShell(probes))
	})
}

// WithoutChromiumChecks switches off Chromium's own Local Network Access
// checks (which block a public page's requests to loopback, and a page the
// renderer fulfils has no address, so counts as public): with them on, a
// test could not tell whether Toolport or Chromium blocked a request.
var WithoutChromiumChecks = []chromedp.ExecAllocatorOption{chromedp.Flag("disable-features",
	"LocalNetworkAccessChecks,LocalNetworkAccessChecksWebSockets,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights")}
