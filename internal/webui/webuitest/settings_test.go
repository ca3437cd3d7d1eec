package webuitest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// doctor answers /api/doctor like the server: the shape of doctor.Report,
// Brave skipped unless a POST asks for {"quota":true}. A GET with quota is
// refused, as the server refuses it: spending quota is never a GET.
func (f *fakeAPI) doctor(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("quota") {
		http.Error(w, "quota only on POST", http.StatusMethodNotAllowed)
		return
	}
	var body struct {
		Quota bool `json:"quota"`
	}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
	}
	quota := body.Quota
	f.mu.Lock()
	f.doctorRuns = append(f.doctorRuns, quota)
	f.mu.Unlock()
	brave := map[string]any{"name": "brave", "title": "Brave Search", "status": "skipped", "costsQuota": true,
		"detail": "costs quota (one web search); not run", "fix": "run `toolport doctor --yes` to include it"}
	if quota {
		brave = map[string]any{"name": "brave", "title": "Brave Search", "status": "ok", "costsQuota": true,
			"detail": `web_search_brave: 1 result for "toolport"`, "limits": map[string]string{"X-Ratelimit-Remaining": "0, 1977"}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": false, "checked": "2026-03-14T09:00:00Z", "results": []any{
		brave,
		map[string]any{"name": "google", "title": "Google Programmable Search", "status": "not configured",
			"detail": "no API key and engine id", "fix": "set GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID"},
		map[string]any{"name": "ckan", "title": "CKAN portal", "status": "failing",
			"detail": "unreachable: cannot resolve data.gov.il", "fix": "check the network, a proxy, or the base URL"},
		map[string]any{"name": "redis", "title": "Redis", "status": "not configured", "optional": true,
			"detail": "no Redis: caches and rate limits stay in this process"},
	}})
}

// TestSettingsPanel opens the settings panel, reads the upstream rows, and
// runs the checks that cost quota only when asked.
func TestSettingsPanel(t *testing.T) {
	api := newFakeAPI("s3cret-token", true, "")
	srv := api.server(t)
	b := openPage(t, srv.URL, Options{Token: "s3cret-token"}, SetView(desktop(), "light"))
	to := 30 * time.Second
	rows := `[...document.querySelectorAll('#settings-list .settings-row')].map(r => [r.dataset.upstream, r.dataset.status, r.querySelector('.settings-badge').textContent])`
	b.Do(t, to, chromedp.Click(css("#settings-btn")),
		WaitFor(`document.getElementById('settings-dialog')?.open && document.getElementById('settings-dialog').dataset.state === 'done'`))
	got := Eval[[][]string](t, b, to, rows)
	want := [][]string{{"brave", "skipped", "Skipped"}, {"google", "not configured", "Not configured"}, {"ckan", "failing", "Failing"}, {"redis", "not configured", "Not configured"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}
	if s := Eval[string](t, b, to, `document.getElementById('settings-status').textContent`); s != "4 upstreams checked; 1 failing." {
		t.Errorf("status = %q", s)
	}
	if fix := Eval[string](t, b, to, `document.querySelector('[data-upstream="ckan"] .settings-fix').textContent`); fix != "Fix: check the network, a proxy, or the base URL" {
		t.Errorf("ckan fix = %q", fix)
	}

	// Only the optional engine is marked so, and it offers no fix.
	opt := Eval[[]string](t, b, to, `[...document.querySelectorAll('.settings-optional')].map(e => e.closest('.settings-row').dataset.upstream + ': ' + e.textContent)`)
	if !reflect.DeepEqual(opt, []string{"redis: optional: Toolport works without it"}) || Eval[int](t, b, to, `document.querySelectorAll('[data-upstream="redis"] .settings-fix').length`) != 0 {
		t.Errorf("optional rows = %q, want redis alone, without a fix", opt)
	}
	b.Do(t, to, chromedp.Click(css("#settings-check-quota")),
		WaitFor(`document.querySelector('[data-upstream="brave"]')?.dataset.status === 'ok'`))
	if lim := Eval[string](t, b, to, `document.querySelector('[data-upstream="brave"] .settings-limits').textContent`); lim != "Limits: X-Ratelimit-Remaining: 0, 1977" {
		t.Errorf("brave limits = %q", lim)
	}
	b.Do(t, to, chromedp.Click(css("#settings-close")), WaitFor(`!document.getElementById('settings-dialog').open`))

	api.mu.Lock()
	defer api.mu.Unlock()
	if !reflect.DeepEqual(api.doctorRuns, []bool{false, true}) {
		t.Errorf("doctor runs = %v, want a free run on opening, then one with quota when asked", api.doctorRuns)
	}
}
