package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/webui/webuitest"
)

// TestSettingsPanelAgainstServe opens the page's settings panel on a real
// `toolport serve`: GET /api/doctor runs the real checks, here against a
// local Weaviate stand-in that is ready and keyless upstreams on a closed
// port, with no keys configured.
func TestSettingsPanelAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolport and drives Chromium")
	}
	bin := buildToolport(t)
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/.well-known/ready" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer ready.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	env := append(baseEnv(t.TempDir()), "TOOLPORT_VECTOR_URL="+ready.URL,
		"CKAN_BASE_URL="+closed.URL, "LRCLIB_BASE_URL="+closed.URL, "RECCOBEATS_BASE_URL="+closed.URL)
	srv := startServe(t, bin, env)
	defer srv.stop(t)

	b := webuitest.NewBrowser(t, webuitest.Options{})
	defer b.CheckNoProblems(t)
	to := 60 * time.Second
	b.Do(t, to, chromedp.Navigate(srv.url+"/"), webuitest.WaitFor(`document.body.dataset.ready === 'true'`),
		chromedp.Click(chromedp.CSS(`#settings-btn`)),
		webuitest.WaitFor(`document.getElementById('settings-dialog')?.dataset.state === 'done'`))
	got := webuitest.Eval[map[string]string](t, b, to,
		`Object.fromEntries([...document.querySelectorAll('#settings-list .settings-row')].map(r => [r.dataset.upstream, r.dataset.status]))`)
	want := map[string]string{
		"brave": "not configured", "google": "not configured", "searxng": "not configured", "tidal": "not configured", "model": "not configured",
		"embeddings": "not configured", "postgres": "not configured", "redis": "not configured", "traces": "not configured",
		"ckan": "failing", "lrclib": "failing", "reccobeats": "failing", "weaviate": "ok",
		"store": "ok", "index": "ok",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %v, want %v", got, want)
	}
}
