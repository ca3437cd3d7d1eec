// The setup part of the Settings panel: model connections, search keys,
// the CKAN portal, the TIDAL client id and attached MCP servers, changed
// through /api/settings (which answers only on loopback or with the
// server's token). Keys go to the server and never come back: the server
// shows each as set, masked; an empty key field leaves the stored key as it
// is. Every change takes effect on the server at once, without a restart.

import { h, clear, str, link, safeURL } from './dom.js';
import { t } from './i18n.js';

const KEY_LABEL = {
  brave_api_key: 'setupBraveKey',
  google_api_key: 'setupGoogleKey',
  google_engine_id: 'setupGoogleEngine',
  searxng_url: 'setupSearxng',
  ckan_base_url: 'setupCkan',
  tidal_client_id: 'setupTidal',
};

// While a server waits for the person's authorization (in another tab, at
// its authorization server), the view asks the server again: at once when
// the page is shown or focused again, and every AUTH_POLL_MS while Settings
// is open, at most AUTH_POLL_MAX times (ten minutes; reopening Settings
// starts again).
const AUTH_POLL_MS = 2000;
const AUTH_POLL_MAX = 300;

/** awaitsAuth reports whether a server waits for the person's authorization. */
function awaitsAuth(s) {
  return !!(s && s.live && !s.connected && str(s.authorization) === 'needs authorization');
}

let uid = 0;
/** field is a labelled input; it returns [wrapper, input]. */
function field(labelKey, attrs) {
  const id = 'setup-f' + (++uid);
  const input = h('input', { class: 'field', id, autocomplete: 'off', spellcheck: 'false', dir: 'auto', ...attrs });
  return [h('div', { class: 'setup-field' }, h('label', { class: 'field-label', for: id }, t(labelKey)), input), input];
}

export class Setup {
  /** api is the page's API client; changed is called after a change (to reload the model picker and checks). */
  constructor(api, announce, changed) {
    this.api = api;
    this.announce = announce || (() => {});
    this.changed = changed || (() => {});
    this.root = h('div', { class: 'setup', id: 'setup' });
    this.status = h('p', { class: 'dialog-text setup-status', id: 'setup-status', role: 'status', 'aria-live': 'polite' });
    this.waiting = new Set(); // names of the servers awaiting authorization
    this.shown = '';          // what the servers' rows show, to re-render only on a change
    this.polls = 0;
    this.timer = 0;
    this.refreshing = false;
    const again = () => { if (this.waiting.size && document.visibilityState === 'visible') this.refreshAuth(); };
    window.addEventListener('focus', again);
    document.addEventListener('visibilitychange', again);
  }

  element() { return this.root; }

  async load() {
    this.polls = 0;
    try {
      this.render(await this.api.json('/api/settings'));
    } catch (err) {
      clear(this.root);
      this.root.append(h('p', { class: 'dialog-text setup-refused', id: 'setup-refused' }, t('setupUnavailable') + ' ' + message(err)));
    }
  }

  /** send performs a change and shows the settings the server answers with. */
  async send(path, method, body, doneKey) {
    this.status.textContent = t('setupSaving');
    try {
      const init = { method, headers: { 'Content-Type': 'application/json' } };
      if (body !== undefined) init.body = JSON.stringify(body);
      const view = await this.api.json(path, init);
      this.render(view);
      this.status.textContent = t(doneKey);
      this.announce(t(doneKey));
      this.changed();
      return true;
    } catch (err) {
      this.status.textContent = t('setupFailed') + ' ' + message(err);
      return false;
    }
  }

  render(v) {
    const servers = Array.isArray(v && v.mcpServers) ? v.mcpServers : [];
    clear(this.root);
    this.root.append(
      h('p', { class: 'dialog-text' }, t('setupIntro', { file: str(v && v.credentialsFile) })),
      this.status,
      this.modelsSection(v && v.models),
      this.keysSection(Array.isArray(v && v.keys) ? v.keys : []),
      this.mcpSection(servers));
    this.shown = serversKey(servers);
    this.waiting = new Set(servers.filter(awaitsAuth).map((s) => str(s.name)));
    if (this.waiting.size) this.schedule();
  }

