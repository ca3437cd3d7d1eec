package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of the stdio transport on one inbound line.
const (
	// DefaultMaxLineBytes bounds one inbound message when
	// [StdioTransport.MaxLineBytes] is zero. Requests to Toolport are small
	// (a tool call's arguments); 4 MiB leaves room for any honest client.
	DefaultMaxLineBytes = 4 << 20

	// MaxDepth bounds the nesting of objects and arrays in one message. It is
	// the SDK's own decoding limit (v1.8.0), checked here first so that a
	// deeper message is answered instead of ending the session.
	MaxDepth = 1000
)

// DefaultDrainTimeout is [StdioTransport.DrainTimeout] when unset.
const DefaultDrainTimeout = 30 * time.Second

// Bounds of one JSON-RPC batch, on stdio and HTTP alike. A batch of small
// requests can ask for large answers (3,000 tools/list of 47 bytes each are
// 275 MB of answers), and a batch's answers are sent together, so without
// bounds its requests buy memory at a thousand times their size.
const (
	// DefaultMaxBatchMessages bounds the messages of one batch; a longer
	// batch is refused whole with -32600 and none of it runs.
	DefaultMaxBatchMessages = 64

	// DefaultMaxBatchAnswerBytes bounds the answers of one batch: once
	// they reach it, each further answer is replaced by error -32000 (the
	// call was made; sent alone, its answer comes back). The first answer
	// always passes, so a batch is never worse than its calls one by one.
	DefaultMaxBatchAnswerBytes = 8 << 20
)

// JSON-RPC 2.0 error codes this transport answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	// codeServerClosing answers a call abandoned at the end of the input; it
	// is the SDK's "server is closing" (an implementation-defined server
	// error of JSON-RPC's -32000 to -32099 range).
	codeServerClosing = -32004
	// codeAnswerDropped replaces an answer beyond a batch's byte budget.
	codeAnswerDropped = -32000
)

// firstBatchlessRevision is the first MCP revision without JSON-RPC batches.
const firstBatchlessRevision = "2025-06-18"

// A StdioTransport serves one client over newline-delimited JSON-RPC on a
// reader and a writer (stdin and stdout), like the SDK's [mcp.IOTransport],
// but a malformed line does not end the session: JSON-RPC 2.0 wants it
// answered and the server kept serving. The SDK's transport (v1.8.0) returns
// the decoding error from Read, which closes the connection.
//
// Each line is checked before the SDK sees it, and a bad one is answered here
// with id null, or with its id when that could be read:
//
//   - not JSON (NaN included): -32700 parse error;
//   - longer than MaxLineBytes, nested deeper than [MaxDepth], neither an
//     object nor an array, or not a JSON-RPC 2.0 message (no "jsonrpc":"2.0",
//     a method that is not a string, an id that is not a string or number):
//     -32600 invalid request.
//
// A batch (an array) is accepted until a protocol revision without batches
// (2025-06-18 and later) has been negotiated, as by the SDK; its responses are
// sent together in one array, the errors for its bad members included.
//
// The end of the input does not drop what was read before it: a client may
// write its requests and close stdin at once (a pipe, a script). The SDK
// (v1.8.0) stops writing and cancels every call as soon as Read reports the
// end, so Read reports it only once every call it returned has been answered
// through Write, or DrainTimeout has passed; then each call still running is
// answered here with error -32004 and canceled by the SDK.
type StdioTransport struct {
	Reader io.Reader // closed on Close if it is an io.Closer
	Writer io.Writer // never closed: the process owns stdout

	// MaxLineBytes bounds one inbound line; zero means [DefaultMaxLineBytes].
	MaxLineBytes int

	// DrainTimeout bounds how long the calls read before the end of the input
	// may still run; zero means [DefaultDrainTimeout].
	DrainTimeout time.Duration

	// MaxBatchMessages and MaxBatchAnswerBytes bound one batch; zero means
	// [DefaultMaxBatchMessages] and [DefaultMaxBatchAnswerBytes].
	MaxBatchMessages    int
	MaxBatchAnswerBytes int

	// abandoned, set by ServeStdio, is handed to the next connection, which
	// closes it when it gives up on the calls still running.
	abandoned chan struct{}
}

