package record

import (
	"bytes"
	"slices"
)

// matcher is an Aho–Corasick automaton over every form of every secret a
// scrubber knows. It is written here rather than taken from a library
// because the marker rewriting (rewriter) steps it byte by byte and rolls
// it back to an earlier state after each replacement, which the Go
// libraries (petar-dambovaliev/aho-corasick, the maintained one with
// leftmost-longest matching) do not expose; BENCHMARKS.md compares the two
// on a scan. A matcher is immutable once built.
type matcher struct {
	root     [256]int32 // the root's transitions, dense: most steps start there
	edgeLo   []int32    // node n's edges are edgeByte[edgeLo[n]:edgeLo[n+1]] (sorted) and edgeTo
	edgeByte []byte
	edgeTo   []int32
	fail     []int32
	// match[n] is the length of the longest secret that ends at node n
	// (its own string or a suffix of it), 0 for none.
	match   []int32
	longest int
	// first marks the bytes a secret begins with; firsts lists them when
	// they are few, so that a scan at the root can skip to the next with
	// bytes.IndexByte (a table lookup per byte is several times slower).
	first  [256]bool
	firsts []byte
}

// maxFirsts is how many first bytes a skipper follows with IndexByte.
const maxFirsts = 4

// newMatcher builds the automaton of secrets (none empty). It takes time
// linear in their total length (times the log of the alphabet).
func newMatcher(secrets []string) *matcher {
	secrets = slices.Clone(secrets)
	slices.Sort(secrets)
	secrets = slices.Compact(secrets)
	m := &matcher{}
	// The trie, built in sorted order: each pattern shares with the one
	// before it the path of their common prefix (path[d] is the node at
	// depth d of the previous pattern), so no map of children is needed.
	type edge struct {
		from, to int32
		c        byte
	}
	var edges []edge
	depth := []int32{0}
	terminal := []bool{false}
	path := []int32{0}
	prev := ""
	for _, p := range secrets {
		lcp := 0
		for lcp < len(p) && lcp < len(prev) && p[lcp] == prev[lcp] {
			lcp++
		}
		path = path[:lcp+1]
		for i := lcp; i < len(p); i++ {
			n := int32(len(depth))
			edges = append(edges, edge{path[i], n, p[i]})
			depth = append(depth, int32(i+1))
			terminal = append(terminal, false)
			path = append(path, n)
		}
		terminal[path[len(p)]] = true
		m.longest = max(m.longest, len(p))
		m.first[p[0]] = true
		prev = p
	}
	nodes := len(depth)
	// Group the edges by their source node; sorted input created each
	// node's edges in byte order, which a stable counting sort keeps.
	m.edgeLo = make([]int32, nodes+1)
	for _, e := range edges {
		m.edgeLo[e.from+1]++
	}
	for n := range nodes {
		m.edgeLo[n+1] += m.edgeLo[n]
	}
	m.edgeByte = make([]byte, len(edges))
	m.edgeTo = make([]int32, len(edges))
	fill := slices.Clone(m.edgeLo[:nodes])
	for _, e := range edges {
		m.edgeByte[fill[e.from]], m.edgeTo[fill[e.from]] = e.c, e.to
		fill[e.from]++
	}
	for i := m.edgeLo[0]; i < m.edgeLo[1]; i++ {
		m.root[m.edgeByte[i]] = m.edgeTo[i]
	}
	// Failure links and match lengths in breadth-first order (by depth,
	// again a counting sort), so a node's failure target is done first;
	// the root's children fail to the root (the zero value).
	maxDepth := int32(m.longest)
	byDepth := make([]int32, maxDepth+2)
	for _, d := range depth {
		byDepth[d+1]++
	}
	for d := range maxDepth + 1 {
		byDepth[d+1] += byDepth[d]
	}
	order := make([]int32, nodes)
	for n, d := range depth {
		order[byDepth[d]] = int32(n)
		byDepth[d]++
	}
	m.fail = make([]int32, nodes)
	m.match = make([]int32, nodes)
	var steps int
	for _, n := range order[1:] {
		if terminal[n] {
			m.match[n] = depth[n]
		} else {
			m.match[n] = m.match[m.fail[n]]
		}
		for i := m.edgeLo[n]; i < m.edgeLo[n+1]; i++ {
			m.fail[m.edgeTo[i]] = m.step(m.fail[n], m.edgeByte[i], &steps)
		}
	}
	if n := m.edgeLo[1] - m.edgeLo[0]; n <= maxFirsts {
		m.firsts = slices.Clone(m.edgeByte[m.edgeLo[0]:m.edgeLo[1]])
	}
	return m
}

