package pdftext

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"fmt"
	"io"
	"math"
)

// Bounds of the cross-reference data (PDF 32000-1:2008, 7.5.4–7.5.8).
const (
	// maxXrefSections bounds a /Prev chain: one section per incremental
	// update, and documents are rarely updated more than a few dozen times.
	maxXrefSections = 1024
	// maxObjects bounds object numbers: the library allocates its table by
	// the largest one (a 100-byte section could otherwise ask for 40 GB).
	maxObjects = 1 << 21
	// maxXrefStreamBytes bounds the decompressed cross-reference streams
	// of a document together (2^21 entries of at most 20 bytes each, and
	// some slack): a chain of 1024 small bombs would otherwise cost
	// minutes of inflating.
	maxXrefStreamBytes = 48 << 20
	// maxObjectStreams bounds the object streams (and the /Extends chains)
	// whose dictionaries are checked.
	maxObjectStreams = 100_000
)

// xrefEntry is one object's cross-reference entry: kind 0 free, 1 at byte
// offset a, 2 the b-th object of the object stream numbered a.
type xrefEntry struct {
	kind uint8
	set  bool
	a, b int64
}

// checkXref follows the document's cross-reference chain as the library
// will (startxref, then each section's /Prev) and refuses, as ErrMalformed,
// what the library would follow without end or without bound:
//
//   - a /Prev chain that comes back to a section already read, or that is
//     longer than maxXrefSections (readPrevXrefs loops forever);
//   - object numbers or stream sizes beyond maxObjects (the library sizes
//     its table by them);
//   - an object stream that is itself stored in an object stream (the
//     library's resolve recurses without reading anything until the stack
//     overflows, which ends the process; the specification forbids it,
//     7.5.7);
//   - an /Extends chain of object streams that is a cycle (resolve loops
//     forever looking for an object that is in none of them) or that
//     leaves the file's uncompressed objects;
//   - object streams whose /N, predictor /Columns or data's end the
//     library would loop or allocate on (checkObjectStreams).
//
// It returns nil for documents whose trailer the library will not find:
// it refuses them before following anything.
func checkXref(data []byte) error {
	table, trailer, err := readXrefChain(data)
	if err != nil {
		return err
	}
	var crypt *streamCrypt
	encrypted := false
	if enc, ok := trailer["Encrypt"]; ok && enc != nil {
		encrypted = true
		c := objStmChecker{data: data, table: table}
		// Classic tables are not kept (they have no object streams), so
		// there an indirect dictionary is not found: nothing to check.
		dict, _ := enc.(map[pdfName]any)
		if ref, isRef := enc.(pdfRef); isRef {
			if c.entry(ref.num).kind == 2 {
				return fmt.Errorf("%w: the encryption dictionary is in an object stream", ErrMalformed)
			}
			dict, _ = c.dictionary(ref)
		}
		ids, _ := trailer["ID"].([]any)
		var id pdfString
		if len(ids) > 0 {
			id, _ = ids[0].(pdfString)
		}
		// Without a key (the library refuses such encryption before it
		// reads any object, or the dictionary was not found) streams'
		// ends are not checked; the rest still is.
		crypt, _ = newStreamCrypt(dict, []byte(id))
	}
	return checkObjectStreams(data, table, encrypted, crypt)
}

// readXrefChain reads the cross-reference sections from startxref along
// their /Prev chain into one table, newest entries first, and returns it
// with the newest section's trailer (the one the library keeps).
func readXrefChain(data []byte) (table []xrefEntry, trailer map[pdfName]any, err error) {
	start, ok := startxref(data)
	if !ok {
		return nil, nil, nil
	}
	seen := map[int64]bool{}
	var inflated int64 // cross-reference stream bytes decompressed
	for off := start; ; {
		if seen[off] {
			return nil, nil, fmt.Errorf("%w: the cross-reference /Prev chain comes back to offset %d (a cycle)", ErrMalformed, off)
		}
		if len(seen) == maxXrefSections {
			return nil, nil, fmt.Errorf("%w: over %d cross-reference sections", ErrMalformed, maxXrefSections)
		}
		seen[off] = true
		t, err := readSection(data, off, &table, &inflated)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: cross-reference section at offset %d: %w", ErrMalformed, off, err)
		}
		if trailer == nil {
			trailer = t
		}
		p, ok := t["Prev"].(int64)
		if !ok {
			// The end of the chain (a /Prev that is not an integer the
			// library refuses).
			return table, trailer, nil
		}
		off = p
	}
}