  /** schedule asks the server again in a while, within the bound, while Settings is open. */
  schedule() {
    if (this.timer || this.polls >= AUTH_POLL_MAX) return;
    this.timer = setTimeout(() => {
      this.timer = 0;
      const dlg = this.root.closest('dialog');
      if (!this.waiting.size || (dlg && !dlg.open)) return;
      this.polls++;
      this.refreshAuth();
    }, AUTH_POLL_MS);
  }

  /** refreshAuth shows the servers' new state once an authorization has come back. */
  async refreshAuth() {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const v = await this.api.json('/api/settings');
      const servers = Array.isArray(v && v.mcpServers) ? v.mcpServers : [];
      // Re-rendering replaces the forms: not while the person types in one.
      const active = document.activeElement;
      const typing = active && this.root.contains(active) && (active.tagName === 'INPUT' || active.tagName === 'SELECT') && active.value;
      if (serversKey(servers) === this.shown || typing) {
        this.schedule();
        return;
      }
      const before = this.waiting;
      this.render(v);
      const done = servers.filter((s) => s.connected && before.has(str(s.name))).map((s) => str(s.name));
      if (done.length) {
        const msg = t('setupAuthorized', { name: done.join(', ') });
        this.status.textContent = msg;
        this.announce(msg);
        this.changed();
      }
    } catch {
      this.schedule();
    } finally {
      this.refreshing = false;
    }
  }

  modelsSection(m) {
    const conns = Array.isArray(m && m.connections) ? m.connections : [];
    const list = h('ul', { class: 'setup-list', id: 'setup-models' });
    for (const c of conns) {
      const del = h('button', { type: 'button', class: 'btn btn-ghost btn-small' }, t('setupRemove'));
      del.setAttribute('aria-label', t('setupRemoveNamed', { name: str(c.model) }));
      del.addEventListener('click', () => this.send('/api/settings/models/' + encodeURIComponent(str(c.name)), 'DELETE', undefined, 'setupRemoved'));
      list.append(h('li', { class: 'setup-row', 'data-model': str(c.model) },
        h('span', { class: 'setup-name', dir: 'auto' }, str(c.model)),
        h('span', { class: 'setup-detail', dir: 'auto' },
          [str(c.provider), str(c.baseUrl), c.keySet ? t('setupKeyMasked', { masked: str(c.keyMasked) }) : t('setupNoKey')].filter(Boolean).join(' · ')),
        c.default ? h('span', { class: 'setup-badge' }, t('setupDefault')) : null,
        del));
    }
    const fromEnv = str(m && m.fromEnv);
    const [nameF, name] = field('setupConnName', { name: 'name', maxlength: '32', placeholder: 'ollama', required: '' });
    const provider = h('select', { class: 'field', id: 'setup-provider', name: 'provider' },
      h('option', { value: 'openai-compatible' }, t('setupProviderCompatible')),
      h('option', { value: 'openai' }, 'OpenAI'),
      h('option', { value: 'anthropic' }, 'Anthropic'));
    const providerF = h('div', { class: 'setup-field' }, h('label', { class: 'field-label', for: 'setup-provider' }, t('setupProvider')), provider);
    const [baseF, base] = field('setupBaseUrl', { name: 'baseUrl', type: 'url', maxlength: '2048', placeholder: 'http://127.0.0.1:11434/v1' });
    const [keyF, key] = field('setupApiKey', { name: 'apiKey', type: 'password', maxlength: '4096', autocomplete: 'new-password' });
    const [modelF, model] = field('setupModel', { name: 'model', maxlength: '200', list: 'setup-model-ids', required: '' });
    const ids = h('datalist', { id: 'setup-model-ids' });
    const listBtn = h('button', { type: 'button', class: 'btn btn-ghost btn-small', id: 'setup-list-models' }, t('setupListModels'));
    const def = h('input', { type: 'checkbox', id: 'setup-default', name: 'default' });
    const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small', id: 'setup-save-model' }, t('setupSaveModel'));
    const body = () => {
      const p = provider.value;
      return { name: name.value.trim(), provider: p === 'anthropic' ? 'anthropic' : 'openai', baseUrl: base.value.trim(),
        apiKey: key.value, model: model.value.trim(), default: def.checked };
    };
    provider.addEventListener('change', () => { baseF.hidden = provider.value !== 'openai-compatible'; });
    listBtn.addEventListener('click', async () => {
      this.status.textContent = t('setupListing');
      try {
        const res = await this.api.json('/api/settings/models/list', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body()) });
        const models = Array.isArray(res && res.models) ? res.models : [];
        clear(ids);
        for (const id of models) ids.append(h('option', { value: str(id) }));
        if (models.length && !model.value) model.value = str(models[0]);
        this.status.textContent = t('setupListed', { n: models.length });
      } catch (err) {
        this.status.textContent = t('setupFailed') + ' ' + message(err);
      }
    });
    const form = h('form', { class: 'setup-form', id: 'setup-model-form', 'aria-labelledby': 'setup-add-model' },
      h('h4', { class: 'setup-sub', id: 'setup-add-model' }, t('setupAddModel')),
      nameF, providerF, baseF, keyF, modelF, ids,
      h('div', { class: 'setup-actions' }, listBtn,
        h('label', { class: 'setup-check', for: 'setup-default' }, def, ' ' + t('setupMakeDefault')), save));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (await this.send('/api/settings/models', 'POST', body(), 'setupModelSaved')) key.value = '';
    });
    return h('section', { class: 'setup-section', 'aria-labelledby': 'setup-models-title' },
      h('h3', { class: 'setup-title', id: 'setup-models-title' }, t('setupModels')),
      fromEnv ? h('p', { class: 'dialog-text setup-note' }, t('setupModelFromEnv', { model: fromEnv })) : null,
      conns.length ? list : h('p', { class: 'dialog-text' }, t('setupNoModels')),
      form);
  }

  keysSection(keys) {
    const inputs = {};
    const rows = [];
    for (const k of keys) {
      const label = KEY_LABEL[k.key];
      if (!label) continue;
      const attrs = { name: k.key, maxlength: '4096' };
      if (k.secret) {
        attrs.type = 'password';
        attrs.autocomplete = 'new-password';
        attrs.placeholder = k.set ? str(k.masked) : '';
      } else {
        attrs.value = str(k.value);
      }
      if (k.source === 'env') attrs.disabled = '';
      const [f, input] = field(label, attrs);
      if (k.source === 'env') f.append(h('span', { class: 'setup-note' }, t('setupFromEnv', { env: str(k.env) })));
      else if (!k.live) f.append(h('span', { class: 'setup-note' }, t('setupAtRestart')));
      if (k.secret && k.set && k.source === 'file') {
        const clearBtn = h('button', { type: 'button', class: 'btn btn-ghost btn-small' }, t('setupClear'));
        clearBtn.setAttribute('aria-label', t('setupClearNamed', { name: t(label) }));
        clearBtn.addEventListener('click', () => this.send('/api/settings/keys', 'PUT', { [k.key]: '' }, 'setupKeysSaved'));
        f.append(clearBtn);
      }
      inputs[k.key] = { input, k };
      rows.push(f);
    }
    const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small', id: 'setup-save-keys' }, t('setupSaveKeys'));
    const form = h('form', { class: 'setup-form', id: 'setup-keys-form', 'aria-labelledby': 'setup-keys-title' }, ...rows,
      h('div', { class: 'setup-actions' }, save));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const body = {};
      for (const [name, { input, k }] of Object.entries(inputs)) {
        if (input.disabled) continue;
        // An empty secret field keeps the stored key; Clear removes it.
        if (k.secret && input.value === '') continue;
        if (!k.secret && input.value.trim() === str(k.value)) continue;
        body[name] = input.value.trim();
      }
      if (Object.keys(body).length === 0) {
        this.status.textContent = t('setupNothingChanged');
        return;
      }
      this.send('/api/settings/keys', 'PUT', body, 'setupKeysSaved');
    });
    return h('section', { class: 'setup-section', 'aria-labelledby': 'setup-keys-title' },
      h('h3', { class: 'setup-title', id: 'setup-keys-title' }, t('setupKeys')), form);
  }

  mcpSection(servers) {
    const list = h('ul', { class: 'setup-list', id: 'setup-mcp' });
    for (const s of servers) {
      const del = h('button', { type: 'button', class: 'btn btn-ghost btn-small' }, t('setupDetach'));
      del.setAttribute('aria-label', t('setupDetachNamed', { name: str(s.name) }));
      del.addEventListener('click', () => this.send('/api/settings/mcp/' + encodeURIComponent(str(s.name)), 'DELETE', undefined, 'setupDetached'));
      const tools = Array.isArray(s.tools) ? s.tools.length : 0;
      // A server that asked for OAuth waits for the person: the link opens
      // its authorization server, which sends the browser back to
      // /oauth/callback; the view then refreshes (refreshAuth).
      const needsAuth = s.live && !s.connected && str(s.authorization) === 'needs authorization' && safeURL(str(s.authorizationUrl));
      const state = !s.live ? t('setupNextStart') : s.connected ? t('setupConnected', { n: tools })
        : needsAuth ? t('setupNeedsAuth') : t('setupDown');
      list.append(h('li', { class: 'setup-row', 'data-server': str(s.name), 'data-connected': s.connected ? 'true' : 'false' },
        h('span', { class: 'setup-name', dir: 'auto' }, str(s.name)),
        h('span', { class: 'setup-detail', dir: 'ltr' }, s.url ? str(s.url) : [str(s.command), ...(Array.isArray(s.args) ? s.args.map(str) : [])].join(' ')),
        h('span', { class: 'setup-badge' }, state),
        str(s.error) ? h('span', { class: 'setup-detail', dir: 'auto' }, str(s.error)) : null,
        needsAuth ? link(str(s.authorizationUrl), t('setupAuthorize'), 'btn btn-primary btn-small setup-authorize') : null,
        del));
    }
    const [nameF, name] = field('setupServerName', { name: 'name', maxlength: '32', required: '' });
    const [cmdF, cmd] = field('setupCommand', { name: 'command', maxlength: '4096', placeholder: 'npx -y @modelcontextprotocol/server-everything' });
    const [urlF, url] = field('setupServerUrl', { name: 'url', type: 'url', maxlength: '2048', placeholder: 'https://example.org/mcp' });
    const [tokF, tok] = field('setupToken', { name: 'token', type: 'password', maxlength: '4096', autocomplete: 'new-password' });
    const attach = h('button', { type: 'submit', class: 'btn btn-primary btn-small', id: 'setup-attach' }, t('setupAttach'));
    const form = h('form', { class: 'setup-form', id: 'setup-mcp-form', 'aria-labelledby': 'setup-attach-title' },
      h('h4', { class: 'setup-sub', id: 'setup-attach-title' }, t('setupAttachTitle')),
      h('p', { class: 'dialog-text setup-note' }, t('setupAttachHelp')),
      nameF, cmdF, urlF, tokF, h('div', { class: 'setup-actions' }, attach));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      // The command line is split on spaces: arguments with spaces go in the credentials file.
      const words = cmd.value.trim().split(/\s+/).filter(Boolean);
      const body = { name: name.value.trim(), url: url.value.trim(), token: tok.value };
      if (words.length) { body.command = words[0]; body.args = words.slice(1); }
      if (await this.send('/api/settings/mcp', 'POST', body, 'setupAttached')) tok.value = '';
    });
    return h('section', { class: 'setup-section', 'aria-labelledby': 'setup-mcp-title' },
      h('h3', { class: 'setup-title', id: 'setup-mcp-title' }, t('setupMCP')),
      servers.length ? list : h('p', { class: 'dialog-text' }, t('setupNoServers')), form);
  }
}

/** serversKey is what the servers' rows show, to compare. */
function serversKey(servers) {
  return JSON.stringify(servers.map((s) => [str(s.name), !!s.connected, !!s.live, str(s.authorization), str(s.error),
    Array.isArray(s.tools) ? s.tools.length : 0]));
}

function message(err) {
  return err && err.message ? err.message : String(err);
}
