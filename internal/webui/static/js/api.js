// The client side of the chat server's HTTP API (notes/api.md), with bearer
// token handling: the token comes from the URL fragment (#token=…), lives in
// sessionStorage for this tab only, and is asked for when the server answers
// 401.

const TOKEN_KEY = 'toolport.token';

/** APIError is a failed API call, carrying the server's error code. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.name = 'APIError';
    this.status = status;
    this.code = code || '';
  }
}

/**
 * takeTokenFromFragment moves a #token=… fragment into sessionStorage and
 * removes it from the address bar (and so from history and bookmarks).
 */
export function takeTokenFromFragment() {
  const frag = location.hash.startsWith('#') ? location.hash.slice(1) : '';
  if (!frag) return;
  const params = new URLSearchParams(frag);
  const tok = params.get('token');
  if (tok === null) return;
  params.delete('token');
  if (tok) sessionStorage.setItem(TOKEN_KEY, tok);
  const rest = params.toString();
  history.replaceState(history.state, '', location.pathname + location.search + (rest ? '#' + rest : ''));
}

/**
 * Client calls the API. askToken is an async function that asks the person
 * for a token (called after a 401) and resolves to the token or null.
 */
export class Client {
  constructor(askToken) {
    this.askToken = askToken;
  }

  token() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  }

  headers(extra) {
    const hd = { Accept: 'application/json', ...extra };
    const t = this.token();
    if (t) hd.Authorization = 'Bearer ' + t;
    return hd;
  }

  /**
   * fetch makes a request, asking for a token and retrying while the server
   * answers 401 and the person gives a token. Non-2xx answers throw APIError.
   */
  async fetch(path, init = {}) {
    let rejected = false;
    for (;;) {
      const res = await fetch(path, { ...init, headers: this.headers(init.headers), credentials: 'same-origin', cache: 'no-store' });
      if (res.status === 401) {
        const tok = await this.askToken(rejected || this.token() !== '');
        rejected = true;
        if (tok) {
          sessionStorage.setItem(TOKEN_KEY, tok);
          continue;
        }
      }
      if (!res.ok) throw await errorFrom(res);
      return res;
    }
  }

  async json(path, init) {
    const res = await this.fetch(path, init);
    if (res.status === 204) return null;
    return res.json();
  }

  info() {
    return this.json('/api/info');
  }

  /** listConversations lists a page; query, when set, searches titles and text. */
  listConversations(cursor, limit = 20, query = '') {
    const q = new URLSearchParams({ limit: String(limit) });
    if (cursor) q.set('cursor', cursor);
    if (query) q.set('q', query);
    return this.json('/api/conversations?' + q.toString());
  }

  /** updateConversation changes a conversation's title and/or model. */
  updateConversation(id, fields) {
    return this.json('/api/conversations/' + encodeURIComponent(id), {
      method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fields),
    });
  }

  /**
   * exportConversation downloads the conversation as format (markdown or
   * json) and resolves to {blob, filename}, the name the server gave.
   */
  async exportConversation(id, format) {
    const res = await this.fetch('/api/conversations/' + encodeURIComponent(id) + '/export?format=' + encodeURIComponent(format), {
      headers: { Accept: format === 'json' ? 'application/json' : 'text/markdown' },
    });
    const cd = res.headers.get('Content-Disposition') || '';
    return { blob: await res.blob(), filename: dispositionName(cd) || 'conversation.' + (format === 'json' ? 'json' : 'md') };
  }

  /** regenerate answers the last user message again; an event-stream response. */
  regenerate(id, signal) {
    return this.fetch('/api/conversations/' + encodeURIComponent(id) + '/regenerate', {
      method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: '{}', signal,
    });
  }

  /** editMessage replaces a user message (and all after it) and streams the answer. */
  editMessage(id, messageId, content, signal) {
    return this.fetch('/api/conversations/' + encodeURIComponent(id) + '/messages/' + encodeURIComponent(messageId), {
      method: 'PUT', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ content }), signal,
    });
  }

  createConversation() {
    return this.json('/api/conversations', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}',
    });
  }

  getConversation(id) {
    return this.json('/api/conversations/' + encodeURIComponent(id));
  }

  deleteConversation(id) {
    return this.json('/api/conversations/' + encodeURIComponent(id), { method: 'DELETE' });
  }

  /** tools lists the tool definitions (MCP form, with each tool's pack). */
  tools() {
    return this.json('/api/tools');
  }

  /**
   * callTool runs a tool directly and resolves to the response's text (the
   * result envelope as JSON), so the caller can show it raw.
   */
  async callTool(name, args) {
    const res = await this.fetch('/api/tools/' + encodeURIComponent(name), {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(args),
    });
    return res.text();
  }

  /** approvals lists the tool calls of a conversation waiting for the person's decision. */
  approvals(id) {
    return this.json('/api/conversations/' + encodeURIComponent(id) + '/approvals');
  }

  /**
   * approve sends the decisions on the waiting calls ([{toolUseId,
   * decision}]) and returns the event-stream response of the resumed turn.
   */
  approve(id, decisions, signal) {
    return this.fetch('/api/conversations/' + encodeURIComponent(id) + '/approvals', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ decisions }),
      signal,
    });
  }

  /** sendMessage posts a message and returns the event-stream response. */
  sendMessage(id, content, signal) {
    return this.fetch('/api/conversations/' + encodeURIComponent(id) + '/messages', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ content }),
      signal,
    });
  }
}

/**
 * dispositionName is the file name a Content-Disposition gives: its UTF-8
 * filename* (the title in any script) when it has one, else its filename;
 * '' when neither is a plain name (no path, no control character).
 */
export function dispositionName(cd) {
  let name = '';
  const star = /filename\*=UTF-8''([^;\s]{1,600})/i.exec(cd);
  if (star) {
    try {
      name = decodeURIComponent(star[1]);
    } catch {
      name = '';
    }
  }
  if (!name) {
    const m = /filename="([^"]{1,200})"/.exec(cd);
    name = m ? m[1] : '';
  }
  return /^[^\/\\\p{Cc}]{1,200}$/u.test(name) && !name.startsWith('.') ? name : '';
}

async function errorFrom(res) {
  let code = '';
  let message = '';
  try {
    const body = await res.json();
    if (body && body.error) {
      code = typeof body.error.code === 'string' ? body.error.code : '';
      message = typeof body.error.message === 'string' ? body.error.message : '';
    }
  } catch {
    // Not JSON: fall back to the status.
  }
  return new APIError(res.status, code, message || `${res.status} ${res.statusText}`.trim());
}
