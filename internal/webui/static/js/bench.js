// The tool bench: every tool of the server, grouped by pack, each with a form
// generated from its input JSON Schema. A run calls POST /api/tools/{name}
// directly (no model involved) and shows the result as the chat's card, with
// the raw response and its timing.
//
// Schemas come from the server but are still treated as data: every name,
// description and enum value reaches the page as text or attribute values.

import { APIError } from './api.js';
import { ToolCard, toolLabel } from './cards.js';
import { partFromResult } from './model.js';
import { h, append, clear, icon, str, num, arr, obj, formatDuration } from './dom.js';
import { t as tr, formatNumber } from './i18n.js';

// Bounds on what a schema can make the page build.
const MAX_TOOLS = 200;
const MAX_FIELDS = 60;
const MAX_ENUM = 200;
// Strings allowed to be this long get a textarea rather than a line.
const TEXTAREA_FROM = 500;

const PACK_LABEL = { web: 'packWeb', ckan: 'packCkan', music: 'packMusic' };

/** packLabel names a pack for people. */
function packLabel(pack) {
  return PACK_LABEL[pack] ? tr(PACK_LABEL[pack]) : pack || tr('packOther');
}

/** schemaType returns the one type of a property schema ("null" aside). */
function schemaType(s) {
  const t = s.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x) => typeof x === 'string' && x !== 'null') || '';
  if (Array.isArray(s.enum)) return 'string';
  return '';
}

function isScalar(t) {
  return t === 'string' || t === 'integer' || t === 'number' || t === 'boolean';
}

/**
 * Field is one input of a tool's form: it builds its control from the
 * property's schema and turns the control's value back into JSON.
 */