// child is node n's transition on c, -1 for none.
func (m *matcher) child(n int32, c byte) int32 {
	lo, hi := m.edgeLo[n], m.edgeLo[n+1]
	for hi-lo > 8 {
		mid := int32(uint32(lo+hi) >> 1)
		if m.edgeByte[mid] < c {
			lo = mid + 1
		} else {
			hi = mid + 1 // mid may be c's edge
		}
	}
	for ; lo < hi; lo++ {
		if m.edgeByte[lo] == c {
			return m.edgeTo[lo]
		}
	}
	return -1
}

// step moves from node n on byte c, adding to *steps each transition
// tried, the work a scan does.
func (m *matcher) step(n int32, c byte, steps *int) int32 {
	for {
		*steps++
		if n == 0 {
			return m.root[c]
		}
		if t := m.child(n, c); t >= 0 {
			return t
		}
		n = m.fail[n]
	}
}

// skipper finds, in one text, the next byte that may begin a secret. With
// few first bytes it keeps where each next occurs, so that each is searched
// for once per occurrence: the search stays linear however often it is
// asked.
type skipper struct {
	m    *matcher
	next [maxFirsts]int // next[k]: where firsts[k] occurs at or after the last search, len(text) for nowhere
}

func newSkipper(m *matcher) skipper {
	sk := skipper{m: m}
	for k := range sk.next {
		sk.next[k] = -1
	}
	return sk
}

// skip returns the first position at or after i in b where a secret may
// begin, len(b) for none. b must be the same text, and i must not go back.
func (sk *skipper) skip(b []byte, i int) int {
	if sk.m.firsts == nil {
		for ; i < len(b); i++ {
			if sk.m.first[b[i]] {
				return i
			}
		}
		return i
	}
	p := len(b)
	for k, c := range sk.m.firsts {
		if sk.next[k] < i {
			sk.next[k] = len(b)
			if j := bytes.IndexByte(b[i:], c); j >= 0 {
				sk.next[k] = i + j
			}
		}
		p = min(p, sk.next[k])
	}
	return p
}

// span is the stretch [start, end) of a text.
type span struct{ start, end int }

// cover returns the stretches of b that occurrences of secrets cover,
// overlapping occurrences merged into one, in order: no byte of any
// occurrence is left out, so a secret overlapping another goes whole
// whichever is longer or first.
func (m *matcher) cover(b []byte, steps *int) []span {
	var out []span
	n := int32(0)
	sk := newSkipper(m)
	for i := 0; i < len(b); i++ {
		if n == 0 {
			if i = sk.skip(b, i); i == len(b) {
				break
			}
		}
		n = m.step(n, b[i], steps)
		if l := int(m.match[n]); l > 0 {
			// The longest secret ending here; those ending here too
			// are its suffixes. One that began before an earlier
			// stretch swallows it.
			sp := span{i + 1 - l, i + 1}
			for len(out) > 0 && out[len(out)-1].end > sp.start {
				sp.start = min(sp.start, out[len(out)-1].start)
				out = out[:len(out)-1]
			}
			out = append(out, sp)
		}
	}
	return out
}

// scrub replaces every occurrence of a secret in b by [Redacted], then
// rewrites what the markers spell with their neighbours. b is not changed.
func (m *matcher) scrub(b []byte, steps *int) []byte {
	spans := m.cover(b, steps)
	out := b
	if len(spans) > 0 {
		out = make([]byte, 0, len(b))
		last := 0
		for _, sp := range spans {
			out = append(append(out, b[last:sp.start]...), Redacted...)
			last = sp.end
		}
		out = append(out, b[last:]...)
	}
	if !bytes.Contains(out, []byte(Redacted)) {
		if len(spans) == 0 {
			return bytes.Clone(b)
		}
		return out
	}
	return m.acrossMarkers(out, steps)
}

