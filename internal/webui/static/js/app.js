// Discover Chat: the page's controller. It wires the sidebar of past
// conversations, the message thread and the composer to the chat API.

import { Client, APIError, takeTokenFromFragment } from './api.js';
import { followTurn } from './sse.js';
import { newMessage, applyEvent, finish, fromStored, awaitingParts } from './model.js';
import { renderMarkdown, setDirections, scrollRegion } from './markdown.js';
import { ToolCard, toolLabel } from './cards.js';
import { Bench } from './bench.js';
import { Settings } from './settings.js';
import { h, clear, icon, str, num, arr, obj } from './dom.js';
import { t, localize, formatNumber } from './i18n.js';
import { copyButton, decorateMarkdown, dayGroup, queryWords, markWords } from './daily.js';

const $ = (id) => document.getElementById(id);

/** MessageView shows one view-model message and follows its updates. */
class MessageView {
  constructor(msg, uid, app) {
    this.msg = msg;
    this.uid = uid;
    this.app = app;
    this.editing = null; // the edit form while it is open
    this.views = new Map(); // part → {el, card?, rendered?}
    this.body = h('div', { class: 'msg-body' });
    this.foot = h('div', { class: 'msg-foot' });
    if (msg.role === 'user') {
      this.bubble = h('div', { class: 'bubble' }, this.body);
      this.editBtn = h('button', { type: 'button', class: 'btn btn-ghost btn-small msg-edit', title: t('editLabel') }, t('edit'));
      this.editBtn.addEventListener('click', () => this.openEdit());
      this.el = h('li', { class: 'msg msg-user' }, h('div', { class: 'msg-user-col' }, this.bubble, h('div', { class: 'msg-actions' }, this.editBtn)));
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
    if (changed === undefined && this.frame) {
      // Everything is rendered now: the frame scheduled for it is not needed.
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    for (const part of this.msg.parts) {
      let v = this.views.get(part);
      if (!v) {
        if (part.kind === 'text') {
          v = { el: h('div', { class: 'md', dir: 'auto' }), rendered: -1 };
        } else {
          const card = new ToolCard(part, `${this.uid}-${this.views.size}`, (p, decision) => this.app.decide(this, p, decision));
          v = { el: card.el, card };
        }
        this.views.set(part, v);
        this.body.appendChild(v.el);
      } else if (part.kind === 'tool' && (changed === part || changed === undefined)) {
        v.card.update(part);
      }
      if (part.kind === 'text' && v.rendered !== part.text.length) {
        if (this.msg.role === 'user') {
          clear(v.el).appendChild(h('p', { class: 'plain', dir: 'auto' }, part.text));
        } else {
          clear(v.el).appendChild(markScrollers(decorateMarkdown(setDirections(renderMarkdown(part.text)), (s) => this.app.announce(s))));
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
    if (this.msg.role === 'user') {
      this.el.dataset.messageId = this.msg.id;
      this.editBtn.hidden = !this.msg.id || this.app.stream !== null || this.app.modelMissing() || this.editing !== null;
      return;
    }
    clear(this.foot);
    for (const e of this.msg.errors) {
      this.foot.appendChild(h('div', { class: 'inline-error', role: 'alert' },
        icon('alert'), h('span', { dir: 'auto' }, e.message), e.code ? h('code', null, e.code) : null));
    }
    if (this.msg.streaming) {
      const running = this.msg.parts.some((p) => p.kind === 'tool' && p.status === 'executing');
      if (!running) this.foot.appendChild(h('div', { class: 'typing', 'aria-hidden': 'true' }, h('span'), h('span'), h('span')));
      return;
    }
    if (this.msg.incomplete) {
      this.foot.appendChild(h('div', { class: 'incomplete-note' }, icon('stop', 'icon icon-small'), t('incomplete')));
    } else if (this.msg.parts.length === 0 && this.msg.errors.length === 0) {
      this.foot.appendChild(h('div', { class: 'muted' }, t('noAnswer')));
    }
    const meta = h('div', { class: 'msg-meta' });
    const u = this.msg.usage;
    if (u && (u.inputTokens > 0 || u.outputTokens > 0)) {
      const vars = { input: formatNumber(u.inputTokens), output: formatNumber(u.outputTokens) };
      meta.appendChild(h('span', { class: 'msg-usage', title: t('tokensTitle', vars) }, t('tokens', vars)));
    }
    const answer = this.msg.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('\n\n');
    if (answer.trim()) meta.appendChild(copyButton('msg-copy', t('copyAnswer'), () => answer, (s) => this.app.announce(s)));
    if (this.app.isLastAnswer(this) && !this.app.modelMissing() && this.app.stream === null) {
      const b = h('button', { type: 'button', class: 'btn btn-ghost btn-small msg-regenerate', title: t('regenerateLabel') }, t('regenerate'));
      b.addEventListener('click', () => this.app.regenerate());
      meta.appendChild(b);
    }
    if (meta.childNodes.length) this.foot.appendChild(meta);
  }

  /** openEdit replaces the user's bubble with a form to edit and resend it. */
  openEdit() {
    if (this.editing || this.app.stream) return;
    const text = this.msg.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
    const id = `edit-${this.uid}`;
    const area = h('textarea', { class: 'field edit-input', id, dir: 'auto', rows: 3 });
    area.value = text;
    const cancel = h('button', { type: 'button', class: 'btn btn-ghost btn-small' }, t('cancel'));
    const form = h('form', { class: 'edit-form' },
      h('label', { class: 'visually-hidden', for: id }, t('editField')),
      area,
      h('p', { class: 'edit-note muted' }, t('editNote')),
      h('div', { class: 'edit-actions' }, cancel, h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, t('saveAndSend'))));
    const close = () => {
      form.remove();
      this.bubble.hidden = false;
      this.editing = null;
      this.renderFoot();
      this.editBtn.focus();
    };
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const value = area.value.trim();
      if (!value) return;
      this.editing = null;
      this.app.editAndResend(this, value);
    });
    cancel.addEventListener('click', close);
    area.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        close();
      } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    this.editing = form;
    this.bubble.hidden = true;
    this.bubble.after(form);
    this.renderFoot();
    area.focus();
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
    this.query = ''; // the sidebar's search
    this.searchTimer = 0;
    this.model = ''; // the current conversation's chosen model; '' is the default
    this.listSeq = 0;
  }

  nextUid() {
    this.uid += 1;
    return this.uid;
  }

  async start() {
    takeTokenFromFragment();
    localize();
    this.bind();
    this.placeBanners();
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
    $('conv-search').addEventListener('input', () => {
      followText($('conv-search'));
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.search($('conv-search').value), 250);
    });
    $('rename-btn').addEventListener('click', () => this.rename());
    $('export-md').addEventListener('click', () => this.exportAs('markdown'));
    $('export-json').addEventListener('click', () => this.exportAs('json'));
    $('model-picker').addEventListener('change', () => this.pickModel($('model-picker').value));
    $('menu-btn').appendChild(icon('menu'));
    $('send-btn').appendChild(icon('send'));
    $('menu-btn').addEventListener('click', () => this.toggleSidebar());
    this.bindTopbarMenu();
    $('no-model-dismiss').appendChild(icon('close', 'icon icon-small'));
    $('no-model-dismiss').addEventListener('click', () => this.dismissNoModel());
    $('bench-btn').appendChild(icon('wrench', 'icon icon-small'));
    $('bench-btn').addEventListener('click', () => this.showBench($('bench').hidden, true));
    $('open-bench').addEventListener('click', () => this.showBench(true, true));
    $('settings-btn').addEventListener('click', () => (this.settings ||= new Settings(this.api, (t) => this.announce(t), () => this.loadInfo())).open());
    $('backdrop').addEventListener('click', () => this.toggleSidebar(false));
    $('jump-latest').prepend(icon('down', 'icon icon-small'));
    $('jump-latest').addEventListener('click', () => {
      this.scrollToEnd();
      $('composer-input').focus();
    });
    $('thread').addEventListener('scroll', () => this.updateJump(), { passive: true });
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

  /**
   * bindTopbarMenu wires the phone's header menu: on a narrow screen the
   * conversation's actions, the model and the tool bench and settings
   * buttons fold behind one button, so the header keeps one row and its
   * title most of it. It closes on Escape (focus back on its button), on a
   * click outside it, and once one of its buttons has been used.
   */
  bindTopbarMenu() {
    const btn = $('more-btn');
    const panel = $('topbar-actions');
    btn.appendChild(icon('more'));
    btn.addEventListener('click', () => this.toggleTopbarMenu());
    panel.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest('button')) this.toggleTopbarMenu(false);
    });
    panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.topbarMenuOpen()) {
        e.preventDefault();
        e.stopPropagation();
        this.toggleTopbarMenu(false);
        btn.focus();
      }
    });
    btn.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.topbarMenuOpen()) {
        e.preventDefault();
        this.toggleTopbarMenu(false);
      }
    });
    document.addEventListener('pointerdown', (e) => {
      if (this.topbarMenuOpen() && e.target instanceof Node && !panel.contains(e.target) && !btn.contains(e.target)) this.toggleTopbarMenu(false);
    });
    panel.addEventListener('focusout', (e) => {
      if (this.topbarMenuOpen() && e.relatedTarget instanceof Node && !panel.contains(e.relatedTarget) && e.relatedTarget !== btn) this.toggleTopbarMenu(false);
    });
  }

  topbarMenuOpen() {
    return $('more-btn').getAttribute('aria-expanded') === 'true';
  }

  toggleTopbarMenu(force) {
    const open = force === undefined ? !this.topbarMenuOpen() : force;
    $('more-btn').setAttribute('aria-expanded', String(open));
    document.querySelector('.topbar').classList.toggle('menu-open', open);
  }

  /**
   * noModelKey is what a dismissal of the no-model banner is remembered
   * against: the server's help, so that a changed state (a model set, then
   * gone again; other advice) shows the banner again.
   */
  noModelKey() {
    return 'no-model:' + str(this.info && this.info.modelHelp);
  }

  /** dismissNoModel hides the no-model banner and remembers it (localStorage). */
  dismissNoModel() {
    $('no-model-banner').hidden = true;
    storeSet(NO_MODEL_DISMISSED, this.noModelKey());
    this.announce(t('dismissNotice'));
    // The keyboard goes on to what the banner pointed at: the bench.
    const next = !$('bench').hidden ? $('bench-title') : $('open-bench');
    if (next && next.checkVisibility()) next.focus();
  }

  /**
   * placeBanners puts the page's banners at the top of the view that is
   * shown (the bench or the thread), inside its scrolling: they scroll away
   * with the content instead of holding a share of a phone's screen.
   */
  placeBanners() {
    const view = $('bench').hidden ? $('thread') : $('bench');
    for (const id of ['load-error', 'no-model-banner']) {
      const b = $(id);
      if (b.parentElement !== view || view.firstElementChild !== b) view.prepend(b);
    }
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
    followText(input);
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
    clear(el).append(h('strong', null, t('somethingWrong')), h('span', { dir: 'auto' }, err.message || String(err)));
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
        $('no-model-help').textContent = str(info.modelHelp) || t('noModelHelpDefault');
        $('no-model-banner').hidden = storeGet(NO_MODEL_DISMISSED) === this.noModelKey();
        // The suggestions fill the composer, which is hidden without a model.
        $('suggestions').hidden = true;
      } else if (info && info.modelConfigured === true) {
        $('no-model-banner').hidden = true; // a model set from Settings, without a reload
        storeSet(NO_MODEL_DISMISSED, null); // losing it again is news: the banner shows
      }
      this.renderModelPicker();
      $('server-info').textContent = [info && str(info.version) ? t('version', { version: info.version }) : '', info && typeof info.tools === 'number' ? toolsText(info) : ''].filter(Boolean).join(' · ');
      this.updateComposer();
    } catch (err) {
      this.showLoadError(err);
    }
  }

  modelMissing() {
    return this.info !== null && this.info.modelConfigured === false;
  }

  /** models lists the models a conversation can choose, the default first. */
  models() {
    const list = this.info && Array.isArray(this.info.models) ? this.info.models : [];
    return list.filter((m) => m && typeof m.name === 'string' && m.name);
  }

  /** renderModelPicker shows the picker when there is a choice to make. */
  renderModelPicker() {
    const models = this.models();
    const sel = $('model-picker');
    const many = models.length > 1;
    sel.hidden = !many;
    $('model-chip').hidden = many || $('model-chip').textContent === '';
    if (!many) return;
    clear(sel);
    models.forEach((m, i) => {
      sel.appendChild(h('option', { value: i === 0 ? '' : m.name }, i === 0 ? t('modelDefault', { name: m.name }) : m.name));
    });
    sel.value = models.some((m, i) => i > 0 && m.name === this.model) ? this.model : '';
  }

  /** pickModel remembers a model choice for the current (or next) conversation. */
  async pickModel(name) {
    this.model = name;
    this.renderUsage();
    if (!this.currentId) return;
    try {
      await this.api.updateConversation(this.currentId, { model: name });
    } catch (err) {
      this.showLoadError(err);
    }
  }

  /** modelInfo is the entry of /api/info's models for name ('' is the default). */
  modelInfo(name) {
    const models = this.models();
    return models.find((m) => m.name === name) || models[0] || null;
  }

  /**
   * renderUsage shows the conversation's token total and, when the model's
   * limit is known, how full its context window was after the last answer.
   */
  renderUsage() {
    let input = 0;
    let output = 0;
    let any = false;
    let last = null;
    for (const m of this.messages) {
      if (m.role !== 'assistant' || !m.usage) continue;
      input += m.usage.inputTokens;
      output += m.usage.outputTokens;
      any = true;
      last = m;
    }
    const chip = $('conv-usage');
    chip.hidden = !any;
    if (any) {
      chip.textContent = t('convTokens', { total: formatNumber(input + output) });
      chip.title = t('convTokensTitle', { input: formatNumber(input), output: formatNumber(output) });
    }
    const meter = $('context-meter');
    const info = last ? this.modelInfo(last.model || this.model) : null;
    const limit = info ? num(info.contextWindow) : null;
    const used = last && last.usage ? last.usage.contextTokens : 0;
    meter.hidden = !(limit && used);
    if (limit && used) {
      const pct = Math.min(100, Math.round((used / limit) * 1000) / 10);
      meter.max = limit;
      meter.value = Math.min(used, limit);
      const label = t('contextUsed', { pct: formatNumber(pct), used: formatNumber(used), limit: formatNumber(limit) });
      meter.setAttribute('aria-label', label);
      meter.title = label;
      meter.textContent = label;
    }
  }

  /** isLastAnswer reports whether view is the thread's last message and an answer. */
  isLastAnswer(view) {
    return this.views.length > 0 && this.views[this.views.length - 1] === view && view.msg.role === 'assistant' &&
      this.messages.some((m) => m.role === 'user');
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

  /** search filters the sidebar by a query over titles and message text. */
  async search(q) {
    this.query = q.trim().slice(0, 256);
    await this.loadConversations(false);
    if (this.query) this.announce(t('searchResults', { n: this.conversations.length + (this.nextCursor ? '+' : '') }));
  }

  async loadConversations(more) {
    const seq = ++this.listSeq;
    try {
      const page = await this.api.listConversations(more ? this.nextCursor : null, 20, this.query);
      if (seq !== this.listSeq) return; // a newer search answered first
      const list = Array.isArray(page && page.conversations) ? page.conversations : [];
      this.conversations = more ? this.conversations.concat(list) : list;
      this.nextCursor = page && typeof page.nextCursor === 'string' && page.nextCursor ? page.nextCursor : null;
      this.renderSidebar();
    } catch (err) {
      if (seq !== this.listSeq) return;
      // A query the server cannot search (no word in it, too long) matches
      // nothing; it is not a page error.
      if (this.query && err instanceof APIError && err.status === 400) {
        this.conversations = [];
        this.nextCursor = null;
        this.renderSidebar();
        return;
      }
      this.showLoadError(err);
    }
  }

  renderSidebar() {
    const ul = clear($('conv-list'));
    const seen = new Set();
    const words = queryWords(this.query);
    let group = '';
    for (const c of this.conversations) {
      if (!c || typeof c.id !== 'string' || seen.has(c.id)) continue;
      seen.add(c.id);
      // The list is newest first: a heading where the day's group changes.
      const g = dayGroup(c.updatedAt || c.createdAt);
      if (g !== group) {
        group = g;
        ul.appendChild(h('li', { class: 'conv-group', 'data-group': g }, h('h2', { class: 'conv-group-title' }, t({ today: 'groupToday', yesterday: 'groupYesterday' }[g] || 'groupOlder'))));
      }
      const title = str(c.title) || t('newConversation');
      const current = c.id === this.currentId;
      if (current && c.title && c.title !== this.title) this.setTitle(c.title); // the model named it
      const snippet = str(c.snippet);
      const open = h('button', { type: 'button', class: 'conv-open', 'aria-current': current ? 'page' : null },
        h('span', { class: 'conv-name', dir: 'auto' }, title),
        h('span', { class: 'conv-date' }, formatDate(c.updatedAt || c.createdAt)),
        snippet ? markWords('conv-snippet', snippet, words) : null);
      const del = h('button', { type: 'button', class: 'btn btn-icon conv-delete', 'aria-label': t('deleteConv', { title }), title: t('delete') }, icon('trash'));
      open.addEventListener('click', () => {
        this.toggleSidebar(false);
        this.open(c.id, true);
      });
      del.addEventListener('click', () => this.remove(c.id, title, del));
      const li = h('li', { class: ['conv', current ? 'current' : ''], 'data-id': c.id }, open, del);
      ul.appendChild(li);
    }
    $('conv-empty').hidden = seen.size > 0;
    $('conv-empty').textContent = this.query ? t('noMatches') : t('noConversations');
    $('load-more').hidden = !this.nextCursor;
  }

  async remove(id, title, btn) {
    if (!(await this.confirm(t('deleteConfirm', { title })))) {
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
    this.announce(t('deleted'));
    $('new-chat').focus();
  }

  // ---- Thread ----

  setTitle(title) {
    this.title = title || '';
    $('conv-actions').hidden = !this.currentId;
    if (!$('bench').hidden) return;
    $('conv-title').textContent = title || t('appTitle');
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
    this.updateJump(); // "Jump to latest" belongs to the thread
    if (!open) {
      this.placeBanners();
      this.setTitle(this.title);
      return;
    }
    $('conv-title').textContent = t('tools');
    document.title = t('tools') + ' · Toolport';
    if (!this.bench) this.bench = new Bench(this.api, $('bench'), (text) => this.announce(text));
    this.placeBanners();
    if (focus) $('bench-title').focus();
    await this.bench.load();
  }

  newChat(push = true) {
    this.stop();
    this.showBench(false);
    this.currentId = null;
    this.messages = [];
    this.model = '';
    this.renderModelPicker();
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
    let pending = [];
    try {
      // The calls waiting for a decision come back as cards: the stored
      // message has their tool_use blocks, the server knows which still wait.
      [conv, pending] = await Promise.all([this.api.getConversation(id), this.pendingApprovals(id)]);
    } catch (err) {
      if (err instanceof APIError && err.status === 404) {
        this.showLoadError(new Error(t('gone')));
        this.newChat(push);
        return;
      }
      this.showLoadError(err);
      return;
    }
    this.showBench(false);
    this.currentId = id;
    this.model = str(conv && conv.model);
    this.renderModelPicker();
    this.messages = fromStored(conv && conv.messages);
    this.applyPending(pending);
    this.renderThread();
    this.setTitle(str(conv && conv.title));
    if (push) history.pushState(null, '', '?c=' + encodeURIComponent(id));
    this.renderSidebar();
    this.scrollToEnd();
    this.announce(t('opened', { title: str(conv && conv.title) || t('conversation') }));
  }

  /** pendingApprovals resolves to the waiting calls' events; none if the server cannot say. */
  async pendingApprovals(id) {
    try {
      const r = await this.api.approvals(id);
      return arr(obj(r) && r.approvals).map(obj).filter(Boolean).slice(0, 64);
    } catch (err) {
      // A conversation that is gone fails getConversation, which says so;
      // a server without approvals has none waiting.
      if (err instanceof APIError) return [];
      throw err;
    }
  }

  /** applyPending shows each waiting call in the assistant message that made it. */
  applyPending(pending) {
    for (const ev of pending) {
      const id = str(ev.toolUseId);
      let msg = this.messages.findLast((m) => m.role === 'assistant' && m.parts.some((p) => p.kind === 'tool' && p.id === id));
      if (!msg) msg = this.messages.findLast((m) => m.role === 'assistant');
      if (msg) applyEvent(msg, { ...ev, type: 'approval_required' });
    }
  }

  /**
   * decide records the person's decision on a waiting call; once every
   * waiting call of the message has one, they are sent together and the
   * resumed turn streams into the same message.
   */
  async decide(view, part, decision) {
    if (this.stream || !this.currentId || !part.approval || part.approval.decision) return;
    part.approval.decision = decision;
    view.sync(part);
    const waiting = awaitingParts(view.msg);
    if (waiting.some((p) => !p.approval.decision)) {
      this.announce(t('approvalMore'));
      return;
    }
    const decisions = waiting.map((p) => ({ toolUseId: p.id, decision: p.approval.decision }));
    const i = this.views.indexOf(view);
    let u = i - 1;
    while (u >= 0 && this.messages[u].role !== 'user') u -= 1;
    const user = u >= 0 ? this.messages[u] : newMessage('user');
    const conv = this.currentId;
    await this.streamTurn(user, view, (signal) => this.api.approve(conv, decisions, signal), true);
  }

  renderThread() {
    const ol = clear($('messages'));
    this.views = [];
    for (const m of this.messages) this.views.push(new MessageView(m, this.nextUid(), this));
    for (const v of this.views) ol.appendChild(v.el);
    this.refreshFoots();
    $('welcome').hidden = this.messages.length > 0;
    this.renderUsage();
    this.updateJump();
  }

  /** refreshFoots re-renders every message's actions (which depend on the thread). */
  refreshFoots() {
    for (const v of this.views) v.renderFoot();
  }

  addMessage(msg) {
    this.messages.push(msg);
    const v = new MessageView(msg, this.nextUid(), this);
    this.views.push(v);
    $('messages').appendChild(v.el);
    $('welcome').hidden = true;
    return v;
  }

  /** truncateFrom removes message i and all after it from the thread. */
  truncateFrom(i) {
    for (const v of this.views.slice(i)) v.el.remove();
    this.messages = this.messages.slice(0, i);
    this.views = this.views.slice(0, i);
  }

  nearBottom() {
    const t = $('thread');
    return t.scrollHeight - t.scrollTop - t.clientHeight < 120;
  }

  scrollToEnd() {
    const t = $('thread');
    t.scrollTop = t.scrollHeight;
    this.updateJump();
  }

  /** updateJump shows "Jump to latest" while the thread is scrolled up from its end. */
  updateJump() {
    const jump = $('jump-latest');
    const hide = $('thread').hidden || this.messages.length === 0 || this.nearBottom();
    // Hiding the focused button would drop the focus to the page's body;
    // the latest message is reached, so the focus goes where the button
    // leads: the message box.
    const hadFocus = hide && document.activeElement === jump;
    jump.hidden = hide;
    if (hadFocus) $('composer-input').focus();
  }

  updateComposer() {
    const streaming = this.stream !== null;
    $('stop-btn').hidden = !streaming;
    $('send-btn').hidden = streaming;
    const input = $('composer-input');
    input.disabled = this.modelMissing();
    input.placeholder = this.modelMissing() ? t('configureModel') : t('askAnything');
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
    input.value = '';
    this.autosize();
    const user = newMessage('user');
    user.parts.push({ kind: 'text', text });
    this.addMessage(user);
    await this.runTurn(user, async (signal) => {
      if (!this.currentId) {
        const conv = await this.api.createConversation();
        this.currentId = conv.id;
        history.pushState(null, '', '?c=' + encodeURIComponent(conv.id));
        this.setTitle(text.slice(0, 80));
        // Show it in the sidebar now; the server names it after this message.
        this.conversations.unshift({ id: conv.id, title: text.slice(0, 80), createdAt: conv.createdAt, updatedAt: conv.createdAt });
        this.renderSidebar();
        // A model picked before the conversation existed applies to it.
        if (this.model) await this.api.updateConversation(conv.id, { model: this.model });
      }
      return this.api.sendMessage(this.currentId, text, signal);
    });
  }

  /** regenerate answers the last user message again, replacing the last answer. */
  async regenerate() {
    if (this.stream || !this.currentId || this.modelMissing()) return;
    let i = this.messages.length - 1;
    while (i >= 0 && this.messages[i].role !== 'user') i -= 1;
    if (i < 0) return;
    this.truncateFrom(i + 1);
    await this.runTurn(this.messages[i], (signal) => this.api.regenerate(this.currentId, signal));
  }

  /** editAndResend replaces view's user message, and all after it, with text. */
  async editAndResend(view, text) {
    const i = this.views.indexOf(view);
    if (i < 0 || this.stream || !view.msg.id) return;
    const oldID = view.msg.id;
    this.truncateFrom(i);
    const user = newMessage('user');
    user.parts.push({ kind: 'text', text });
    this.addMessage(user);
    await this.runTurn(user, (signal) => this.api.editMessage(this.currentId, oldID, text, signal));
  }

  /**
   * runTurn streams an answer to user (already shown) from the response
   * start(signal) resolves to: a new message, a regenerate or an edit.
   */
  async runTurn(user, start) {
    const msg = newMessage('assistant');
    msg.model = this.model || (this.models()[0] ? this.models()[0].name : '');
    await this.streamTurn(user, this.addMessage(msg), start, false);
  }

  /**
   * streamTurn streams the events of start(signal)'s response into view's
   * assistant message: a new turn's, or (resumed) the message whose calls
   * waited for approval, which the resumed turn goes on writing.
   */
  async streamTurn(user, view, start, resumed) {
    const controller = new AbortController();
    const msg = view.msg;
    msg.streaming = true;
    msg.incomplete = false;
    // A message waiting for decisions has no error of its own, only one of
    // a decision refused before: the new attempt replaces it.
    if (resumed) msg.errors = [];
    this.stream = { controller, msg, view };
    view.sync();
    this.updateComposer();
    this.refreshFoots();
    this.scrollToEnd();
    this.announce(t('sending'));
    let incomplete = false;
    try {
      const res = await start(controller.signal);
      this.announce(t('answering'));
      const conv = this.currentId;
      // A dropped connection is resumed by followTurn (any replica can
      // answer); the answer keeps being written meanwhile.
      const ended = await followTurn(res, (ev) => {
        const follow = this.nearBottom();
        const changed = applyEvent(msg, ev);
        if (ev.type === 'message_start' && typeof ev.userMessageId === 'string' && ev.userMessageId) user.id = ev.userMessageId;
        if (ev.type === 'tool_call_start' && changed) this.announce(t('running', { tool: toolLabel(changed.name) }));
        if (ev.type === 'tool_call_end' && changed) this.announce(t('finished', { tool: toolLabel(changed.name) }));
        if (ev.type === 'tool_call_error' && changed) this.announce(t('failed', { tool: toolLabel(changed.name) }));
        if (ev.type === 'approval_required' && changed) this.announce(t('approvalNeeded', { tool: changed.approval.title }));
        if (ev.type === 'message_end' || ev.type === 'error') view.sync();
        else view.schedule(changed);
        if (follow) this.scrollToEnd();
      }, {
        signal: controller.signal,
        reconnect: (lastId) => this.api.fetch('/api/conversations/' + encodeURIComponent(conv) + '/stream',
          { headers: { Accept: 'text/event-stream', 'Last-Event-ID': lastId }, signal: controller.signal }),
        onRetry: () => this.announce(t('reconnecting')),
      });
      if (!ended) incomplete = true;
    } catch (err) {
      if (err && err.name === 'AbortError') {
        incomplete = true;
      } else {
        msg.errors.push({ code: err instanceof APIError ? err.code : '', message: err && err.message ? err.message : String(err) });
        // A resumption refused before it began (409, 400) left the message
        // as it was: its calls still wait, and may be decided again.
        incomplete = msg.parts.length > 0 && !resumed;
      }
    } finally {
      for (const p of awaitingParts(msg)) p.approval.decision = '';
      if (msg.streaming || incomplete) finish(msg, incomplete || msg.incomplete);
      this.stream = null;
      view.sync();
      this.refreshFoots();
      this.renderUsage();
      this.updateComposer();
      const waiting = awaitingParts(msg);
      this.announce(msg.incomplete ? t('stopped') : msg.errors.length ? t('answerFailed') : waiting.length ? t('approvalWaiting') : t('answerComplete'));
      this.loadConversations(false);
      const input = $('composer-input');
      const idle = document.activeElement === document.body || document.activeElement === $('stop-btn') || !document.activeElement;
      // The answer cannot go on without the person's decision: the keyboard
      // goes to the first one to take (from the message box too).
      const first = waiting.length ? view.views.get(waiting[0]) : null;
      const btn = first && first.card.approvalEl ? first.card.approvalEl.querySelector('.approval-btn:not([disabled])') : null;
      if (btn && (idle || document.activeElement === input)) btn.focus();
      else if (idle) input.focus();
    }
  }

  /** rename asks for a new title and saves it. */
  async rename() {
    if (!this.currentId) return;
    const dlg = $('rename-dialog');
    const input = $('rename-input');
    const err = $('rename-error');
    input.value = this.title;
    err.hidden = true;
    const title = await new Promise((resolve) => {
      const form = $('rename-form');
      const cancel = $('rename-cancel');
      const done = (v) => {
        form.removeEventListener('submit', onOK);
        cancel.removeEventListener('click', onCancel);
        dlg.removeEventListener('cancel', onCancel);
        if (dlg.open) dlg.close();
        resolve(v);
      };
      const onOK = (e) => {
        e.preventDefault();
        const v = input.value.trim();
        if (v) done(v);
      };
      const onCancel = (e) => {
        if (e) e.preventDefault();
        done(null);
      };
      form.addEventListener('submit', onOK);
      cancel.addEventListener('click', onCancel);
      dlg.addEventListener('cancel', onCancel);
      dlg.showModal();
      input.select();
    });
    $('rename-btn').focus();
    if (!title) return;
    try {
      const c = await this.api.updateConversation(this.currentId, { title });
      this.setTitle(str(c && c.title) || title);
      const entry = this.conversations.find((x) => x.id === this.currentId);
      if (entry) entry.title = this.title;
      this.renderSidebar();
      this.announce(t('renamed'));
    } catch (e) {
      this.showLoadError(e);
    }
  }

  /** exportAs downloads the conversation as Markdown or JSON. */
  async exportAs(format) {
    if (!this.currentId) return;
    try {
      const { blob, filename } = await this.api.exportConversation(this.currentId, format);
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: filename, hidden: true });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      this.announce(t('exported'));
    } catch (e) {
      this.showLoadError(e);
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

/** toolsText counts the server's tools and, when the model is offered
 * fewer (the others lack credentials; the bench marks them), those. */
function toolsText(info) {
  const offered = Array.isArray(info.offeredTools) ? info.offeredTools.length : info.tools;
  return offered === info.tools ? t('toolCount', { n: info.tools }) : t('toolsOffered', { n: info.tools, offered });
}

/** NO_MODEL_DISMISSED is the localStorage key of the dismissed no-model banner. */
const NO_MODEL_DISMISSED = 'toolport.noModelDismissed';

// storeGet and storeSet use localStorage, which a browser may refuse (a
// private window, storage off): the banner then just shows again.
function storeGet(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function storeSet(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Not remembered; see storeGet.
  }
}

/**
 * markScrollers names the code blocks and tables of a rendered answer as
 * regions the keyboard can scroll when they are wider than the thread.
 */
function markScrollers(root) {
  for (const pre of root.querySelectorAll('pre.md-code')) {
    const lang = pre.closest('.code-block')?.querySelector('.code-lang')?.textContent || t('codeLabel');
    scrollRegion(pre, t('codeRegion', { lang }));
  }
  for (const div of root.querySelectorAll('.md-table')) scrollRegion(div, t('tableScrolls'));
  return root;
}

/**
 * followText gives a text field its direction from what is typed in it
 * (dir="auto"), and the page's direction while it is empty, so that a
 * placeholder reads the page's way (dir="auto" alone would make an empty
 * field left to right).
 */
function followText(field) {
  if (field.value.trim()) field.setAttribute('dir', 'auto');
  else field.removeAttribute('dir');
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