// Connect implements [mcp.Transport].
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	drain := t.DrainTimeout
	if drain <= 0 {
		drain = DefaultDrainTimeout
	}
	c := &stdioConn{
		r:           t.Reader,
		w:           t.Writer,
		drain:       drain,
		maxBatch:    orDefault(t.MaxBatchMessages, DefaultMaxBatchMessages),
		batchBudget: orDefault(t.MaxBatchAnswerBytes, DefaultMaxBatchAnswerBytes),
		incoming:    make(chan line),
		closed:      make(chan struct{}),
		pending:     map[jsonrpc.ID]bool{},
		abandoned:   t.abandoned,
	}
	t.abandoned = nil // a channel is closed once: it belongs to this connection
	if c.abandoned == nil {
		c.abandoned = make(chan struct{})
	}
	go c.readLines(limit)
	return c, nil
}

// line is one inbound line, or the error that ended the input.
type line struct {
	data     []byte
	tooLong  bool
	err      error
	byteSize int
}

type stdioConn struct {
	r           io.Reader
	w           io.Writer
	drain       time.Duration
	maxBatch    int
	batchBudget int

	incoming chan line
	queue    []jsonrpc.Message // the rest of a batch; Read is not concurrent

	// mu serializes writes (the SDK writes concurrently) and guards the
	// session state below, which Read and Write both use.
	mu       sync.Mutex
	initID   jsonrpc.ID // the id of the initialize request, once seen
	revision string     // the negotiated protocol revision, once answered
	batches  map[jsonrpc.ID]*batch
	// pending holds the calls returned by Read and not yet answered; idle,
	// once the input has ended, is closed when it empties. After the drain
	// timeout the rest are answered here and gaveUp drops the SDK's late
	// answers.
	pending   map[jsonrpc.ID]bool
	idle      chan struct{}
	gaveUp    bool
	abandoned chan struct{} // closed when gaveUp is set

	closeOnce sync.Once
	closed    chan struct{}
}

// batch collects the responses to one inbound batch until its last call is
// answered.
type batch struct {
	pending   int
	responses []json.RawMessage
	bytes     int // of responses
}

// add keeps the answer to call id, or an error in its place once the batch's
// answers would pass budget.
func (b *batch) add(id jsonrpc.ID, data []byte, budget int) {
	if len(b.responses) > 0 && b.bytes+len(data) > budget {
		data = droppedAnswer(id, budget)
	}
	b.responses = append(b.responses, data)
	b.bytes += len(data)
}

// droppedAnswer is the error that replaces the answer to call id beyond a
// batch's byte budget.
func droppedAnswer(id jsonrpc.ID, budget int) json.RawMessage {
	return errorResponse(rawID(id), codeAnswerDropped, fmt.Sprintf(
		"answer dropped: the batch's answers would exceed %d bytes; the call was made; send it alone for its answer", budget))
}

// rawID encodes a valid id as JSON, or returns nil (null).
func rawID(id jsonrpc.ID) json.RawMessage {
	if !id.IsValid() {
		return nil
	}
	raw, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return raw
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func (c *stdioConn) SessionID() string { return "" }

// readLines reads the input on its own goroutine, so that Close can unblock a
// pending Read even when the reader itself cannot be interrupted.
func (c *stdioConn) readLines(limit int) {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		l := readLine(br, limit)
		select {
		case c.incoming <- l:
		case <-c.closed:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// readLine returns the next line without its end of line, or tooLong (and
// the line discarded up to its end) when it is longer than limit.
func readLine(br *bufio.Reader, limit int) line {
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= limit+2 { // room for "\r\n"
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && n > 0:
			// A last line without a newline is still a message.
			return finishLine(buf, n, limit)
		case err != nil:
			return line{err: err}
		}
		return finishLine(buf, n, limit)
	}
}

func finishLine(buf []byte, n, limit int) line {
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	buf = bytes.TrimSuffix(buf, []byte("\r"))
	if n > limit+2 || len(buf) > limit {
		return line{tooLong: true, byteSize: n}
	}
	return line{data: buf, byteSize: n}
}

// Read returns the next valid message, answering the invalid ones on the way.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(c.queue) > 0 {
			msg := c.queue[0]
			c.queue = c.queue[1:]
			c.track(msg)
			return msg, nil
		}
		var l line
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.incoming:
		}
		if l.err != nil {
			c.awaitAnswers(ctx)
			return nil, l.err
		}
		msgs, err := c.accept(l)
		if err != nil {
			return nil, err
		}
		if len(msgs) > 0 {
			c.queue = msgs
		}
	}
}

