// Discover Chat: the page's controller. It wires the sidebar of past
// conversations, the message thread and the composer to the chat API.

import { Client, APIError, takeTokenFromFragment } from './api.js';
import { followTurn } from './sse.js';
import { newMessage, applyEvent, finish, fromStored } from './model.js';
import { renderMarkdown } from './markdown.js';
import { ToolCard, toolLabel } from './cards.js';
import { Bench } from './bench.js';
import { h, clear, icon, str } from './dom.js';

const $ = (id) => document.getElementById(id);

/** MessageView shows one view-model message and follows its updates. */
class MessageView {
  constructor(msg, uid) {
    this.msg = msg;
    this.uid = uid;
    this.views = new Map(); // part → {el, card?, rendered?}
    this.body = h('div', { class: 'msg-body' });
    this.foot = h('div', { class: 'msg-foot' });
    if (msg.role === 'user') {
      this.el = h('li', { class: 'msg msg-user' }, h('div', { class: 'bubble' }, this.body));
    } else {
      this.el = h('li', { class: 'msg msg-assistant' },
        h('div', { class: 'avatar', 'aria-hidden': 'true' }),
        h('div', { class: 'msg-col' }, this.body, this.foot));
    }
    this.frame = 0;
    this.sync();
  }

  /** sync renders parts that are new or changed since the last call. */
  sync(changed) {
    for (const part of this.msg.parts) {
      let v = this.views.get(part);
      if (!v) {
        if (part.kind === 'text') {
          v = { el: h('div', { class: 'md' }), rendered: -1 };
        } else {
          const card = new ToolCard(part, `${this.uid}-${this.views.size}`);
          v = { el: card.el, card };
        }
        this.views.set(part, v);
        this.body.appendChild(v.el);
      } else if (part.kind === 'tool' && (changed === part || changed === undefined)) {
        v.card.update(part);
      }
      if (part.kind === 'text' && v.rendered !== part.text.length) {
        if (this.msg.role === 'user') {
          clear(v.el).appendChild(h('p', { class: 'plain' }, part.text));
        } else {
          clear(v.el).appendChild(renderMarkdown(part.text));
        }
        v.rendered = part.text.length;
      }
    }
    this.renderFoot();
  }

  /** schedule batches re-rendering to one per animation frame while streaming. */
  schedule(changed) {
    if (changed && changed.kind === 'tool') {
      this.sync(changed);
      return;
    }
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.sync();
    });
  }

  renderFoot() {
    this.el.dataset.streaming = String(this.msg.streaming);
    this.el.dataset.incomplete = String(this.msg.incomplete);
    if (this.msg.role === 'user') return;
    clear(this.foot);
    for (const e of this.msg.errors) {
      this.foot.appendChild(h('div', { class: 'inline-error', role: 'alert' },
        icon('alert'), h('span', null, e.message), e.code ? h('code', null, e.code) : null));
    }
    if (this.msg.streaming) {
      const running = this.msg.parts.some((p) => p.kind === 'tool' && p.status === 'executing');
      if (!running) this.foot.appendChild(h('div', { class: 'typing', 'aria-hidden': 'true' }, h('span'), h('span'), h('span')));
    } else if (this.msg.incomplete) {
      this.foot.appendChild(h('div', { class: 'incomplete-note' }, icon('stop', 'icon icon-small'), 'This answer is incomplete: it ended before the model finished.'));
    } else if (this.msg.parts.length === 0 && this.msg.errors.length === 0) {
      this.foot.appendChild(h('div', { class: 'muted' }, '(no answer)'));
    }
  }
}

class App {
  constructor() {
    this.api = new Client((rejected) => this.askToken(rejected));
    this.conversations = [];
    this.nextCursor = null;
    this.currentId = null;
    this.messages = [];
    this.views = [];
    this.stream = null; // {controller, msg, view}
    this.uid = 0;
    this.info = null;
    this.tokenWaiters = null;
    this.bench = null; // built the first time it is shown
    this.title = '';
  }

  nextUid() {
    this.uid += 1;
    return this.uid;
  }

  async start() {
    takeTokenFromFragment();
    this.bind();
    this.updateComposer();
    const opening = new URLSearchParams(location.search).get('c');
    await Promise.all([this.loadInfo(), this.loadConversations(false)]);
    if (opening) await this.open(opening, false);
    // Without a model the page offers the tool bench: every tool works.
    else if (this.modelMissing() || new URLSearchParams(location.search).has('tools')) await this.showBench(true, false);
    document.body.dataset.ready = 'true';
  }