class Field {
  constructor(toolName, name, schema, required) {
    this.name = name;
    this.schema = schema;
    this.required = required;
    this.type = schemaType(schema);
    this.id = `bench-${toolName}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
    this.errorEl = h('p', { class: 'field-error', id: this.id + '-error', hidden: true });
    const desc = str(schema.description);
    this.helpEl = desc ? h('p', { class: 'field-help', id: this.id + '-help', dir: 'auto' }, desc) : null;
    this.kind = this.pickKind();
    this.control = this.build();
    const described = [this.helpEl ? this.helpEl.id : '', this.errorEl.id].filter(Boolean).join(' ');
    this.control.setAttribute('aria-describedby', described);
    this.control.dataset.field = name;
    this.control.addEventListener('invalid', () => this.showError(this.control.validationMessage));
    // Typed text takes its own direction (a Hebrew query reads right to
    // left); an empty field keeps the page's.
    if (this.control.tagName === 'TEXTAREA' || this.control.type === 'text') {
      this.control.addEventListener('input', () => {
        if (this.control.value.trim()) this.control.setAttribute('dir', 'auto');
        else this.control.removeAttribute('dir');
      });
    }
    this.control.addEventListener('input', () => {
      this.check();
      if (this.control.checkValidity()) this.showError('');
    });
    this.check();
    this.el = this.layout();
  }

  pickKind() {
    const s = this.schema;
    if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.length <= MAX_ENUM && s.enum.every((v) => isScalar(typeof v === 'number' ? 'number' : typeof v))) return 'enum';
    if (this.type === 'boolean') return 'boolean';
    if (this.type === 'integer' || this.type === 'number') return 'number';
    if (this.type === 'string') {
      const max = num(s.maxLength);
      return max !== null && max > TEXTAREA_FROM && s.format !== 'uri' ? 'text-long' : 'text';
    }
    if (this.type === 'array') {
      const items = obj(s.items) || {};
      if (isScalar(schemaType(items))) return 'list';
    }
    return 'json';
  }

  build() {
    const s = this.schema;
    const def = s.default;
    const base = { id: this.id, name: this.name, class: 'field', required: this.required };
    switch (this.kind) {
      case 'enum': {
        const sel = h('select', base);
        if (!this.required || def === undefined) sel.appendChild(h('option', { value: '' }, def === undefined ? tr('notSet') : tr('byDefault')));
        s.enum.forEach((v, i) => {
          sel.appendChild(h('option', { value: String(i), selected: def !== undefined && v === def }, String(v)));
        });
        return sel;
      }
      case 'boolean':
        return h('input', { id: this.id, name: this.name, type: 'checkbox', class: 'check', checked: def === true });
      case 'number': {
        const integer = this.type === 'integer';
        return h('input', {
          ...base, type: 'number', inputmode: integer ? 'numeric' : 'decimal', step: integer ? '1' : 'any',
          min: num(s.minimum) ?? (num(s.exclusiveMinimum) !== null && integer ? s.exclusiveMinimum + 1 : null),
          max: num(s.maximum) ?? (num(s.exclusiveMaximum) !== null && integer ? s.exclusiveMaximum - 1 : null),
          value: num(def) === null ? null : String(def),
        });
      }
      case 'text':
      case 'text-long': {
        const attrs = {
          ...base, minlength: num(s.minLength), maxlength: num(s.maxLength), spellcheck: 'false', autocomplete: 'off',
          inputmode: s.format === 'uri' ? 'url' : null,
        };
        const el = this.kind === 'text-long' ? h('textarea', { ...attrs, rows: 2 }) : h('input', { ...attrs, type: 'text' });
        if (typeof def === 'string') el.value = def;
        return el;
      }
      case 'list': {
        const el = h('textarea', { ...base, rows: 3, spellcheck: 'false', autocomplete: 'off' });
        if (Array.isArray(def)) el.value = def.map(String).join('\n');
        return el;
      }
      default: {
        const el = h('textarea', { ...base, rows: 3, class: 'field field-json', spellcheck: 'false', autocomplete: 'off' });
        if (def !== undefined) el.value = JSON.stringify(def, null, 2);
        return el;
      }
    }
  }

  layout() {
    const marker = this.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, '*') : null;
    const hint = this.hint();
    if (this.kind === 'boolean') {
      return h('div', { class: 'bench-field bench-field-check' },
        h('div', { class: 'check-row' }, this.control, h('label', { for: this.id, class: 'field-label' }, this.name, marker)),
        this.helpEl, this.errorEl);
    }
    return h('div', { class: 'bench-field' },
      h('label', { for: this.id, class: 'field-label' }, this.name, marker, hint ? h('span', { class: 'field-hint' }, hint) : null),
      this.control, this.helpEl, this.errorEl);
  }

  /** hint is a short note of the field's kind and limits, shown by its label. */
  hint() {
    const s = this.schema;
    const lo = num(s.minimum);
    const hi = num(s.maximum);
    switch (this.kind) {
      case 'number': {
        const what = this.type === 'integer' ? 'integer' : 'number';
        if (lo !== null && hi !== null) return `${what}, ${lo}–${hi}`;
        if (lo !== null) return `${what}, ≥ ${lo}`;
        if (hi !== null) return `${what}, ≤ ${hi}`;
        return what;
      }
      case 'list': {
        const parts = [tr('onePerLine')];
        if (num(s.minItems) !== null) parts.push(tr('atLeast', { n: s.minItems }));
        if (num(s.maxItems) !== null) parts.push(tr('atMost', { n: s.maxItems }));
        return parts.join(', ');
      }
      case 'json':
        return 'JSON';
      default:
        return '';
    }
  }

  showError(text) {
    this.errorEl.textContent = text;
    this.errorEl.hidden = !text;
    if (text) this.control.setAttribute('aria-invalid', 'true');
    else this.control.removeAttribute('aria-invalid');
  }

  /**
   * check sets the custom validity of what HTML attributes cannot say: list
   * item counts and types, JSON syntax, and (since minlength only applies to
   * typed text) string lengths.
   */
  check() {
    let msg = '';
    try {
      this.value();
    } catch (err) {
      msg = err.message;
    }
    this.control.setCustomValidity(msg);
  }

  /** value returns the field's JSON value, or undefined to leave it out. */
  value() {
    const s = this.schema;
    const c = this.control;
    switch (this.kind) {
      case 'enum':
        return c.value === '' ? undefined : s.enum[Number(c.value)];
      case 'boolean':
        // Unchecked is sent only when it differs from the default.
        if (c.checked) return true;
        return s.default === true ? false : undefined;
      case 'number': {
        if (c.value === '') return undefined;
        const n = Number(c.value);
        if (!Number.isFinite(n)) throw new Error(tr('benchNumber'));
        if (this.type === 'integer' && !Number.isInteger(n)) throw new Error(tr('benchWholeNumber'));
        return n;
      }
      case 'text':
      case 'text-long': {
        if (c.value === '') return undefined;
        checkLength(c.value, s);
        return c.value;
      }
      case 'list': {
        const items = obj(s.items) || {};
        const t = schemaType(items);
        const lines = c.value.split('\n').map((l) => l.trim()).filter((l) => l !== '');
        if (lines.length === 0) {
          if (num(s.minItems) !== null && s.minItems > 0 && this.required) throw new Error(tr('benchAtLeastLines', { min: s.minItems }));
          return undefined;
        }
        if (num(s.minItems) !== null && lines.length < s.minItems) throw new Error(tr('benchTooFewLines', { min: s.minItems, n: lines.length }));
        if (num(s.maxItems) !== null && lines.length > s.maxItems) throw new Error(tr('benchTooManyLines', { max: s.maxItems, n: lines.length }));
        return lines.map((l, i) => {
          if (t === 'string') {
            checkLength(l, items, i + 1);
            return l;
          }
          if (t === 'boolean') {
            if (l !== 'true' && l !== 'false') throw new Error(tr('benchLine', { n: i + 1, error: tr('benchTrueFalse') }));
            return l === 'true';
          }
          const n = Number(l);
          if (!Number.isFinite(n) || (t === 'integer' && !Number.isInteger(n))) throw new Error(tr('benchLine', { n: i + 1, error: tr(t === 'integer' ? 'benchWholeNumber' : 'benchNumber') }));
          if (num(items.minimum) !== null && n < items.minimum) throw new Error(tr('benchLine', { n: i + 1, error: tr('benchAtLeastValue', { min: items.minimum }) }));
          if (num(items.maximum) !== null && n > items.maximum) throw new Error(tr('benchLine', { n: i + 1, error: tr('benchAtMostValue', { max: items.maximum }) }));
          return n;
        });
      }
      default: {
        if (c.value.trim() === '') return undefined;
        let v;
        try {
          v = JSON.parse(c.value);
        } catch {
          throw new Error(tr('benchBadJSON'));
        }
        if (this.type === 'object' && obj(v) === null) throw new Error(tr('benchJSONObject'));
        if (this.type === 'array' && !Array.isArray(v)) throw new Error(tr('benchJSONArray'));
        return v;
      }
    }
  }
}

/** checkLength checks a text's length against the schema's; line numbers a list's item (0 for none). */
function checkLength(text, s, line = 0) {
  const n = [...text].length;
  let err = '';
  if (num(s.minLength) !== null && n < s.minLength) err = tr('benchMinChars', { min: s.minLength, n });
  else if (num(s.maxLength) !== null && n > s.maxLength) err = tr('benchMaxChars', { max: s.maxLength, n });
  if (err) throw new Error(line ? tr('benchLine', { n: line, error: err }) : err);
}

/** Bench is the tool bench panel. */
export class Bench {
  /**
   * api is the page's Client; root the bench's section; announce tells
   * screen readers what happened.
   */
  constructor(api, root, announce) {
    this.api = api;
    this.root = root;
    this.announce = announce;
    this.tools = null; // definitions, once loaded
    this.loading = null;
    this.current = null; // {def, fields, form, result, run}
    this.runSeq = 0;
    this.list = h('div', { class: 'bench-tools', role: 'navigation', 'aria-label': tr('toolsByPack') });
    this.panel = h('div', { class: 'bench-panel', id: 'bench-panel' });
    this.status = h('p', { class: 'muted bench-status' }, tr('loadingTools'));
    // What the model can use, and why the rest is withheld (issue 27: a
    // first run should see which tools work without keys).
    this.offeredLine = h('div', { class: 'bench-offered', id: 'bench-offered' });
    // The music index: empty on a first run, with the demo tracks to load.
    this.indexBox = h('div', { class: 'bench-index', id: 'bench-index', role: 'status', 'aria-live': 'polite' });
    this.indexBox.hidden = true;
    this.indexPoll = null;
    clear(root).append(
      h('div', { class: 'bench-head' },
        h('h2', { class: 'bench-title', id: 'bench-title', tabindex: '-1' }, tr('benchTitle')),
        h('p', { class: 'bench-intro' }, tr('benchIntro')),
        this.offeredLine, this.indexBox),
      this.status, this.list, this.panel);
  }

  /** renderOffered says which tools the model is offered and why others are not. */
  renderOffered() {
    const offered = this.tools.filter((t) => t.offered !== false);
    const withheld = this.tools.filter((t) => t.offered === false);
    // The tools' names are code: they sit in the translated sentence in a
    // left-to-right span of their own. (dom.js's append skips the null that
    // Element.append would show as "null".)
    const [before, after] = tr('modelToolsLine', { n: formatNumber(offered.length), names: '\u0000' }).split('\u0000');
    append(clear(this.offeredLine), [
      h('p', { class: 'bench-offered-yes' }, offered.length
        ? [before, h('span', { dir: 'ltr' }, offered.map((t) => t.name).join(', ')), after]
        : tr('modelNoTools')),
      withheld.length ? h('p', { class: 'bench-offered-no muted', dir: 'auto' }, tr('modelToolsWithheld', {
        n: formatNumber(withheld.length),
        list: withheld.map((t) => str(t.unavailable) ? `${t.name} (${str(t.unavailable)})` : t.name).join('; '),
      })) : null]);
  }

  /** loadIndex shows the music index's size, offering the demo tracks when it is empty. */
  async loadIndex() {
    if (!this.tools.some((t) => t.name === 'semanticSearch')) return;
    let st;
    try {
      st = await this.api.json('/api/index/demo');
    } catch {
      return; // a server without a music index: nothing to offer
    }
    this.renderIndex(st);
  }

  renderIndex(st) {
    const box = this.indexBox;
    box.hidden = false;
    const job = obj(st && st.job);
    const tracks = num(st && st.tracks) || 0;
    const demo = num(st && st.demoTracks) || 0;
    box.dataset.tracks = String(tracks);
    box.dataset.state = job ? str(job.status) : (tracks ? 'filled' : 'empty');
    if (job && job.status === 'running') {
      const read = num(job.read) || 0;
      const total = num(job.total) || demo;
      clear(box).append(
        h('p', { class: 'bench-index-text' }, tr('indexLoading', { read: formatNumber(read), total: formatNumber(total) })),
        h('progress', { class: 'bench-index-progress', max: String(total), value: String(read), 'aria-label': tr('indexLoadingLabel') }));
      clearTimeout(this.indexPoll);
      this.indexPoll = setTimeout(() => this.loadIndex(), 400);
      return;
    }
    if (job && job.status === 'succeeded') {
      clear(box).append(h('p', { class: 'bench-index-text' }, tr('indexLoaded', { added: formatNumber(num(job.added) || 0), n: formatNumber(tracks) })));
      return;
    }
    const failed = job && job.status === 'failed' ? h('p', { class: 'inline-error', role: 'alert' }, tr('indexLoadFailed') + ' ', h('span', { dir: 'auto' }, str(job.error))) : null;
    if (tracks > 0) {
      clear(box).append(...[failed, h('p', { class: 'bench-index-text' }, tr('indexCount', { n: formatNumber(tracks) }))].filter(Boolean));
      return;
    }
    const load = h('button', { type: 'button', class: 'btn btn-primary bench-index-load', id: 'bench-load-demo' }, tr('indexLoadDemo', { n: formatNumber(demo) }));
    load.addEventListener('click', async () => {
      load.disabled = true;
      try {
        this.renderIndex(await this.api.json('/api/index/demo', { method: 'POST' }));
      } catch (err) {
        load.disabled = false;
        clear(box).append(h('p', { class: 'inline-error', role: 'alert' }, tr('indexLoadFailed') + ' ', h('span', { dir: 'auto' }, err && err.message ? err.message : String(err))), load);
      }
    });
    clear(box).append(...[failed, h('p', { class: 'bench-index-text' }, tr('indexEmpty')), load].filter(Boolean));
  }

  /** load fetches the definitions once; later calls reuse them. */
  load() {
    if (!this.loading) {
      this.loading = this.api.tools().then((body) => {
        const tools = arr(body && body.tools).filter((t) => obj(t) && typeof t.name === 'string' && t.name).slice(0, MAX_TOOLS);
        this.tools = tools;
        this.renderList();
      }).catch((err) => {
        this.loading = null;
        this.status.hidden = false;
        clear(this.status).append(h('span', { class: 'is-error', role: 'alert' }, tr('toolsNotLoaded') + (err && err.message ? err.message : String(err))));
      });
    }
    return this.loading;
  }

  renderList() {
    this.renderOffered();
    this.loadIndex();
    clear(this.list);
    this.status.hidden = this.tools.length > 0;
    if (this.tools.length === 0) this.status.textContent = tr('noTools');
    const packs = new Map();
    for (const t of this.tools) {
      const p = str(t.pack);
      if (!packs.has(p)) packs.set(p, []);
      packs.get(p).push(t);
    }
    for (const [pack, tools] of packs) {
      const headId = `bench-pack-${pack || 'other'}`.replace(/[^A-Za-z0-9_-]/g, '_');
      const ul = h('ul', { class: 'bench-tool-list', 'aria-labelledby': headId });
      for (const t of tools) {
        // A tool the model is not offered (its upstream lacks credentials)
        // stays on the bench, marked, so that a run can show why it fails.
        const notOffered = t.offered === false;
        const b = h('button', { type: 'button', class: 'bench-tool' + (notOffered ? ' is-not-offered' : ''), 'data-tool': t.name, 'aria-controls': 'bench-panel', 'aria-pressed': 'false' },
          h('span', { class: 'bench-tool-name' }, toolLabel(t.name)),
          notOffered ? h('span', { class: 'bench-tool-off' }, ' · ' + tr('notOffered')) : null);
        b.addEventListener('click', () => this.select(t.name, true));
        ul.appendChild(h('li', null, b));
      }
      this.list.appendChild(h('div', { class: 'bench-pack', 'data-pack': pack },
        h('h3', { class: 'bench-pack-title', id: headId }, packLabel(pack)), ul));
    }
    // Open on a tool that works as things stand (a first run has no keys,
    // and a form that can only fail with AUTH_MISSING is a poor welcome).
    const first = this.tools.find((t) => t.offered !== false) || this.tools[0];
    if (!this.current && first) this.select(first.name, false);
  }

  /** select shows the form of the tool called name. */
  select(name, focus) {
    const def = (this.tools || []).find((t) => t.name === name);
    if (!def) return false;
    for (const b of this.list.querySelectorAll('.bench-tool')) {
      b.setAttribute('aria-pressed', String(b.dataset.tool === name));
    }
    this.runSeq += 1; // a run still under way no longer shows its result here
    const schema = obj(def.inputSchema) || {};
    const props = obj(schema.properties) || {};
    const required = new Set(arr(schema.required).filter((r) => typeof r === 'string'));
    // Required fields first, otherwise in the schema's order.
    const entries = Object.entries(props).slice(0, MAX_FIELDS).filter(([, s]) => obj(s));
    entries.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
    const fields = entries.map(([k, s]) => new Field(name, k, s, required.has(k)));
    const run = h('button', { type: 'submit', class: 'btn btn-primary bench-run' }, tr('run'));
    const reset = h('button', { type: 'button', class: 'btn btn-ghost bench-reset' }, tr('reset'));
    const result = h('div', { class: 'bench-result', 'aria-live': 'polite' });
    const form = h('form', { class: 'bench-form', novalidate: true, 'data-tool': name, 'aria-labelledby': 'bench-tool-title' },
      fields.length ? fields.map((f) => f.el) : h('p', { class: 'muted' }, tr('noArguments')),
      h('div', { class: 'bench-actions' }, run, reset,
        fields.some((f) => f.required) ? h('span', { class: 'muted req-note' }, h('span', { class: 'req', 'aria-hidden': 'true' }, '*'), ' ' + tr('required')) : null));
    const title = str(def.title) || toolLabel(name);
    clear(this.panel).append(
      h('div', { class: 'bench-tool-head' },
        h('h3', { class: 'bench-tool-title', id: 'bench-tool-title' }, title, ' ', h('code', { class: 'bench-tool-code' }, name)),
        str(def.description) ? h('p', { class: 'bench-tool-desc', dir: 'auto' }, str(def.description)) : null,
        str(def.notice) ? h('p', { class: 'bench-tool-notice', role: 'note', dir: 'auto' }, str(def.notice)) : null,
        def.offered === false ? h('p', { class: 'bench-tool-notice bench-tool-unavailable', role: 'note' },
          tr('notOfferedWhy'), str(def.unavailable) ? h('span', { dir: 'auto' }, ' ' + str(def.unavailable)) : null) : null),
      form, result);
    this.current = { def, fields, form, result, run };
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    form.addEventListener('keydown', (e) => {
      // Ctrl/Cmd+Enter runs from a textarea too.
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    reset.addEventListener('click', () => this.select(name, false));
    if (focus) {
      const first = form.querySelector('input, select, textarea');
      if (first) first.focus();
    }
    return true;
  }

  /** args collects the form's arguments; null when a field is invalid. */
  args() {
    const { fields, form } = this.current;
    for (const f of fields) {
      f.check();
      f.showError('');
    }
    if (!form.checkValidity()) {
      const bad = fields.find((f) => !f.control.validity.valid);
      if (bad) bad.control.focus();
      return null;
    }
    const out = {};
    for (const f of fields) {
      const v = f.value();
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  }

  async run() {
    const cur = this.current;
    if (!cur || cur.run.disabled) return;
    const args = this.args();
    if (!args) {
      this.announce(tr('argsNeedFixing'));
      return;
    }
    const name = cur.def.name;
    const seq = ++this.runSeq;
    cur.run.disabled = true;
    cur.form.setAttribute('aria-busy', 'true');
    const part = partFromResult(`bench-${seq}`, name, args, undefined);
    const card = new ToolCard(part, `bench-${seq}`);
    clear(cur.result).append(card.el);
    this.announce(tr('running', { tool: toolLabel(name) }));
    const t0 = performance.now();
    let text = '';
    let env;
    let failure = null;
    try {
      text = await this.api.callTool(name, args);
      try {
        env = JSON.parse(text);
      } catch {
        failure = new Error(tr('notJSON'));
      }
    } catch (err) {
      failure = err;
    }
    const roundTrip = performance.now() - t0;
    if (seq !== this.runSeq) return; // another tool was chosen meanwhile
    cur.run.disabled = false;
    cur.form.removeAttribute('aria-busy');
    if (failure) {
      const code = failure instanceof APIError ? failure.code : '';
      clear(cur.result).append(h('div', { class: 'inline-error bench-error', role: 'alert' },
        icon('alert'), h('span', null, failure.message || String(failure)), code ? h('code', null, code) : null));
      this.announce(tr('couldNotCall', { tool: toolLabel(name) }));
      return;
    }
    const done = partFromResult(`bench-${seq}`, name, args, env);
    card.update(done);
    card.toggle(true);
    const tool = formatDuration(num(obj(env) && env.durationMs));
    cur.result.append(
      h('p', { class: 'bench-timing' },
        h('span', { class: 'bench-timing-tool' }, tr('toolTime') + ' ', h('strong', null, tool || '—')),
        h('span', { class: 'bench-timing-trip' }, tr('roundTrip') + ' ', h('strong', null, formatDuration(roundTrip)))),
      h('div', { class: 'bench-raw' },
        h('h4', { class: 'bench-raw-title', id: `bench-raw-title-${seq}` }, tr('rawJSON')),
        h('pre', { class: 'raw-json bench-raw-json', tabindex: '0', 'aria-labelledby': `bench-raw-title-${seq}` }, prettyJSON(env, text))));
    // Long forms push the result below the fold: bring it into view.
    card.el.scrollIntoView({ block: 'nearest' });
    this.announce(tr(done.status === 'failed' ? 'failed' : 'finished', { tool: toolLabel(name) }));
  }
}

function prettyJSON(v, fallback) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return fallback;
  }
}