// startxref finds the offset of the last cross-reference section the way
// the library does: "startxref" on a line of its own within the last 100
// bytes, which must end with %%EOF.
func startxref(data []byte) (int64, bool) {
	const endChunk = 100
	if len(data) < endChunk {
		return 0, false
	}
	buf := bytes.TrimRight(data[len(data)-endChunk:], "\r\n\t ")
	if !bytes.HasSuffix(buf, []byte("%%EOF")) {
		return 0, false
	}
	i := len(buf)
	for {
		i = bytes.LastIndex(buf[:i], []byte("startxref"))
		if i <= 0 || i+len("startxref") >= len(buf) {
			return 0, false
		}
		before, after := buf[i-1], buf[i+len("startxref")]
		if (before == '\n' || before == '\r') && (after == '\n' || after == '\r') {
			break
		}
	}
	l := &lexer{data: buf, pos: i + len("startxref")}
	off, err := l.token()
	n, ok := off.(int64)
	return n, err == nil && ok
}

// readSection reads the cross-reference table or stream at off into
// table (entries already there win: newer sections come first) and
// returns its trailer (a stream's dictionary).
func readSection(data []byte, off int64, table *[]xrefEntry, inflated *int64) (map[pdfName]any, error) {
	if off < 0 || off >= int64(len(data)) {
		return nil, fmt.Errorf("offset outside the file")
	}
	l := &lexer{data: data, pos: int(off)}
	tok, err := l.token()
	if err != nil {
		return nil, err
	}
	if tok == keyword("xref") {
		return readTable(l)
	}
	if _, ok := tok.(int64); !ok {
		return nil, fmt.Errorf("no cross-reference table or stream")
	}
	l.pos = int(off)
	dict, raw, err := streamAt(l)
	if err != nil {
		return nil, err
	}
	if dict["Type"] != pdfName("XRef") {
		return nil, fmt.Errorf("the stream's /Type is not /XRef")
	}
	if err := readXrefStream(dict, raw, table, inflated); err != nil {
		return nil, err
	}
	return dict, nil
}

// readTable reads a classic table's subsections (only their object
// numbers matter here: such files have no object streams) and returns
// its trailer.
func readTable(l *lexer) (map[pdfName]any, error) {
	for {
		tok, err := l.token()
		if err != nil {
			return nil, err
		}
		if tok == keyword("trailer") {
			break
		}
		first, ok1 := tok.(int64)
		n, err := l.token()
		count, ok2 := n.(int64)
		if err != nil || !ok1 || !ok2 || first < 0 || count < 0 || first+count > maxObjects {
			return nil, fmt.Errorf("a subsection header is not two numbers up to %d", maxObjects)
		}
		for range count * 3 {
			if _, err := l.token(); err != nil {
				return nil, err
			}
		}
	}
	trailer, err := l.object(0)
	if err != nil {
		return nil, err
	}
	d, ok := trailer.(map[pdfName]any)
	if !ok {
		return nil, fmt.Errorf("no trailer dictionary")
	}
	if size, ok := d["Size"].(int64); ok && (size < 0 || size > maxObjects) {
		return nil, fmt.Errorf("/Size %d is over %d", size, maxObjects)
	}
	return d, nil
}

