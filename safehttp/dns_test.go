package safehttp

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS is a real DNS server on 127.0.0.1 (UDP) that answers every A query
// with the next address from a script (repeating the last one), and every
// other query with no records. It lets tests resolve names to chosen
// loopback addresses, and change the answer between lookups (rebinding),
// without touching the system resolver.
type fakeDNS struct {
	pc net.PacketConn

	mu      sync.Mutex
	answers []netip.Addr
	queries int // A queries answered
}

func newFakeDNS(t *testing.T, answers ...string) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake DNS: %v", err)
	}
	d := &fakeDNS{pc: pc}
	for _, a := range answers {
		d.answers = append(d.answers, netip.MustParseAddr(a))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.serve()
	}()
	t.Cleanup(func() {
		pc.Close()
		wg.Wait()
	})
	return d
}

// Resolver returns a resolver that sends every query to d.
func (d *fakeDNS) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "udp", d.pc.LocalAddr().String())
		},
	}
}

func (d *fakeDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp, ok := d.answer(buf[:n]); ok {
			d.pc.WriteTo(resp, from)
		}
	}
}

func (d *fakeDNS) answer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
	b.StartQuestions()
	b.Question(q)
	b.StartAnswers()
	if q.Type == dnsmessage.TypeA {
		d.mu.Lock()
		i := min(d.queries, len(d.answers)-1)
		d.queries++
		a := d.answers[i]
		d.mu.Unlock()
		b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: a.As4()})
	}
	resp, err := b.Finish()
	return resp, err == nil
}
