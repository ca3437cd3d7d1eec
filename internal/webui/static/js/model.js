// The view model of a conversation. Live SSE events and stored content
// blocks are both reduced to the same shape, so a reloaded conversation shows
// exactly what was shown while it streamed.
//
// A message is {id, role, parts, incomplete, streaming, errors}; a part is
// {kind:'text', text} or a tool call:
// {kind:'tool', id, name, input, status, summary, durationMs, result, error,
//  errorCode, retryable, wasRetried, progress (a running tool's latest
//  report, tool_progress)}, status one of pending, executing,
// completed, failed, canceled, or awaiting: the call waits for the person's
// decision (approval_required), and the part carries
// approval {title, what, decision} until the resumed turn runs or denies it.

import { t } from './i18n.js';

export function newMessage(role, id) {
  return { id: id || '', role, parts: [], incomplete: false, streaming: false, errors: [], usage: null, model: '' };
}

/** usageOf returns a usage object's token counts, or null. */
export function usageOf(u) {
  if (!isObj(u)) return null;
  const input = n(u.inputTokens);
  const output = n(u.outputTokens);
  if (input === null && output === null) return null;
  return { inputTokens: input || 0, outputTokens: output || 0, contextTokens: n(u.contextTokens) || 0 };
}

function isObj(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function s(v) {
  return typeof v === 'string' ? v : '';
}

function n(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function appendText(msg, text) {
  if (!text) return null;
  const last = msg.parts[msg.parts.length - 1];
  if (last && last.kind === 'text') {
    last.text += text;
    return last;
  }
  const p = { kind: 'text', text };
  msg.parts.push(p);
  return p;
}

function newTool(id, name, input) {
  return {
    kind: 'tool', id, name, input: input === undefined ? null : input, status: 'pending',
    summary: '', durationMs: null, result: null, error: '', errorCode: '', retryable: false, wasRetried: false,
    progress: '',
  };
}

function findTool(msg, id) {
  for (const p of msg.parts) if (p.kind === 'tool' && p.id === id) return p;
  return null;
}

/** setStatus moves a tool part to status, recording the path it took. */
function setStatus(p, status) {
  p.status = status;
  p.history = (p.history || []).concat(status);
}

/**
 * applyResult fills a tool part from a result envelope: the object stored in
 * a tool_result block and sent as tool_call_end's result.
 */
function applyResult(p, env, isError) {
  if (!isObj(env)) {
    if (isError) {
      p.error = typeof env === 'string' && env ? env : t('toolFailed');
      setStatus(p, 'failed');
    } else {
      p.result = env === undefined ? null : env;
      setStatus(p, 'completed');
    }
    return;
  }
  p.result = env;
  const d = n(env.durationMs);
  if (d !== null) p.durationMs = d;
  if (env.success === false || isError) {
    p.error = s(env.error) || t('toolFailed');
    p.errorCode = s(env.error_code);
    p.retryable = env.retryable === true;
    p.wasRetried = env.wasRetried === true;
    setStatus(p, 'failed');
  } else {
    p.summary = s(env.summary);
    setStatus(p, 'completed');
  }
}

/**
 * applyEvent updates msg (the assistant message being streamed) with one
 * SSE event and returns the part it changed, or null. Unknown events are
 * ignored so that newer servers can add events.
 */
export function applyEvent(msg, ev) {
  switch (ev.type) {
    case 'message_start':
      msg.id = s(ev.messageId) || msg.id;
      msg.model = s(ev.model) || msg.model;
      return null;
    case 'text_delta':
      return appendText(msg, s(ev.content));
    case 'tool_call_start': {
      const id = s(ev.toolCallId);
      let p = findTool(msg, id);
      if (!p) {
        p = newTool(id, s(ev.toolName), ev.input);
        msg.parts.push(p);
      }
      setStatus(p, 'executing');
      return p;
    }
    case 'tool_progress': {
      // A running tool's latest report (answer_brave: its answer so far);
      // the result replaces it.
      const p = findTool(msg, s(ev.toolCallId));
      if (!p || p.status !== 'executing') return null;
      p.progress = s(ev.message);
      return p;
    }
    case 'tool_call_end': {
      const p = findTool(msg, s(ev.toolCallId));
      if (!p) return null;
      if (ev.result !== undefined) applyResult(p, ev.result, false);
      else setStatus(p, 'completed');
      if (!p.summary && p.status === 'completed') p.summary = s(ev.summary);
      if (n(ev.durationMs) !== null) p.durationMs = n(ev.durationMs);
      return p;
    }
    case 'tool_call_error': {
      const p = findTool(msg, s(ev.toolCallId));
      if (!p) return null;
      p.error = s(ev.error) || t('toolFailed');
      p.errorCode = s(ev.errorCode);
      p.retryable = ev.retryable === true;
      p.wasRetried = ev.wasRetried === true;
      if (n(ev.durationMs) !== null) p.durationMs = n(ev.durationMs);
      if (p.result === null) {
        p.result = {
          success: false, error: p.error, error_code: p.errorCode, retryable: p.retryable,
          wasRetried: p.wasRetried, durationMs: p.durationMs,
        };
      }
      setStatus(p, 'failed');
      return p;
    }
    case 'approval_required': {
      const id = s(ev.toolUseId);
      if (!id) return null;
      let p = findTool(msg, id);
      if (!p) {
        p = newTool(id, s(ev.tool), ev.arguments);
        msg.parts.push(p);
      }
      if (p.input === null && isObj(ev.arguments)) p.input = ev.arguments;
      p.approval = { title: s(ev.title) || p.name, what: s(ev.what), decision: '' };
      setStatus(p, 'awaiting');
      return p;
    }
    case 'message_end': {
      msg.usage = usageOf(ev.usage) || msg.usage;
      const reason = s(ev.stopReason);
      if (reason === 'canceled' || reason === 'error') finish(msg, true);
      else finish(msg, false);
      return null;
    }
    case 'error':
      msg.errors.push({ code: s(ev.code), message: s(ev.message) || t('somethingWrong').trim() });
      return null;
    default:
      return null;
  }
}

/** awaitingParts lists the tool parts of msg waiting for the person's decision. */
export function awaitingParts(msg) {
  return msg.parts.filter((p) => p.kind === 'tool' && p.status === 'awaiting');
}

/**
 * finish ends a streamed message. When the turn was cut short, tools still
 * running are marked canceled, as a reloaded conversation shows them.
 */
export function finish(msg, incomplete) {
  msg.streaming = false;
  if (incomplete) {
    msg.incomplete = true;
    for (const p of msg.parts) {
      if (p.kind === 'tool' && (p.status === 'executing' || p.status === 'pending')) setStatus(p, 'canceled');
    }
  }
}

/**
 * fromStored converts the messages of GET /api/conversations/{id} into view
 * messages. tool_use/tool_result pairs become tool parts (results found in
 * later messages, as Anthropic-style histories store them, are attached to
 * their call); adjacent text blocks merge, as streamed deltas do; a failed
 * turn's stored error ({code, message}) becomes the message's error, as its
 * live `error` event did.
 */
export function fromStored(messages) {
  const out = [];
  const tools = new Map();
  for (const m of Array.isArray(messages) ? messages : []) {
    if (!isObj(m)) continue;
    const role = m.role === 'user' ? 'user' : 'assistant';
    const msg = newMessage(role, s(m.id));
    msg.incomplete = m.incomplete === true;
    if (role === 'assistant') msg.usage = usageOf(m.usage);
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    for (const b of blocks) {
      if (!isObj(b)) continue;
      if (b.type === 'text') {
        appendText(msg, s(b.text));
      } else if (b.type === 'tool_use') {
        const p = newTool(s(b.id), s(b.name), b.input);
        tools.set(p.id, p);
        msg.parts.push(p);
      } else if (b.type === 'tool_result') {
        const p = tools.get(s(b.tool_use_id));
        if (!p) continue;
        let content = b.content;
        if (typeof content === 'string') {
          try {
            content = JSON.parse(content);
          } catch {
            // A plain-text result: keep it as is.
          }
        }
        applyResult(p, content, b.is_error === true);
      }
    }
    // A failed turn's error is stored as its error event said it; the same
    // reducer shows it, so the reloaded message matches the live one.
    if (role === 'assistant' && isObj(m.error)) applyEvent(msg, { type: 'error', code: m.error.code, message: m.error.message });
    // A user message that only carried tool results is not shown.
    if (role === 'user' && msg.parts.length === 0) continue;
    out.push(msg);
  }
  // A call without a result was cut short (the turn was stopped or failed).
  for (const p of tools.values()) if (p.status === 'pending') setStatus(p, 'canceled');
  return out;
}

/** resultCount counts the items a result envelope holds, for the status line. */
export function resultCount(env) {
  if (!isObj(env)) return null;
  for (const k of ['tracks', 'albums', 'found', 'datasets', 'results', 'records', 'names', 'resources']) {
    if (Array.isArray(env[k])) return env[k].length;
  }
  return null;
}

/**
 * partFromResult builds the tool part of a direct call (the tool bench's):
 * running while env is undefined, then filled from the result envelope
 * exactly as a chat's tool_call_end fills it, so both show the same card.
 */
export function partFromResult(id, name, input, env) {
  const p = newTool(id, name, input);
  setStatus(p, 'executing');
  if (env !== undefined) applyResult(p, env, false);
  return p;
}