// streamAt reads "N G obj <<dict>> stream" at l and returns the
// dictionary and the stream's raw bytes (by its direct /Length).
func streamAt(l *lexer) (map[pdfName]any, []byte, error) {
	if _, _, err := objectHeader(l); err != nil {
		return nil, nil, err
	}
	v, err := l.object(0)
	if err != nil {
		return nil, nil, err
	}
	dict, ok := v.(map[pdfName]any)
	if !ok {
		return nil, nil, fmt.Errorf("not a dictionary")
	}
	if kw, err := l.token(); err != nil || kw != keyword("stream") {
		return nil, nil, fmt.Errorf("not a stream")
	}
	// The keyword ends with CRLF or LF (7.3.8.1).
	if l.pos < len(l.data) && l.data[l.pos] == '\r' {
		l.pos++
	}
	if l.pos < len(l.data) && l.data[l.pos] == '\n' {
		l.pos++
	}
	length, ok := dict["Length"].(int64)
	if !ok || length < 0 || length > int64(len(l.data)-l.pos) {
		// The library reads a cross-reference stream before it can
		// resolve references, so an indirect /Length fails there too.
		return nil, nil, fmt.Errorf("the stream's /Length is not a direct length within the file")
	}
	return dict, l.data[l.pos : l.pos+int(length)], nil
}

// readXrefStream decodes a cross-reference stream (7.5.8) into table.
func readXrefStream(dict map[pdfName]any, raw []byte, table *[]xrefEntry, inflated *int64) error {
	size, ok := dict["Size"].(int64)
	if !ok || size < 0 || size > maxObjects {
		return fmt.Errorf("/Size is not a number up to %d", maxObjects)
	}
	ws, _ := dict["W"].([]any)
	var w [3]int
	if len(ws) < 3 {
		return fmt.Errorf("/W has fewer than three widths")
	}
	width := 0
	for i, x := range ws {
		n, ok := x.(int64)
		if !ok || n < 0 || n > 8 {
			return fmt.Errorf("/W holds a width that is not 0 to 8")
		}
		if i < 3 {
			w[i] = int(n)
		}
		width += int(n)
	}
	if width == 0 {
		return fmt.Errorf("/W is all zero")
	}
	index := []any{int64(0), size}
	if x, ok := dict["Index"].([]any); ok {
		index = x
	}
	if len(index)%2 != 0 {
		return fmt.Errorf("/Index has an odd length")
	}
	body, err := decodeXrefStream(dict, raw, maxXrefStreamBytes-*inflated)
	*inflated += int64(len(body))
	if err != nil {
		return err
	}
	for ; len(index) > 0; index = index[2:] {
		first, ok1 := index[0].(int64)
		n, ok2 := index[1].(int64)
		if !ok1 || !ok2 || first < 0 || n < 0 || first+n > maxObjects {
			return fmt.Errorf("/Index holds a range that is not within 0 to %d", maxObjects)
		}
		for x := first; x < first+n; x++ {
			if len(body) < width {
				return fmt.Errorf("the stream ends before object %d's entry", x)
			}
			row := body[:width]
			body = body[width:]
			kind := uint64(1) // a zero-width type field means type 1
			if w[0] > 0 {
				kind = field(row[:w[0]])
			}
			e := xrefEntry{set: true, a: int64(field(row[w[0] : w[0]+w[1]])), b: int64(field(row[w[0]+w[1] : w[0]+w[1]+w[2]]))}
			switch kind {
			case 0, 1, 2:
				e.kind = uint8(kind)
			default:
				continue // the library leaves such entries unset
			}
			for int64(len(*table)) <= x {
				*table = append(*table, make([]xrefEntry, x+1-int64(len(*table)))...)
			}
			if !(*table)[x].set {
				(*table)[x] = e
			}
		}
	}
	return nil
}

// field is a big-endian unsigned number.
func field(b []byte) uint64 {
	var x uint64
	for _, c := range b {
		x = x<<8 | uint64(c)
	}
	return x
}