// acrossMarkers removes secrets that a marker and the bytes beside it
// spell together, where a replacement completed a secret: "D000000" with
// the secret "D000" became "REDACTED000". Each such occurrence is
// replaced, together with every marker it touches, by one marker. That
// ends: a replacement either turns at least one byte outside the markers
// into marker, or joins two or more markers into one, and no secret lies
// within a single marker (Add refuses those).
//
// It runs the automaton once over the text, rolling it back to the
// replacement's start after each replacement and going on through the new
// marker; an upstream that fills a body with such occurrences (it can make
// any value a secret by naming a field "token") must not make the scrubber
// quadratic.
func (m *matcher) acrossMarkers(b []byte, steps *int) []byte {
	w := rewriter{m: m, b: b, out: make([]byte, 0, len(b)), keep: m.longest + 2*len(Redacted), skip: newSkipper(m)}
	return w.run(steps)
}

// rewriter holds the text out ++ pend ++ b[r:] while acrossMarkers rewrites
// it: out is the part already read, in which no secret lies whole; pend is
// a marker just written, still to be read.
type rewriter struct {
	m       *matcher
	out, b  []byte
	pend    []byte
	r       int
	states  []int32 // states[i]: the node after reading out[:base+i+1]
	base    int
	keep    int // how far back a replacement can reach: the states kept
	pendBuf [2 * len(Redacted)]byte
	skip    skipper // over b
}

func (w *rewriter) run(steps *int) []byte {
	n := int32(0)
	for {
		if n == 0 && len(w.pend) == 0 {
			// At the root, bytes that begin no secret pass as they are.
			j := w.skip.skip(w.b, w.r) - w.r
			w.out = append(w.out, w.b[w.r:w.r+j]...)
			w.r += j
			w.pushRoot(j)
		}
		var c byte
		switch {
		case len(w.pend) > 0:
			c, w.pend = w.pend[0], w.pend[1:]
		case w.r < len(w.b):
			c = w.b[w.r]
			w.r++
		default:
			return w.out
		}
		n = w.m.step(n, c, steps)
		w.out = append(w.out, c)
		w.push(n)
		if l := int(w.m.match[n]); l > 0 {
			n = w.replace(len(w.out)-l, len(w.out))
		}
	}
}

// push records the node after the byte just read, keeping only the last
// keep or so: a replacement never reaches further back.
func (w *rewriter) push(n int32) {
	if len(w.states) >= 2*w.keep {
		drop := len(w.states) - w.keep
		w.states = append(w.states[:0], w.states[drop:]...)
		w.base += drop
	}
	w.states = append(w.states, n)
}

// pushRoot records j bytes read at the root.
func (w *rewriter) pushRoot(j int) {
	if j > w.keep {
		w.base += len(w.states) + j - w.keep
		w.states = w.states[:0]
		j = w.keep
	}
	for range j {
		w.push(0)
	}
}

// at returns the byte at position i of out ++ pend ++ b[r:], and false past
// its end.
func (w *rewriter) at(i int) (byte, bool) {
	if i < len(w.out) {
		return w.out[i], true
	}
	if i -= len(w.out); i < len(w.pend) {
		return w.pend[i], true
	}
	if i -= len(w.pend); w.r+i < len(w.b) {
		return w.b[w.r+i], true
	}
	return 0, false
}

// markerAt reports whether a marker begins at position i of the text.
func (w *rewriter) markerAt(i int) bool {
	for j := range len(Redacted) {
		if c, ok := w.at(i + j); !ok || c != Redacted[j] {
			return false
		}
	}
	return true
}

// replace replaces positions [start, end) of the text, end being what was
// read so far, widened to the whole of any marker they touch at either
// edge, by one marker to be read next. It returns the node to go on from.
func (w *rewriter) replace(start, end int) int32 {
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
	// Consume what the widened end takes beyond what was read.
	if skip := end - len(w.out); skip > 0 {
		k := min(skip, len(w.pend))
		w.pend = w.pend[k:]
		w.r += skip - k
	}
	// pend is at most one marker's rest (a marker read in part is
	// always consumed whole by the widening above), so this fits.
	if len(w.pend) <= len(Redacted) {
		var next [2 * len(Redacted)]byte
		k := copy(next[copy(next[:], Redacted):], w.pend)
		w.pendBuf = next
		w.pend = w.pendBuf[:len(Redacted)+k]
	} else {
		w.pend = append([]byte(Redacted), w.pend...)
	}
	w.out = w.out[:start]
	w.states = w.states[:start-w.base]
	if start == 0 {
		return 0
	}
	return w.states[start-w.base-1]
}

// scrubString is matcher.scrub for a string.
func (m *matcher) scrubString(v string, steps *int) string {
	out := m.scrub([]byte(v), steps)
	if len(out) == len(v) && string(out) == v {
		return v
	}
	return string(out)
}