// track notes a call handed to the SDK, which owes it an answer.
func (c *stdioConn) track(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
}

// awaitAnswers waits, at the end of the input, until every call read has been
// answered, or the drain timeout has passed, ctx is done or the connection
// closed. After the timeout it answers the calls still running itself.
func (c *stdioConn) awaitAnswers(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	c.idle = make(chan struct{})
	idle := c.idle
	c.mu.Unlock()
	timer := time.NewTimer(c.drain)
	defer timer.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-c.closed:
	case <-timer.C:
		c.abandon()
	}
}

// abandon answers every call still pending with an error. Their handlers are
// canceled by the SDK when Read then reports the end of the input; whatever
// they write afterwards is dropped.
func (c *stdioConn) abandon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := fmt.Sprintf("server closing: the input ended and the call did not finish within %v; it was canceled", c.drain)
	for id := range c.pending {
		// An error of a write means stdout is gone: nothing else can be said.
		_ = c.answerLocked(id, errorResponse(rawID(id), codeServerClosing, msg))
	}
	c.gaveUp = true
	close(c.abandoned)
}

// accept checks one line and returns its messages for the SDK; it answers
// what is wrong with it itself.
func (c *stdioConn) accept(l line) ([]jsonrpc.Message, error) {
	if l.tooLong {
		return nil, c.writeError(nil, codeInvalidRequest, fmt.Sprintf("invalid request: message of %d bytes exceeds the limit", l.byteSize))
	}
	data := bytes.TrimSpace(l.data)
	if len(data) == 0 {
		return nil, nil // blank lines separate nothing; skip them as the SDK does
	}
	if !json.Valid(data) {
		return nil, c.writeError(nil, codeParseError, "parse error: the line is not valid JSON")
	}
	if depth(data) > MaxDepth {
		return nil, c.writeError(nil, codeInvalidRequest, fmt.Sprintf("invalid request: nested deeper than %d", MaxDepth))
	}
	switch data[0] {
	case '{':
		msg, bad := decode(data)
		if bad != nil {
			return nil, c.write(bad)
		}
		c.mu.Lock()
		c.noteInitialize(msg)
		c.mu.Unlock()
		return []jsonrpc.Message{msg}, nil
	case '[':
		return c.acceptBatch(data)
	default:
		return nil, c.writeError(nil, codeInvalidRequest, "invalid request: a message is a JSON object or an array of them")
	}
}