// decodeXrefStream undoes the filters the library supports on a
// cross-reference stream: none, or FlateDecode with or without a PNG
// predictor (7.4.4.4).
func decodeXrefStream(dict map[pdfName]any, raw []byte, limit int64) ([]byte, error) {
	filter, params := dict["Filter"], dict["DecodeParms"]
	if a, ok := filter.([]any); ok && len(a) == 1 {
		filter = a[0]
		if p, ok := params.([]any); ok && len(p) == 1 {
			params = p[0]
		}
	}
	switch filter {
	case nil:
		return raw, nil
	case pdfName("FlateDecode"):
	default:
		return nil, fmt.Errorf("filter %v is not supported on a cross-reference stream", filter)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("flate: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("cross-reference streams over %d MiB decompressed", maxXrefStreamBytes>>20)
	}
	if err != nil && len(body) == 0 {
		return nil, fmt.Errorf("flate: %w", err)
	}
	p, _ := params.(map[pdfName]any)
	pred, _ := p["Predictor"].(int64)
	if pred < 10 {
		return body, nil
	}
	columns, ok := p["Columns"].(int64)
	if !ok {
		columns = 1
	}
	if columns < 1 || columns > 1<<16 {
		return nil, fmt.Errorf("predictor /Columns %d out of range", columns)
	}
	return unpredictPNG(body, int(columns)), nil
}

// unpredictPNG reverses PNG row filters of one byte per pixel (see
// pngReader).
func unpredictPNG(body []byte, columns int) []byte {
	out, _ := io.ReadAll(&pngReader{r: bytes.NewReader(body), prior: make([]byte, columns), cur: make([]byte, columns)})
	return out
}

// pngReader reverses PNG row filters of one byte per pixel: each row is a
// filter-type byte and then len(prior) bytes (7.4.4.4 and PNG 9.2). A
// short last row ends it with io.ErrUnexpectedEOF.
type pngReader struct {
	r          io.Reader
	prior, cur []byte
	pend       []byte
}

func (p *pngReader) Read(b []byte) (int, error) {
	if len(p.pend) == 0 {
		var tag [1]byte
		if _, err := io.ReadFull(p.r, tag[:]); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(p.r, p.cur); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		for i, x := range p.cur {
			var left, upleft byte
			if i > 0 {
				left, upleft = p.cur[i-1], p.prior[i-1]
			}
			up := p.prior[i]
			switch tag[0] {
			case 1:
				x += left
			case 2:
				x += up
			case 3:
				x += byte((int(left) + int(up)) / 2)
			case 4:
				x += paeth(left, up, upleft)
			}
			p.cur[i] = x
		}
		p.prior, p.cur = p.cur, p.prior
		p.pend = p.prior
	}
	n := copy(b, p.pend)
	p.pend = p.pend[n:]
	return n, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// maxObjStmBytes bounds what the checks decompress of all object streams
// together (the library itself decompresses a stream again for every
// object it looks up in it, behind the guard).
const maxObjStmBytes = 256 << 20

// checkObjectStreams refuses object streams the library would resolve
// without end: one stored in an object stream; /Extends chains that loop
// or lead into compressed objects; an /N the library counts to at the end
// of the data without reading the file (beyond maxObjects, or not a plain
// number); and data that ends inside a <hex string> (see tailWatch),
// decrypted with crypt if the document is encrypted (not checked if it is
// encrypted and crypt is nil).
func checkObjectStreams(data []byte, table []xrefEntry, encrypted bool, crypt *streamCrypt) error {
	c := objStmChecker{data: data, table: table, encrypted: encrypted, crypt: crypt}
	checked := map[int64]bool{}
	for num, e := range table {
		if e.kind != 2 || checked[e.a] {
			continue
		}
		if c.entry(e.a).kind == 2 {
			return fmt.Errorf("%w: object %d is in object stream %d, which is itself in an object stream", ErrMalformed, num, e.a)
		}
		// Follow /Extends from this stream; a stream met on another
		// chain has been followed already.
		chain := map[int64]bool{}
		for s := e.a; ; {
			if chain[s] {
				return fmt.Errorf("%w: the /Extends chain of object stream %d comes back to %d (a cycle)", ErrMalformed, e.a, s)
			}
			if checked[s] {
				break
			}
			if len(checked) == maxObjectStreams {
				return fmt.Errorf("%w: over %d object streams", ErrMalformed, maxObjectStreams)
			}
			chain[s], checked[s] = true, true
			se := c.entry(s)
			if se.kind != 1 {
				break // the library finds no stream here and stops
			}
			ext, err := c.check(se.a)
			if err != nil {
				return fmt.Errorf("%w: object stream %d: %w", ErrMalformed, s, err)
			}
			ref, ok := ext.(pdfRef)
			if !ok {
				break
			}
			if c.entry(ref.num).kind == 2 {
				return fmt.Errorf("%w: object stream %d /Extends object %d, which is in an object stream", ErrMalformed, s, ref.num)
			}
			s = ref.num
		}
	}
	return nil
}

type objStmChecker struct {
	data      []byte
	table     []xrefEntry
	encrypted bool
	crypt     *streamCrypt // the key if encrypted; nil if it is not known
	decoded   int64        // bytes decompressed so far
}

func (c *objStmChecker) entry(num int64) xrefEntry {
	if num < 0 || num >= int64(len(c.table)) {
		return xrefEntry{}
	}
	return c.table[num]
}

// check reads the object stream at off, checks its /N and the end of its
// data, and returns its /Extends.
func (c *objStmChecker) check(off int64) (extends any, err error) {
	if off < 0 || off >= int64(len(c.data)) {
		return nil, fmt.Errorf("offset %d outside the file", off)
	}
	l := &lexer{data: c.data, pos: int(off)}
	num, gen, err := objectHeader(l)
	if err != nil {
		return nil, err
	}
	v, err := l.object(0)
	if err != nil {
		return nil, err
	}
	d, ok := v.(map[pdfName]any)
	if !ok {
		return nil, nil // the library's "not a stream": an error, not a loop
	}
	if n, ok := c.integer(d["N"]); !ok || n < 0 || n > maxObjects {
		return nil, fmt.Errorf("/N is not a number from 0 to %d", maxObjects)
	}
	if c.largestColumns(d["DecodeParms"]) > maxColumns {
		// The library would allocate predictor rows of that size.
		return nil, fmt.Errorf("predictor /Columns over %d", maxColumns)
	}
	if kw, err := l.token(); err != nil || kw != keyword("stream") {
		return d["Extends"], nil // not a stream: the library stops with an error
	}
	if l.pos < len(l.data) && l.data[l.pos] == '\r' {
		l.pos++
	}
	if l.pos < len(l.data) && l.data[l.pos] == '\n' {
		l.pos++
	}
	length, ok := c.integer(d["Length"])
	if !ok || length <= 0 {
		return d["Extends"], nil // the library reads nothing
	}
	raw := l.data[l.pos:min(len(l.data), l.pos+int(min(length, int64(len(l.data)))))]
	if c.encrypted && c.crypt == nil {
		return d["Extends"], nil
	}
	if c.crypt != nil {
		if raw, ok = c.crypt.decrypt(num, gen, raw); !ok {
			return d["Extends"], nil // the library's reader fails at the end: an error, not a loop
		}
	}
	r, err := objStmReader(d["Filter"], d["DecodeParms"], raw)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return d["Extends"], nil // the library fails on the stream: an error, not a loop
	}
	var tail tailWatch
	n, err := io.Copy(&tail, io.LimitReader(r, maxObjStmBytes-c.decoded+1))
	if c.decoded += n; c.decoded > maxObjStmBytes {
		return nil, fmt.Errorf("object streams over %d MiB once decompressed", maxObjStmBytes>>20)
	}
	if err != nil {
		return d["Extends"], nil // so does the library's read: an error, not a loop
	}
	if tail.endsInHexString() {
		return nil, fmt.Errorf("its data ends inside a hex string, which the parser would read for ever")
	}
	return d["Extends"], nil
}

// maxColumns bounds predictor rows in object streams (real ones have a
// few bytes; the library allocates two rows of /Columns bytes up front).
const maxColumns = 1 << 16

// largestColumns is the largest /Columns of an object stream's
// /DecodeParms (a dictionary or an array of them, directly or by
// reference); an unreadable one counts as too large.
func (c *objStmChecker) largestColumns(params any) int64 {
	if ref, ok := params.(pdfRef); ok {
		d, ok := c.dictionary(ref)
		if !ok {
			if c.entry(ref.num).kind == 0 && !c.entry(ref.num).set {
				return 0 // a missing object is null to the library
			}
			return math.MaxInt64
		}
		params = d
	}
	switch p := params.(type) {
	case map[pdfName]any:
		if p["Columns"] == nil {
			return 0
		}
		n, ok := c.integer(p["Columns"])
		if _, isRef := p["Columns"].(pdfRef); !ok && isRef {
			return math.MaxInt64 // not found, or compressed: the library would recurse
		}
		return n
	case []any:
		var most int64
		for _, x := range p {
			most = max(most, c.largestColumns(x))
		}
		return most
	}
	return 0
}

// integer is v, or the number object v refers to if it is stored
// uncompressed (one in an object stream would make the library recurse).
func (c *objStmChecker) integer(v any) (int64, bool) {
	if ref, ok := v.(pdfRef); ok {
		e := c.entry(ref.num)
		if e.kind != 1 || e.a < 0 || e.a >= int64(len(c.data)) {
			return 0, false
		}
		l := &lexer{data: c.data, pos: int(e.a)}
		if _, _, err := objectHeader(l); err != nil {
			return 0, false
		}
		v, _ = l.token()
	}
	n, ok := v.(int64)
	return n, ok
}

// dictionary is the dictionary ref names, if it is stored uncompressed.
func (c *objStmChecker) dictionary(ref pdfRef) (map[pdfName]any, bool) {
	e := c.entry(ref.num)
	if e.kind != 1 || e.a < 0 || e.a >= int64(len(c.data)) {
		return nil, false
	}
	l := &lexer{data: c.data, pos: int(e.a)}
	if _, _, err := objectHeader(l); err != nil {
		return nil, false
	}
	v, _ := l.object(0)
	d, ok := v.(map[pdfName]any)
	return d, ok
}

// objectHeader reads "N G obj".
func objectHeader(l *lexer) (num, gen int64, err error) {
	n, err1 := l.token()
	g, err2 := l.token()
	obj, err3 := l.token()
	num, ok1 := n.(int64)
	gen, ok2 := g.(int64)
	if err1 != nil || err2 != nil || err3 != nil || !ok1 || !ok2 || obj != keyword("obj") {
		return 0, 0, fmt.Errorf("no object definition")
	}
	return num, gen, nil
}

// objStmReader undoes an object stream's filters as the library does
// (FlateDecode, with the PNG Up predictor or none, and ASCII85Decode; one
// or a chain of them), streaming. The reader is nil when the library
// fails on the stream (an unsupported filter or predictor, a bad zlib
// header); the error is for predictor rows too large to allocate.
func objStmReader(filter, params any, raw []byte) (r io.Reader, err error) {
	filters, paramList := []any{filter}, []any{params}
	if a, isArray := filter.([]any); isArray {
		filters = a
		paramList, _ = params.([]any)
	}
	r = bytes.NewReader(raw)
	for i, f := range filters {
		var p map[pdfName]any
		if i < len(paramList) {
			p, _ = paramList[i].(map[pdfName]any)
		}
		switch f {
		case nil:
		case pdfName("FlateDecode"):
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil, nil
			}
			r = zr
			if pred, ok := p["Predictor"]; ok {
				columns, _ := p["Columns"].(int64)
				if pred != int64(12) || columns < 1 {
					return nil, nil // the library supports only PNG Up (12)
				}
				if columns > maxColumns {
					// checked before; a chain's second parameters too
					return nil, fmt.Errorf("predictor /Columns over %d", maxColumns)
				}
				r = &pngReader{r: r, prior: make([]byte, columns), cur: make([]byte, columns)}
			}
		case pdfName("ASCII85Decode"):
			r = ascii85.NewDecoder(&ascii85Chars{r: r})
		default:
			return nil, nil
		}
	}
	return r, nil
}

// ascii85Chars passes on what the library's ASCII85 reader does: the
// characters of the encoding, up to the first '~' (of the "~>" end
// marker, 7.4.3).
type ascii85Chars struct {
	r    io.Reader
	done bool
}

func (a *ascii85Chars) Read(p []byte) (int, error) {
	if a.done {
		return 0, io.EOF
	}
	n, err := a.r.Read(p)
	out := 0
	for _, c := range p[:n] {
		if c == '~' {
			a.done = true
			return out, io.EOF
		}
		if '!' <= c && c <= 'u' || c == 'z' {
			p[out] = c
			out++
		}
	}
	return out, err
}
