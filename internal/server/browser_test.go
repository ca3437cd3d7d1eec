package server_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/webui"
	"github.com/toolport/toolport/internal/webui/webuitest"
)

// cutProxy forwards TCP connections to a server and can cut every open one
// at once, as a load balancer losing a backend or a network blip would.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cuts  int
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) url() string { return "http://" + p.ln.Addr().String() }

// cut closes every connection open now.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.cuts++
}

// TestPageResumesADroppedStream drops the page's connection in the middle of
// an answer: the page reconnects by itself with Last-Event-ID and shows the
// whole answer, each part once, not marked incomplete.
func TestPageResumesADroppedStream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	e := newEnv(t, envOptions{
		turns: []servertest.Turn{{Match: "story", Events: []servertest.Event{
			servertest.Text("alpha "), servertest.Pause(1500 * time.Millisecond),
			servertest.Text("beta "), servertest.Pause(300 * time.Millisecond), servertest.Text("gamma."),
		}}},
		config: func(c *server.Config) { c.Web = webui.Handler() },
	})
	proxy := newCutProxy(t, strings.TrimPrefix(e.url, "http://"))
	b := webuitest.NewBrowser(t, webuitest.Options{})
	to := 60 * time.Second
	last := `[...document.querySelectorAll('#messages > li.msg-assistant')].pop()`
	b.Do(t, to,
		chromedp.Navigate(proxy.url()+"/"),
		webuitest.WaitFor(`document.body.dataset.ready === 'true'`),
		chromedp.WaitVisible(chromedp.CSS(`#composer-input`)),
		chromedp.SendKeys(chromedp.CSS(`#composer-input`), "tell a story"),
		chromedp.Click(chromedp.CSS(`#send-btn`)),
		webuitest.WaitFor(last+`?.textContent.includes('alpha')`),
	)
	proxy.cut() // mid-answer: "beta" is still 1.5 s away
	b.Do(t, to, webuitest.WaitFor(`document.body.dataset.streaming === 'false'`))
	text := webuitest.Eval[string](t, b, to, last+`.textContent`)
	if strings.Count(text, "alpha") != 1 || !strings.Contains(text, "alpha beta gamma.") {
		t.Errorf("answer shown = %q, want %q once", text, "alpha beta gamma.")
	}
	if webuitest.Eval[bool](t, b, to, `!!`+last+`.querySelector('.incomplete-note')`) {
		t.Error("the resumed answer is marked incomplete")
	}
	_, metrics := e.do(t, "GET", "/metrics", "")
	if !strings.Contains(string(metrics), `toolport_http_requests_total{code="200",route="GET /api/conversations/{id}/stream"} 1`) {
		t.Errorf("the page did not resume through GET …/stream once:\n%s", grepLines(string(metrics), "stream"))
	}
	status, body := e.do(t, "GET", "/api/conversations", "")
	if status != http.StatusOK || !strings.Contains(string(body), "tell a story") {
		t.Errorf("conversations = %d %s", status, body)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