  bind() {
    const input = $('composer-input');
    $('composer').addEventListener('submit', (e) => {
      e.preventDefault();
      this.send();
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        this.send();
      } else if (e.key === 'Escape' && this.stream) {
        e.preventDefault();
        this.stop();
      }
    });
    input.addEventListener('input', () => this.autosize());
    $('stop-btn').addEventListener('click', () => this.stop());
    $('new-chat').addEventListener('click', () => this.newChat());
    $('load-more').addEventListener('click', () => this.loadConversations(true));
    $('menu-btn').appendChild(icon('menu'));
    $('send-btn').appendChild(icon('send'));
    $('menu-btn').addEventListener('click', () => this.toggleSidebar());
    $('bench-btn').appendChild(icon('wrench', 'icon icon-small'));
    $('bench-btn').addEventListener('click', () => this.showBench($('bench').hidden, true));
    $('open-bench').addEventListener('click', () => this.showBench(true, true));
    $('backdrop').addEventListener('click', () => this.toggleSidebar(false));
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && document.body.classList.contains('sidebar-open')) {
        this.toggleSidebar(false);
        $('menu-btn').focus();
      }
    });
    for (const b of document.querySelectorAll('.suggestion')) {
      b.addEventListener('click', () => {
        input.value = b.textContent;
        this.autosize();
        input.focus();
      });
    }
    window.addEventListener('popstate', () => {
      const id = new URLSearchParams(location.search).get('c');
      if (id) this.open(id, false);
      else this.newChat(false);
    });
  }

  toggleSidebar(force) {
    const open = force === undefined ? !document.body.classList.contains('sidebar-open') : force;
    document.body.classList.toggle('sidebar-open', open);
    $('menu-btn').setAttribute('aria-expanded', String(open));
    $('backdrop').hidden = !open;
    if (open) $('new-chat').focus();
  }

  autosize() {
    const input = $('composer-input');
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight, 240) + 'px';
  }

  announce(text) {
    const s = $('live-status');
    s.textContent = text;
  }

  showLoadError(err) {
    const el = $('load-error');
    if (!err) {
      el.hidden = true;
      clear(el);
      return;
    }
    clear(el).append(h('strong', null, 'Something went wrong. '), err.message || String(err));
    el.hidden = false;
  }

  // ---- Server info and token ----

  async loadInfo() {
    try {
      const info = await this.api.info();
      this.info = info;
      const chip = $('model-chip');
      if (info && typeof info.model === 'string' && info.model) {
        chip.textContent = info.model;
        chip.hidden = false;
      }
      if (info && info.modelConfigured === false) {
        $('no-model-help').textContent = str(info.modelHelp) || 'Configure a model provider and restart the server.';
        $('no-model-banner').hidden = false;
      }
      $('server-info').textContent = [info && str(info.version) ? 'Toolport ' + info.version : '', info && typeof info.tools === 'number' ? `${info.tools} tools` : ''].filter(Boolean).join(' · ');
      this.updateComposer();
    } catch (err) {
      this.showLoadError(err);
    }
  }

  modelMissing() {
    return this.info !== null && this.info.modelConfigured === false;
  }

  /** askToken shows the token dialog; concurrent 401s share one prompt. */
  askToken(rejected) {
    if (this.tokenWaiters) return new Promise((resolve) => this.tokenWaiters.push(resolve));
    this.tokenWaiters = [];
    return new Promise((resolve) => {
      const dlg = $('token-dialog');
      const form = $('token-form');
      const input = $('token-input');
      $('token-error').hidden = !rejected;
      input.value = '';
      const done = (tok) => {
        form.removeEventListener('submit', onSubmit);
        dlg.removeEventListener('cancel', onCancel);
        if (dlg.open) dlg.close();
        const waiters = this.tokenWaiters;
        this.tokenWaiters = null;
        resolve(tok);
        for (const w of waiters) w(tok);
      };
      const onSubmit = (e) => {
        e.preventDefault();
        done(input.value.trim() || null);
      };
      const onCancel = () => done(null);
      form.addEventListener('submit', onSubmit);
      dlg.addEventListener('cancel', onCancel);
      dlg.showModal();
      input.focus();
    });
  }

  confirm(text) {
    return new Promise((resolve) => {
      const dlg = $('confirm-dialog');
      $('confirm-text').textContent = text;
      const form = $('confirm-form');
      const cancel = $('confirm-cancel');
      const done = (ok) => {
        form.removeEventListener('submit', onOK);
        cancel.removeEventListener('click', onCancel);
        dlg.removeEventListener('cancel', onCancel);
        if (dlg.open) dlg.close();
        resolve(ok);
      };
      const onOK = (e) => {
        e.preventDefault();
        done(true);
      };
      const onCancel = (e) => {
        if (e) e.preventDefault();
        done(false);
      };
      form.addEventListener('submit', onOK);
      cancel.addEventListener('click', onCancel);
      dlg.addEventListener('cancel', onCancel);
      dlg.showModal();
      cancel.focus();
    });
  }

  // ---- Sidebar ----

  async loadConversations(more) {
    try {
      const page = await this.api.listConversations(more ? this.nextCursor : null);
      const list = Array.isArray(page && page.conversations) ? page.conversations : [];
      this.conversations = more ? this.conversations.concat(list) : list;
      this.nextCursor = page && typeof page.nextCursor === 'string' && page.nextCursor ? page.nextCursor : null;
      this.renderSidebar();
    } catch (err) {
      this.showLoadError(err);
    }
  }

  renderSidebar() {
    const ul = clear($('conv-list'));
    const seen = new Set();
    for (const c of this.conversations) {
      if (!c || typeof c.id !== 'string' || seen.has(c.id)) continue;
      seen.add(c.id);
      const title = str(c.title) || 'New conversation';
      const current = c.id === this.currentId;
      const open = h('button', { type: 'button', class: 'conv-open', 'aria-current': current ? 'page' : null },
        h('span', { class: 'conv-name' }, title),
        h('span', { class: 'conv-date' }, formatDate(c.updatedAt || c.createdAt)));
      const del = h('button', { type: 'button', class: 'btn btn-icon conv-delete', 'aria-label': `Delete conversation “${title}”`, title: 'Delete' }, icon('trash'));
      open.addEventListener('click', () => {
        this.toggleSidebar(false);
        this.open(c.id, true);
      });
      del.addEventListener('click', () => this.remove(c.id, title, del));
      const li = h('li', { class: ['conv', current ? 'current' : ''], 'data-id': c.id }, open, del);
      ul.appendChild(li);
    }
    $('conv-empty').hidden = seen.size > 0;
    $('load-more').hidden = !this.nextCursor;
  }

  async remove(id, title, btn) {
    if (!(await this.confirm(`“${title}” and all its messages will be deleted. This cannot be undone.`))) {
      btn.focus();
      return;
    }
    try {
      await this.api.deleteConversation(id);
    } catch (err) {
      if (!(err instanceof APIError && err.status === 404)) {
        this.showLoadError(err);
        return;
      }
    }
    this.conversations = this.conversations.filter((c) => c.id !== id);
    if (id === this.currentId) this.newChat();
    this.renderSidebar();
    this.announce('Conversation deleted.');
    $('new-chat').focus();
  }

  // ---- Thread ----

  setTitle(title) {
    this.title = title || '';
    if (!$('bench').hidden) return;
    $('conv-title').textContent = title || 'Discover Chat';
    document.title = (title ? title + ' · ' : '') + 'Toolport';
  }

  /**
   * showBench switches between the tool bench and the conversation; focus
   * moves to the bench's heading when a person asked for it.
   */
  async showBench(open, focus) {
    $('bench').hidden = !open;
    $('thread').hidden = open;
    $('composer-wrap').hidden = open;
    $('bench-btn').setAttribute('aria-pressed', String(open));
    document.body.dataset.view = open ? 'bench' : 'chat';
    if (!open) {
      this.setTitle(this.title);
      return;
    }
    $('conv-title').textContent = 'Tools';
    document.title = 'Tools · Toolport';
    if (!this.bench) this.bench = new Bench(this.api, $('bench'), (text) => this.announce(text));
    if (focus) $('bench-title').focus();
    await this.bench.load();
  }

  newChat(push = true) {
    this.stop();
    this.showBench(false);
    this.currentId = null;
    this.messages = [];
    this.renderThread();
    this.setTitle('');
    if (push && location.search) history.pushState(null, '', location.pathname);
    this.renderSidebar();
    this.toggleSidebar(false);
    $('composer-input').focus();
  }

  async open(id, push) {
    this.stop();
    this.showLoadError(null);
    let conv;
    try {
      conv = await this.api.getConversation(id);
    } catch (err) {
      if (err instanceof APIError && err.status === 404) {
        this.showLoadError(new Error('That conversation no longer exists.'));
        this.newChat(push);
        return;
      }
      this.showLoadError(err);
      return;
    }
    this.showBench(false);
    this.currentId = id;
    this.messages = fromStored(conv && conv.messages);
    this.renderThread();
    this.setTitle(str(conv && conv.title));
    if (push) history.pushState(null, '', '?c=' + encodeURIComponent(id));
    this.renderSidebar();
    this.scrollToEnd();
    this.announce(`Opened ${str(conv && conv.title) || 'conversation'}.`);
  }

  renderThread() {
    const ol = clear($('messages'));
    this.views = this.messages.map((m) => new MessageView(m, this.nextUid()));
    for (const v of this.views) ol.appendChild(v.el);
    $('welcome').hidden = this.messages.length > 0;
  }

  addMessage(msg) {
    this.messages.push(msg);
    const v = new MessageView(msg, this.nextUid());
    this.views.push(v);
    $('messages').appendChild(v.el);
    $('welcome').hidden = true;
    return v;
  }

  nearBottom() {
    const t = $('thread');
    return t.scrollHeight - t.scrollTop - t.clientHeight < 120;
  }

  scrollToEnd() {
    const t = $('thread');
    t.scrollTop = t.scrollHeight;
  }

  updateComposer() {
    const streaming = this.stream !== null;
    $('stop-btn').hidden = !streaming;
    $('send-btn').hidden = streaming;
    const input = $('composer-input');
    input.disabled = this.modelMissing();
    input.placeholder = this.modelMissing() ? 'Configure a model to start chatting' : 'Ask anything…';
    $('send-btn').disabled = this.modelMissing();
    // Without a model the composer gives way to a way into the tool bench.
    $('composer').hidden = this.modelMissing();
    $('composer-hint').hidden = this.modelMissing();
    $('no-model-note').hidden = !this.modelMissing();
    document.body.dataset.streaming = String(streaming);
  }

  // ---- Sending ----

  async send() {
    const input = $('composer-input');
    const text = input.value.trim();
    if (!text || this.stream || this.modelMissing()) return;
    const controller = new AbortController();
    const user = newMessage('user');
    user.parts.push({ kind: 'text', text });
    const msg = newMessage('assistant');
    msg.streaming = true;
    this.stream = { controller, msg, view: null };
    input.value = '';
    this.autosize();
    this.addMessage(user);
    const view = this.addMessage(msg);
    this.stream.view = view;
    this.updateComposer();
    this.scrollToEnd();
    this.announce('Sending…');
    let incomplete = false;
    try {
      if (!this.currentId) {
        const conv = await this.api.createConversation();
        this.currentId = conv.id;
        history.pushState(null, '', '?c=' + encodeURIComponent(conv.id));
        this.setTitle(text.slice(0, 80));
        // Show it in the sidebar now; the server names it after this message.
        this.conversations.unshift({ id: conv.id, title: text.slice(0, 80), createdAt: conv.createdAt, updatedAt: conv.createdAt });
        this.renderSidebar();
      }
      const res = await this.api.sendMessage(this.currentId, text, controller.signal);
      this.announce('The assistant is answering.');
      const conv = this.currentId;
      // A dropped connection is resumed by followTurn (any replica can
      // answer); the answer keeps being written meanwhile.
      const ended = await followTurn(res, (ev) => {
        const follow = this.nearBottom();
        const changed = applyEvent(msg, ev);
        if (ev.type === 'tool_call_start' && changed) this.announce(`Running ${toolLabel(changed.name)}…`);
        if (ev.type === 'tool_call_end' && changed) this.announce(`${toolLabel(changed.name)} finished.`);
        if (ev.type === 'tool_call_error' && changed) this.announce(`${toolLabel(changed.name)} failed.`);
        if (ev.type === 'message_end' || ev.type === 'error') view.sync();
        else view.schedule(changed);
        if (follow) this.scrollToEnd();
      }, {
        signal: controller.signal,
        reconnect: (lastId) => this.api.fetch('/api/conversations/' + encodeURIComponent(conv) + '/stream',
          { headers: { Accept: 'text/event-stream', 'Last-Event-ID': lastId }, signal: controller.signal }),
        onRetry: () => this.announce('Connection lost; reconnecting…'),
      });
      if (!ended) incomplete = true;
    } catch (err) {
      if (err && err.name === 'AbortError') {
        incomplete = true;
      } else {
        msg.errors.push({ code: err instanceof APIError ? err.code : '', message: err && err.message ? err.message : String(err) });
        incomplete = msg.parts.length > 0;
      }
    } finally {
      if (msg.streaming || incomplete) finish(msg, incomplete || msg.incomplete);
      view.sync();
      this.stream = null;
      this.updateComposer();
      this.announce(msg.incomplete ? 'Stopped.' : msg.errors.length ? 'The answer failed.' : 'Answer complete.');
      this.loadConversations(false);
      if (document.activeElement === document.body || document.activeElement === $('stop-btn')) input.focus();
    }
  }

  stop() {
    if (!this.stream) return;
    this.stream.controller.abort();
    // The turn runs on the server apart from this connection: ask it to
    // stop (whichever replica runs it). An older server without the
    // endpoint stops when the connection closes.
    if (this.currentId) {
      this.api.fetch('/api/conversations/' + encodeURIComponent(this.currentId) + '/stop',
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }).catch(() => {});
    }
  }
}

function formatDate(s) {
  if (typeof s !== 'string') return '';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return '';
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: d.getFullYear() === now.getFullYear() ? undefined : 'numeric' });
}

new App().start();