// decode decodes one message with the SDK's decoder, or returns the error
// response to send instead.
func decode(data []byte) (jsonrpc.Message, json.RawMessage) {
	if len(data) == 0 || data[0] != '{' {
		return nil, errorResponse(nil, codeInvalidRequest, "invalid request: a message is a JSON object")
	}
	var head struct {
		Version *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(data, &head) // data is a valid object; fields of the wrong type stay empty
	id := recoverID(head.ID)
	if head.Version == nil || *head.Version != "2.0" {
		return nil, errorResponse(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if len(head.ID) > 0 && id == nil && !bytes.Equal(head.ID, []byte("null")) {
		return nil, errorResponse(nil, codeInvalidRequest, "invalid request: an id is a string or an integer")
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, errorResponse(id, codeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// noteInitialize remembers the id of an initialize request, to learn the
// negotiated revision from its response; c.mu is held.
func (c *stdioConn) noteInitialize(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		c.initID = req.ID
	}
}

// recoverID returns the raw id when it is one the SDK keeps exactly (a string
// or an integer), or nil.
func recoverID(raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		return raw
	case float64:
		if v == float64(int64(v)) && v >= -(1<<53) && v <= 1<<53 {
			return raw
		}
	}
	return nil
}

// acceptBatch splits a batch into its valid messages, for the SDK, and the
// answers to its invalid ones, sent with the batch's responses.
func (c *stdioConn) acceptBatch(data []byte) ([]jsonrpc.Message, error) {
	c.mu.Lock()
	revision := c.revision
	c.mu.Unlock()
	if revision >= firstBatchlessRevision {
		return nil, c.writeError(nil, codeInvalidRequest, "invalid request: protocol revision "+revision+" has no JSON-RPC batches")
	}
	n, err := countMembers(data, c.maxBatch)
	switch {
	case err != nil || n == 0:
		return nil, c.writeError(nil, codeInvalidRequest, "invalid request: an empty batch")
	case n > c.maxBatch:
		return nil, c.writeError(nil, codeInvalidRequest, fmt.Sprintf("invalid request: a batch of more than %d messages", c.maxBatch))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, c.writeError(nil, codeInvalidRequest, "invalid request: "+err.Error())
	}
	b := &batch{}
	var msgs []jsonrpc.Message
	var calls []jsonrpc.ID
	seen := map[jsonrpc.ID]bool{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, raw := range raws {
		msg, bad := decode(bytes.TrimSpace(raw))
		if bad != nil {
			b.responses = append(b.responses, bad)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, busy := c.batches[req.ID]; busy || seen[req.ID] {
				b.responses = append(b.responses, errorResponse(nil, codeInvalidRequest, "invalid request: an id already in use"))
				continue
			}
			seen[req.ID] = true
			calls = append(calls, req.ID)
		}
		c.noteInitialize(msg)
		msgs = append(msgs, msg)
	}
	if len(calls) == 0 {
		if len(b.responses) > 0 {
			return msgs, c.writeLocked(encodeArray(b.responses))
		}
		return msgs, nil
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	b.pending = len(calls)
	for _, id := range calls {
		c.batches[id] = b
	}
	return msgs, nil
}

// Write sends a message of the SDK; a response to a call of a batch waits for
// the rest of the batch.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcpserver: encoding a message: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.writeLocked(data)
	}
	if c.gaveUp {
		return nil // answered by abandon
	}
	if c.initID.IsValid() && resp.ID == c.initID && resp.Error == nil {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &res) == nil {
			c.revision = res.ProtocolVersion
		}
	}
	return c.answerLocked(resp.ID, data)
}

// answerLocked sends the answer to call id, or keeps it with its batch until
// the batch is complete; c.mu is held.
func (c *stdioConn) answerLocked(id jsonrpc.ID, data []byte) error {
	if c.pending[id] {
		delete(c.pending, id)
		if len(c.pending) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
	}
	b, inBatch := c.batches[id]
	if !inBatch {
		return c.writeLocked(data)
	}
	delete(c.batches, id)
	b.add(id, data, c.batchBudget)
	if b.pending--; b.pending > 0 {
		return nil
	}
	return c.writeLocked(encodeArray(b.responses))
}

func (c *stdioConn) write(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeLocked(data)
}

// writeLocked writes one line; c.mu is held. Writes go on after Close, which
// ends the input only: the answers to requests read before the end of the
// input are still due.
func (c *stdioConn) writeLocked(data []byte) error {
	_, err := c.w.Write(append(data, '\n'))
	return err
}

func (c *stdioConn) writeError(id json.RawMessage, code int, message string) error {
	return c.write(errorResponse(id, code, message))
}

// errorResponse encodes a JSON-RPC error response. It is built here rather
// than with the SDK's encoder, which omits a null id (v1.8.0) while JSON-RPC
// requires the member.
func errorResponse(id json.RawMessage, code int, message string) json.RawMessage {
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, message}})
	return data
}

func encodeArray(items []json.RawMessage) []byte {
	data, _ := json.Marshal(items)
	return data
}

// Close ends the connection and closes the reader, which unblocks a pending
// read of a pipe or a file.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if rc, ok := c.r.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}

// countMembers counts the members of a JSON array, up to limit+1: a longer
// batch is refused before any of it is decoded.
func countMembers(data []byte, limit int) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return 0, fmt.Errorf("reading a batch: %w", err)
	}
	if tok != json.Delim('[') {
		return 0, errors.New("a batch is an array")
	}
	n := 0
	for dec.More() && n <= limit {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n, fmt.Errorf("member %d: %w", n, err)
		}
		n++
	}
	return n, nil
}

// depth returns the deepest nesting of objects and arrays in valid JSON.
func depth(data []byte) int {
	var d, deepest int
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if d++; d > deepest {
				deepest = d
			}
		case '}', ']':
			d--
		}
	}
	return deepest
}
