// A parser for text/event-stream bodies, for streams read with fetch (the
// chat stream is a POST, which EventSource cannot make), and the chat stream's
// automatic resumption: when the connection drops mid-turn, the rest of the
// turn is fetched again with Last-Event-ID, from whichever replica answers.

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
    this.lastId = '';
  }

  /** push feeds decoded text and returns the completed events' data. */
  push(chunk) {
    return this.feed(chunk).map((e) => e.data);
  }

  /**
   * feed feeds decoded text and returns the completed events as
   * {data, id}: id is the last event ID as the stream set it (id fields
   * carry over to later events, as in EventSource).
   */
  feed(chunk) {
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
    return this.finish().map((e) => e.data);
  }

  /** finish is end, with ids as feed gives them. */
  finish() {
    const out = [];
    if (this.buf !== '') this.line(this.buf, out);
    this.buf = '';
    this.line('', out);
    return out;
  }

  line(l, out) {
    if (l === '') {
      if (this.data.length > 0) out.push({ data: this.data.join('\n'), id: this.lastId });
      this.data = [];
      this.size = 0;
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') {
      if (!value.includes('\0') && value.length <= 256) this.lastId = value;
      return;
    }
    if (field !== 'data') return;
    this.size += value.length + 1;
    if (this.size > this.max) throw new Error('event stream: event too large');
    this.data.push(value);
  }
}

/**
 * readEvents reads an event-stream response body and calls onEvent with each
 * event's JSON object and its event id. Events whose data is not a JSON
 * object are skipped. It returns when the body ends; an abort surfaces as the
 * fetch's AbortError, a dropped connection as the read's error.
 */
export async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  const deliver = (events) => {
    for (const e of events) {
      let ev;
      try {
        ev = JSON.parse(e.data);
      } catch {
        continue;
      }
      if (ev && typeof ev === 'object' && !Array.isArray(ev) && typeof ev.type === 'string') onEvent(ev, e.id);
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      deliver(parser.feed(decoder.decode(value, { stream: true })));
    }
    deliver(parser.feed(decoder.decode()));
    deliver(parser.finish());
  } finally {
    reader.releaseLock();
  }
}

/** The most reconnections in a row (without an event between) before giving up. */
export const MAX_RECONNECTS = 8;

/** The chat stream's ids are "<turn id>:<seq>"; seqOf returns [turn, seq]. */
function seqOf(id) {
  const i = id.lastIndexOf(':');
  const n = i < 0 ? NaN : Number(id.slice(i + 1));
  return Number.isSafeInteger(n) && n >= 0 ? [id.slice(0, i), n] : ['', -1];
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });
}

/**
 * followTurn reads a chat turn's stream (the response to POST …/messages)
 * and, when the connection drops before the turn's message_end, reconnects
 * by itself: reconnect(lastEventId) must resolve to the response of
 * GET /api/conversations/{id}/stream sent with that Last-Event-ID (any
 * replica can answer it). Each event reaches onEvent once and in order: an
 * event whose id is not past the last one seen is dropped. onRetry(attempt)
 * is told of each reconnection. It resolves to true when the turn ended,
 * false when the stream ended without its end (no id to resume from, the
 * turn is gone, or MAX_RECONNECTS failed in a row). Aborting signal rejects
 * with the AbortError, as fetch does.
 */
export async function followTurn(res, onEvent, { reconnect, signal, onRetry } = {}) {
  let lastId = '';
  let turn = '';
  let seq = 0;
  let ended = false;
  let failures = 0;
  const handle = (ev, id) => {
    if (id) {
      const [t, n] = seqOf(id);
      if (t !== '' && t === turn && n <= seq) return;
      if (t !== '') {
        turn = t;
        seq = n;
      }
      lastId = id;
    }
    failures = 0;
    if (ev.type === 'message_end') ended = true;
    onEvent(ev);
  };
  for (;;) {
    try {
      await readEvents(res.body, handle);
    } catch (err) {
      if ((signal && signal.aborted) || (err && err.name === 'AbortError')) throw err;
    }
    if (ended || !reconnect || !lastId) return ended;
    for (;;) {
      if (failures >= MAX_RECONNECTS) return false;
      failures++;
      if (onRetry) onRetry(failures);
      await pause(Math.min(200 * 2 ** (failures - 1), 5000), signal);
      try {
        res = await reconnect(lastId);
      } catch (err) {
        if ((signal && signal.aborted) || (err && err.name === 'AbortError')) throw err;
        // A 4xx answer will not get better by asking again.
        if (err && typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.status !== 429) return false;
        continue;
      }
      if (res.status === 204 || !res.body) return ended;
      break;
    }
  }
}
