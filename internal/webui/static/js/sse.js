// A parser for text/event-stream bodies, for streams read with fetch (the
// chat stream is a POST, which EventSource cannot make).

/** The longest event (bytes of data lines) the parser accepts. */
export const MAX_EVENT_CHARS = 8 << 20;

/**
 * SSEParser turns chunks of decoded text into the data payloads of events.
 * It follows the event-stream format: lines end with \n, \r\n or \r; lines
 * starting with ":" are comments (heartbeats); "data:" lines of one event are
 * joined with \n; a blank line ends the event. Other fields are ignored.
 */
export class SSEParser {
  constructor(maxEventChars = MAX_EVENT_CHARS) {
    this.max = maxEventChars;
    this.buf = '';
    this.data = [];
    this.size = 0;
    this.pendingCR = false;
  }

  /** push feeds decoded text and returns the completed events' data. */
  push(chunk) {
    const out = [];
    let s = chunk;
    if (this.pendingCR && s.startsWith('\n')) s = s.slice(1);
    this.pendingCR = false;
    s = this.buf + s;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(s.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < s.length) {
          if (s.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
    }
    this.buf = s.slice(start);
    if (this.buf.length > this.max) throw new Error('event stream: line too long');
    return out;
  }

  /** end flushes a final event not followed by a blank line. */
  end() {
    const out = [];
    if (this.buf !== '') this.line(this.buf, out);
    this.buf = '';
    this.line('', out);
    return out;
  }

  line(l, out) {
    if (l === '') {
      if (this.data.length > 0) out.push(this.data.join('\n'));
      this.data = [];
      this.size = 0;
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field !== 'data') return;
    this.size += value.length + 1;
    if (this.size > this.max) throw new Error('event stream: event too large');
    this.data.push(value);
  }
}

/**
 * readEvents reads an event-stream response body and calls onEvent with each
 * event's JSON object. Events whose data is not a JSON object are skipped.
 * It returns when the body ends; an abort surfaces as the fetch's AbortError.
 */
export async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  const deliver = (payloads) => {
    for (const p of payloads) {
      let ev;
      try {
        ev = JSON.parse(p);
      } catch {
        continue;
      }
      if (ev && typeof ev === 'object' && !Array.isArray(ev) && typeof ev.type === 'string') onEvent(ev);
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      deliver(parser.push(decoder.decode(value, { stream: true })));
    }
    deliver(parser.push(decoder.decode()));
    deliver(parser.end());
  } finally {
    reader.releaseLock();
  }
}
