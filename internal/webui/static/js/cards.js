// Tool invocation cards: a header button (icon, friendly name, status,
// summary, duration) that expands a region with the full result rendered per
// tool, plus a Raw JSON view. Everything from the tool is untrusted: it only
// reaches the page as text nodes, http(s) links and https artwork, and every
// field takes its direction from its own text (dir="auto"), so Hebrew titles
// read right to left inside an English page and the other way round.
//
// Each tool's result has a renderer in a small registry: other modules add
// theirs with registerRenderer (the playlist card does), without touching
// this file's switch of built-in ones.

import {
  h, clear, icon, link, artwork, str, num, arr, obj, clip, formatDuration, formatTrackTime, safeURL,
} from './dom.js';
import { trackLinks } from './daily.js';
import { PLAYLIST_TOOLS, renderPlaylistResult } from './playlist.js';
import { t, formatNumber, formatBytes } from './i18n.js';
import { scrollRegion } from './markdown.js';

/** TOOLS maps tool names to their friendly name and icon. */
export const TOOLS = {
  semanticSearch: { label: 'Semantic search', icon: 'sparkle' },
  tidalSearch: { label: 'Tidal search', icon: 'music' },
  albumTracks: { label: 'Album tracks', icon: 'disc' },
  batchMetadata: { label: 'Track metadata', icon: 'list' },
  searchDatasets: { label: 'Dataset search', icon: 'database' },
  getDatasetDetails: { label: 'Dataset details', icon: 'file' },
  listGroups: { label: 'Dataset groups', icon: 'folder' },
  listTags: { label: 'Dataset tags', icon: 'tag' },
  listOrganizations: { label: 'Publishers', icon: 'building' },
  queryDatastore: { label: 'Datastore query', icon: 'table' },
  web_search_brave: { label: 'Brave search', icon: 'search' },
  web_search_google: { label: 'Google search', icon: 'globe' },
  web_search_searxng: { label: 'SearXNG search', icon: 'search' },
  local_search_brave: { label: 'Places', icon: 'search' },
  llm_context_brave: { label: 'Web context', icon: 'page' },
  answer_brave: { label: 'Brave answer', icon: 'sparkle' },
  web_fetch: { label: 'Fetch page', icon: 'page' },
};

Object.assign(TOOLS, PLAYLIST_TOOLS);

/**
 * LABEL_KEYS names the i18n.js string of each known tool's friendly name
 * (TOOLS' label is the English one, for a tool without a string).
 */
const LABEL_KEYS = {
  semanticSearch: 'toolSemanticSearch',
  tidalSearch: 'toolTidalSearch',
  albumTracks: 'toolAlbumTracks',
  batchMetadata: 'toolBatchMetadata',
  searchDatasets: 'toolSearchDatasets',
  getDatasetDetails: 'toolDatasetDetails',
  listGroups: 'toolListGroups',
  listTags: 'toolListTags',
  listOrganizations: 'toolPublishers',
  queryDatastore: 'toolQueryDatastore',
  searchResources: 'toolSearchResources',
  getResourceDetails: 'toolResourceDetails',
  previewResource: 'toolPreviewResource',
  web_search_brave: 'toolBraveSearch',
  web_search_google: 'toolGoogleSearch',
  web_search_searxng: 'toolSearxngSearch',
  news_search_brave: 'toolNewsSearch',
  image_search_brave: 'toolImageSearch',
  video_search_brave: 'toolVideoSearch',
  local_search_brave: 'toolPlaces',
  llm_context_brave: 'toolWebContext',
  answer_brave: 'toolBraveAnswer',
  web_fetch: 'toolFetchPage',
  suggestPlaylist: 'toolPlaylist',
  savePlaylistToTidal: 'toolSavePlaylist',
};

/** toolLabel returns the friendly name of a tool in the page's language. */
export function toolLabel(name) {
  if (typeof name === 'string' && Object.hasOwn(LABEL_KEYS, name)) return t(LABEL_KEYS[name]);
  if (typeof name === 'string' && Object.hasOwn(TOOLS, name)) return TOOLS[name].label;
  // An attached MCP server's tool is "<server>__<tool>".
  const i = typeof name === 'string' ? name.indexOf('__') : -1;
  if (i > 0 && i < name.length - 2) return t('toolOfServer', { tool: name.slice(i + 2), server: name.slice(0, i) });
  return name || t('toolGeneric');
}

/**
 * ownDir is the direction attribute of a value shown beside its name: the
 * value's own (dir="auto") when it has letters, the page's otherwise, so a
 * number stays next to its name in a right-to-left page instead of being
 * pushed to the far side as a left-to-right line.
 */
function ownDir(text) {
  return /\p{L}/u.test(text) ? 'auto' : null;
}

const STATUS_KEY = {
  pending: 'statusPending',
  executing: 'statusExecuting',
  completed: 'statusCompleted',
  failed: 'statusFailed',
  canceled: 'statusCanceled',
  awaiting: 'statusAwaiting',
};

/** The decisions an approval card offers, in order, with their labels. */
const DECISIONS = [
  { value: 'allow_once', label: 'allowOnce', cls: 'btn-primary' },
  { value: 'allow_always', label: 'allowAlways', cls: 'btn-ghost' },
  { value: 'deny', label: 'deny', cls: 'approval-deny' },
];

// Lists longer than this are cut, with a note, to keep the page responsive.
const MAX_ITEMS = 100;

/**
 * ToolCard renders one tool part and updates in place as its status changes,
 * keeping the expanded state and focus.
 */
export class ToolCard {
  /**
   * onDecide(part, decision), when given, is called with the person's
   * decision on a call waiting for approval.
   */
  constructor(part, uid, onDecide) {
    this.uid = uid;
    this.onDecide = onDecide;
    this.approvalEl = null; // the approval panel while the call waits
    const meta = TOOLS[part.name] || { icon: 'wrench' };
    this.bodyId = `tool-body-${uid}`;
    this.rawId = `tool-raw-${uid}`;
    this.badge = h('span', { class: 'badge status' });
    this.retried = h('span', { class: 'badge badge-retried', hidden: true }, t('retried'));
    this.summary = h('span', { class: 'tool-summary', dir: 'auto' });
    // "3 ms" keeps its order in a right-to-left line.
    this.duration = h('span', { class: 'tool-duration', dir: 'auto' });
    this.head = h('button', {
      type: 'button', class: 'tool-head', 'aria-expanded': 'false', 'aria-controls': this.bodyId,
    },
    h('span', { class: 'tool-icon' }, icon(meta.icon)),
    h('span', { class: 'tool-title' }, h('span', { class: 'tool-name' }, toolLabel(part.name)), this.badge, this.retried),
    this.summary, this.duration, icon('chevron', 'icon chevron'));
    this.content = h('div', { class: 'tool-content' });
    this.rawBtn = h('button', { type: 'button', class: 'btn btn-ghost btn-small raw-toggle', 'aria-expanded': 'false', 'aria-controls': this.rawId }, t('rawJSON'));
    this.raw = h('pre', { class: 'raw-json', id: this.rawId, dir: 'ltr', hidden: true });
    this.body = h('div', { class: 'tool-body', id: this.bodyId, role: 'region', 'aria-label': t('details', { tool: toolLabel(part.name) }), hidden: true },
      this.content, h('div', { class: 'tool-actions' }, this.rawBtn), this.raw);
    this.approvalSlot = h('div', { class: 'approval-slot' });
    this.el = h('div', { class: 'tool-card', 'data-tool': part.name }, this.head, this.approvalSlot, this.body);
    this.head.addEventListener('click', () => this.toggle());
    this.rawBtn.addEventListener('click', () => {
      const open = this.rawBtn.getAttribute('aria-expanded') !== 'true';
      this.rawBtn.setAttribute('aria-expanded', String(open));
      this.raw.hidden = !open;
    });
    this.update(part);
  }

  toggle(force) {
    const open = force === undefined ? this.head.getAttribute('aria-expanded') !== 'true' : force;
    this.head.setAttribute('aria-expanded', String(open));
    this.body.hidden = !open;
    this.el.classList.toggle('open', open);
  }

  update(part) {
    this.el.dataset.status = part.status;
    this.el.dataset.statusHistory = (part.history || [part.status]).join(' ');
    this.el.dataset.toolCallId = part.id;
    this.badge.className = `badge status status-${part.status}`;
    this.badge.textContent = STATUS_KEY[part.status] ? t(STATUS_KEY[part.status]) : part.status;
    this.retried.hidden = !part.wasRetried;
    this.duration.textContent = formatDuration(part.durationMs);
    clear(this.summary);
    if (part.status === 'failed') {
      this.summary.classList.add('is-error');
      this.summary.append(clip(part.error, 160));
    } else {
      this.summary.classList.remove('is-error');
      let line = part.summary;
      if (!line && part.status === 'executing' && part.progress) line = tail(part.progress, 160);
      if (!line && part.status === 'executing') line = describeInput(part.input) || t('working');
      if (!line && part.status === 'canceled') line = t('stoppedBefore');
      this.summary.append(clip(line, 200));
    }
    clear(this.content);
    this.content.appendChild(renderInput(part.input));
    if (part.status === 'failed') this.content.appendChild(renderFailure(part));
    else if (part.status === 'completed') this.content.appendChild(renderResult(part.name, part.result));
    else if (part.status === 'canceled') this.content.appendChild(h('p', { class: 'muted' }, t('callStopped')));
    else if (part.status === 'executing' && part.progress) this.content.appendChild(h('p', { class: 'tool-progress answer-text', dir: 'auto' }, clip(part.progress, 2000)));
    else this.content.appendChild(h('p', { class: 'muted' }, t('waiting')));
    const rawValue = { input: part.input, result: part.result };
    this.raw.textContent = jsonText(rawValue);
    this.renderApproval(part);
  }

  /**
   * renderApproval shows, while the call waits for the person, what it will
   * do with its arguments and the three decisions; it is removed once the
   * resumed turn runs (or denies) the call.
   */
  renderApproval(part) {
    const a = part.status === 'awaiting' ? part.approval : null;
    if (!a) {
      clear(this.approvalSlot);
      this.approvalEl = null;
      return;
    }
    // A re-render replaces the buttons: the keyboard stays on the decision
    // it was on (dropped with the old button, it would fall to the page).
    const focused = this.approvalEl && this.approvalEl.contains(document.activeElement) ? document.activeElement.dataset.decision : '';
    const headId = `approval-head-${this.uid}`;
    const title = clip(a.title || toolLabel(part.name), 120);
    const decided = DECISIONS.find((d) => d.value === a.decision);
    const buttons = DECISIONS.map((d) => {
      const b = h('button', {
        type: 'button', class: `btn btn-small ${d.cls} approval-btn`, 'data-decision': d.value,
        'aria-pressed': String(a.decision === d.value),
      }, t(d.label));
      b.disabled = a.decision !== '' || !this.onDecide;
      b.addEventListener('click', () => {
        if (this.onDecide && !part.approval.decision) this.onDecide(part, d.value);
      });
      return b;
    });
    this.approvalEl = h('div', { class: 'approval', role: 'group', 'aria-labelledby': headId },
      h('p', { class: 'approval-head', id: headId }, icon('alert'), h('span', { dir: 'auto' }, t('approvalWants', { tool: title }))),
      a.what ? h('p', { class: 'approval-what', dir: 'auto' }, clip(a.what, 1024)) : null,
      h('div', { class: 'approval-args', role: 'region', 'aria-label': t('approvalArgs') }, renderArgs(part.input)),
      h('div', { class: 'approval-actions' }, buttons),
      decided ? h('p', { class: 'approval-note muted', role: 'status' }, t('approvalChosen', { decision: t(decided.label) })) : null);
    clear(this.approvalSlot).appendChild(this.approvalEl);
    const again = focused && buttons.find((b) => b.dataset.decision === focused && !b.disabled);
    if (again) again.focus();
  }
}

// The arguments an approval card shows: every field (at most 24), each
// value as text or indented JSON, bounded so that a huge argument cannot
// swamp the page (Raw JSON has the call as the server sent it).
function renderArgs(input) {
  const o = obj(input);
  if (!o || Object.keys(o).length === 0) return h('p', { class: 'muted' }, t('noArguments'));
  const entries = Object.entries(o);
  const dl = h('dl', { class: 'tool-input approval-input' });
  for (const [k, v] of entries.slice(0, 24)) {
    const text = typeof v === 'string' ? v : jsonText(v);
    dl.append(h('dt', { dir: 'auto' }, clip(k, 80)),
      h('dd', { dir: ownDir(text) }, typeof v === 'object' && v !== null ? h('pre', { class: 'json', dir: 'ltr' }, clip(text, 2000)) : clip(text, 2000)));
  }
  if (entries.length > 24) dl.append(h('dt', null, '…'), h('dd', { class: 'muted' }, t('moreFields', { count: formatNumber(entries.length - 24) })));
  return dl;
}

function jsonText(v) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

// describeInput shows the main argument of a call while it runs.
function describeInput(input) {
  const o = obj(input);
  if (!o) return '';
  for (const k of ['query', 'q', 'url', 'id', 'name', 'albumId', 'resource_id']) {
    if (typeof o[k] === 'string' && o[k]) return `“${clip(o[k], 120)}”`;
  }
  if (Array.isArray(o.isrcs)) return t('isrcCount', { n: formatNumber(o.isrcs.length) });
  return '';
}

function renderInput(input) {
  const o = obj(input);
  if (!o || Object.keys(o).length === 0) return document.createDocumentFragment();
  const dl = h('dl', { class: 'tool-input' });
  for (const [k, v] of Object.entries(o).slice(0, 12)) {
    const text = typeof v === 'string' ? v : jsonText(v);
    dl.append(h('dt', { dir: 'auto' }, k), h('dd', { dir: ownDir(text) }, clip(text, 300)));
  }
  return dl;
}

function renderFailure(part) {
  return h('div', { class: 'tool-error', role: 'note' },
    h('p', { class: 'tool-error-msg' }, icon('alert'), h('span', { dir: 'auto' }, part.error)),
    h('p', { class: 'tool-error-meta' },
      part.errorCode ? h('code', null, part.errorCode) : null,
      h('span', null, part.wasRetried ? t('retriedGaveUp') : part.retryable ? t('retryable') : t('notRetried'))));
}

/**
 * renderers maps a tool name to the function that renders its result
 * envelope (an object) as a node. registerRenderer adds or replaces one.
 */
const renderers = new Map();

/**
 * registerRenderer makes fn render the results of tool name. fn gets the
 * result envelope (a plain object) and returns a node; it must build the DOM
 * with dom.js's helpers (text only), like the renderers here. The helpers it
 * may share are exported below (section, paged, trackList…).
 */
export function registerRenderer(name, fn) {
  if (typeof name === 'string' && name && typeof fn === 'function') renderers.set(name, fn);
}

/** renderResult renders a tool's result envelope for people. */
export function renderResult(name, result) {
  const r = obj(result);
  if (!r) return h('pre', { class: 'json', dir: 'ltr' }, jsonText(result));
  const fn = renderers.get(name);
  const out = fn ? fn(r) : genericResult(r);
  // A tool's note about the result as a whole comes first; it is the
  // tool's text (semanticSearch's note: words of the query the index could
  // not read; web_fetch's notice: the content may be incomplete, or the page
  // needs JavaScript).
  const note = str(r.note) || str(r.notice);
  if (note && out instanceof Element) out.prepend(h('p', { class: 'result-note', role: 'note', dir: 'auto' }, clip(note, 500)));
  return out;
}

// Bounds of the generic card: what an unknown tool (an attached MCP
// server's) may return is not known, so the page shows only so much.
const GENERIC = { texts: 8, textChars: 4000, rows: 200, cols: 12, cellChars: 200 };

/**
 * genericResult renders the result of a tool the page has no renderer for,
 * as an attached MCP server's tools return it ({content: [blocks],
 * structuredContent}): its text blocks, and structured content that holds
 * an array of flat objects as a table. Anything else shows as JSON.
 */
function genericResult(r) {
  const out = [];
  const blocks = arr(r.content).map(obj).filter(Boolean);
  for (const b of blocks.filter((c) => typeof c.text === 'string' && c.text.trim()).slice(0, GENERIC.texts)) {
    out.push(h('pre', { class: 'generic-text', dir: 'auto' }, clip(b.text, GENERIC.textChars)));
  }
  const flat = flatRows(r.structuredContent);
  if (flat) out.push(flatTable(flat.key, flat.rows));
  if (out.length === 0) return h('pre', { class: 'json', dir: 'ltr' }, jsonText(stripEnvelope(r)));
  return section(...out);
}

function isFlat(o) {
  return o !== null && Object.values(o).every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
}

/**
 * flatRows finds, in structured content, an array of flat objects (values
 * only strings, numbers, booleans or null): the content itself, its
 * "value" (a non-object the host wrapped) or its first such field.
 */
function flatRows(sc) {
  const candidates = [];
  if (Array.isArray(sc)) candidates.push(['', sc]);
  const o = obj(sc);
  if (o) for (const [k, v] of Object.entries(o)) if (Array.isArray(v)) candidates.push([k === 'value' ? '' : k, v]);
  for (const [key, list] of candidates) {
    const rows = list.map(obj);
    if (rows.length > 0 && rows.every((x) => x && isFlat(x))) return { key, rows };
  }
  return null;
}

function flatTable(key, rows) {
  const cols = [];
  for (const r of rows.slice(0, GENERIC.rows)) {
    for (const k of Object.keys(r)) if (!cols.includes(k) && cols.length < GENERIC.cols) cols.push(k);
  }
  const shown = rows.slice(0, GENERIC.rows);
  const tbody = h('tbody');
  const table = h('div', { class: 'md-table generic-table' }, h('table', null,
    key ? h('caption', { dir: 'auto' }, key) : null,
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col', dir: 'auto' }, clip(c, 60))))),
    tbody));
  scrollRegion(table, t('tableScrolls'));
  return [
    h('p', { class: 'muted' }, t('rowsOf', { shown: formatNumber(shown.length), total: formatNumber(rows.length) })),
    paged(shown, PAGE.rows, table, tbody, (rec) => h('tr', null, cols.map((c) => h('td', { dir: 'auto' }, clip(cellText(rec[c]), GENERIC.cellChars))))),
  ];
}

function stripEnvelope(r) {
  const { success, summary, durationMs, ...rest } = r;
  return rest;
}

/** section wraps a result's parts. */
export function section(...children) {
  return h('div', { class: 'result' }, children);
}

function empty() {
  return h('p', { class: 'muted' }, t('noResults'));
}

// Page sizes of the lists inside cards.
const PAGE = { tracks: 10, albums: 12, datasets: 5, web: 5, rows: 10, resources: 10 };

let pagerSeq = 0;

/**
 * paged shows items a page at a time inside a card: container (a list or
 * table body) holds the page's items, made by renderItem, and Previous/Next
 * buttons below it move through the pages. A single page gets no buttons.
 * Returns [wrapper, nav]; the caller places the wrapper.
 */
export function paged(items, size, wrapper, container, renderItem) {
  const list = items.slice(0, MAX_ITEMS * 10);
  const pages = Math.max(1, Math.ceil(list.length / size));
  let page = 0;
  pagerSeq += 1;
  const id = `pager-${pagerSeq}`;
  if (!container.id) container.id = `${id}-items`;
  const status = h('span', { class: 'pager-status', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'btn btn-ghost btn-small pager-prev', 'aria-controls': container.id }, t('previous'));
  const next = h('button', { type: 'button', class: 'btn btn-ghost btn-small pager-next', 'aria-controls': container.id }, t('next'));
  const show = () => {
    clear(container);
    const from = page * size;
    for (const it of list.slice(from, from + size)) container.appendChild(renderItem(it, from));
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    status.textContent = t('itemsRange', { from: formatNumber(from + 1), to: formatNumber(Math.min(from + size, list.length)), total: formatNumber(list.length) });
    wrapper.dataset.page = String(page + 1);
  };
  prev.addEventListener('click', () => {
    if (page > 0) page -= 1;
    show();
  });
  next.addEventListener('click', () => {
    if (page < pages - 1) page += 1;
    show();
  });
  show();
  const nav = pages > 1 ? h('div', { class: 'pager', role: 'group', 'aria-label': t('pageOf', { page: 1, pages }) }, prev, status, next) : null;
  if (nav) {
    const label = () => nav.setAttribute('aria-label', t('pageOf', { page: page + 1, pages }));
    prev.addEventListener('click', label);
    next.addEventListener('click', label);
  }
  return [wrapper, nav];
}

/**
 * trackList renders tracks with artwork, badges and the matching caption.
 * A badge that every row carries tells no row from another, so it is left
 * out (semantic search: every result is indexed); when every track is in the
 * library, one line above the list says so instead.
 */
export function trackList(tracks) {
  const list = arr(tracks).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const varies = (key) => list.length === 1 || list.some((tr) => tr[key] !== true);
  const showLibrary = varies('inLibrary');
  const showIndexed = varies('isIndexed');
  const ol = h('ol', { class: 'tracks' });
  const rows = paged(list, PAGE.tracks, ol, ol, (tr) => {
    const links = trackLinks(tr);
    const badges = h('span', { class: 'track-badges' },
      showLibrary && tr.inLibrary === true ? h('span', { class: 'badge badge-library' }, t('inLibrary')) : null,
      showIndexed && tr.isIndexed === true ? h('span', { class: 'badge badge-indexed' }, t('indexed')) : null);
    const score = num(tr.score);
    // The caption says why the track matched: semantic search's matched
    // line (the interpretation's sentence or lyrics line nearest the query),
    // else a caption field or the interpretation.
    const matched = str(tr.matched);
    const caption = matched || str(tr.caption) || str(tr.matchedCaption) || str(tr.interpretation);
    return h('li', { class: 'track' },
      artwork(tr.artworkUrl, ''),
      h('span', { class: 'track-main' },
        h('span', { class: 'track-title', dir: 'auto' }, str(tr.title) || t('untitled')),
        h('span', { class: 'track-sub', dir: 'auto' }, [str(tr.artist), str(tr.album)].filter(Boolean).join(' · ')),
        caption ? h('span', { class: matched ? 'track-caption track-why' : 'track-caption', dir: 'auto', title: matched ? t('whyMatched') : null }, clip(caption, 220)) : null,
        // The audio features a mood word of the query was weighed against.
        str(tr.matchedFeatures) ? h('span', { class: 'track-caption track-features', dir: 'ltr', title: t('whyFeatures') }, clip(str(tr.matchedFeatures), 120)) : null,
        links.length ? h('span', { class: 'track-links' }, links) : null),
      badges,
      h('span', { class: 'track-score', title: score !== null ? t('similarity') : null }, score !== null ? score.toFixed(2) : ''),
      h('span', { class: 'track-time' }, formatTrackTime(tr.duration)));
  });
  const note = !showLibrary && list[0].inLibrary === true ? h('p', { class: 'muted tracks-note' }, t('allInLibrary')) : null;
  return [note, ...rows];
}

function albumGrid(albums) {
  const list = arr(albums).map(obj).filter(Boolean);
  const grid = h('ul', { class: 'albums' });
  return paged(list, PAGE.albums, grid, grid, (a) => {
    const year = str(a.releaseDate).slice(0, 4);
    const tc = num(a.trackCount);
    return h('li', { class: 'album' },
      artwork(a.artworkUrl, '', 'album-art'),
      h('span', { class: 'album-title', dir: 'auto' }, str(a.title) || t('untitled')),
      h('span', { class: 'album-sub', dir: 'auto' }, [str(a.artist), year, tc !== null ? t('trackCount', { n: tc }) : ''].filter(Boolean).join(' · ')),
      a.inLibrary === true ? h('span', { class: 'badge badge-library' }, t('inLibrary')) : null);
  });
}

function albumHeader(a) {
  if (!a || !str(a.title)) return null;
  return h('div', { class: 'album-header' },
    artwork(a.artworkUrl, '', 'album-art'),
    h('span', null, h('strong', { dir: 'auto' }, str(a.title)), h('br'), h('span', { class: 'muted', dir: 'auto' }, str(a.artist))));
}

function orgName(o) {
  if (typeof o === 'string') return o;
  const oo = obj(o);
  return oo ? str(oo.title) || str(oo.name) : '';
}

function chips(items, cls = 'chip') {
  const list = arr(items).map((x) => (typeof x === 'string' ? x : orgName(x))).filter(Boolean);
  if (!list.length) return null;
  return h('span', { class: 'chips' }, list.slice(0, 12).map((x) => h('span', { class: cls, dir: 'auto' }, x)));
}

/** portalLink links a dataset's page on its portal. */
function portalLink(d) {
  const url = str(d.portalUrl) || str(d.datasetUrl);
  return safeURL(url) ? h('span', { class: 'dataset-portal' }, icon('link', 'icon icon-small'), link(url, t('openOnPortal'))) : null;
}

function datasetItem(d) {
  return h('li', { class: 'dataset' },
    h('div', { class: 'dataset-title', dir: 'auto' }, link(str(d.portalUrl) || d.datasetUrl, str(d.title) || str(d.name) || t('untitledDataset'))),
    orgName(d.organization) ? h('div', { class: 'dataset-org', dir: 'auto' }, icon('building', 'icon icon-small'), orgName(d.organization)) : null,
    str(d.description) ? h('p', { class: 'dataset-desc', dir: 'auto' }, clip(d.description, 240)) : null,
    h('div', { class: 'dataset-meta' }, chips(d.formats, 'chip chip-format'),
      str(d.metadata_modified) ? h('span', { class: 'muted' }, t('updated', { date: str(d.metadata_modified).slice(0, 10) })) : null,
      portalLink(d)));
}

function datasetList(datasets) {
  const list = arr(datasets).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const ul = h('ul', { class: 'datasets' });
  return paged(list, PAGE.datasets, ul, ul, datasetItem);
}

function datasetDetails(d) {
  const lic = obj(d.license);
  const resources = arr(d.resources).map(obj).filter(Boolean);
  const ul = h('ul', { class: 'resources' });
  return [
    h('div', { class: 'dataset dataset-single' },
      h('div', { class: 'dataset-title', dir: 'auto' }, link(str(d.portalUrl) || d.datasetUrl, str(d.title) || str(d.name) || t('untitledDataset'))),
      orgName(d.organization) ? h('div', { class: 'dataset-org', dir: 'auto' }, icon('building', 'icon icon-small'), orgName(d.organization)) : null,
      str(d.notes) ? h('p', { class: 'dataset-desc', dir: 'auto' }, clip(d.notes, 600)) : null,
      h('div', { class: 'dataset-meta' }, chips(d.tags),
        lic && (str(lic.title) || str(lic.id)) ? h('span', { class: 'muted', dir: 'auto' }, t('licence', { name: str(lic.title) || str(lic.id) })) : null,
        portalLink(d))),
    resources.length ? h('h4', { class: 'result-heading' }, t('resources', { n: resources.length })) : null,
    resources.length ? paged(resources, PAGE.resources, ul, ul, (r) => h('li', { class: 'resource' },
      str(r.format) ? h('span', { class: 'chip chip-format' }, str(r.format)) : null,
      h('span', { dir: 'auto' }, link(r.url, str(r.name) || str(r.url) || t('resource'), 'resource-name')),
      r.datastore_active === true ? h('span', { class: 'badge badge-indexed' }, t('queryable')) : null,
      str(r.description) ? h('span', { class: 'resource-desc muted', dir: 'auto' }, clip(r.description, 160)) : null)) : null,
  ];
}

function nameList(objects, names) {
  const objs = arr(objects).map(obj).filter(Boolean);
  if (objs.length) {
    return h('ul', { class: 'names' }, objs.slice(0, MAX_ITEMS).map((o) => {
      const count = num(o.package_count) ?? num(o.count);
      return h('li', { class: 'chip', dir: 'auto' }, str(o.display_name) || str(o.title) || str(o.name),
        count !== null ? h('span', { class: 'chip-count' }, String(count)) : null);
    }));
  }
  const list = arr(names).map(str).filter(Boolean);
  if (!list.length) return empty();
  return h('ul', { class: 'names' }, list.slice(0, MAX_ITEMS).map((x) => h('li', { class: 'chip', dir: 'auto' }, x)));
}

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return jsonText(v);
}

/** recordsTable renders datastore rows as a table, a page of rows at a time. */
function recordsTable(r) {
  const records = arr(r.records).map(obj).filter(Boolean);
  let cols = arr(r.fields).map((f) => str(obj(f) && f.id)).filter(Boolean);
  if (!cols.length && records.length) cols = Object.keys(records[0]);
  cols = cols.slice(0, 24);
  if (!records.length) return empty();
  const tbody = h('tbody');
  const table = h('div', { class: 'md-table datastore-table' }, h('table', null,
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col', dir: 'auto' }, c)))),
    tbody));
  scrollRegion(table, t('tableScrolls'));
  return [
    h('p', { class: 'muted' }, t('rowsOf', { shown: formatNumber(records.length), total: formatNumber(num(r.total) ?? records.length) })),
    paged(records, PAGE.rows, table, tbody, (rec) => h('tr', null, cols.map((c) => h('td', { dir: 'auto' }, clip(cellText(rec[c]), 200))))),
  ];
}

/** site names where a web result is from: the publisher, else the host. */
function site(x, href) {
  const named = str(x.source) || str(x.siteName) || str(x.site) || str(obj(x.profile) && x.profile.name);
  if (named) return named;
  return href ? new URL(href).host.replace(/^www\./, '') : '';
}

function webResults(results) {
  const list = arr(results).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const ol = h('ol', { class: 'web-results' });
  return paged(list, PAGE.web, ol, ol, (x) => {
    const href = safeURL(x.url);
    let where = str(x.url);
    if (href) {
      const u = new URL(href);
      where = u.host + (u.pathname === '/' ? '' : u.pathname);
    }
    const from = site(x, href);
    return h('li', { class: 'web-result' },
      h('div', { class: 'web-title', dir: 'auto' }, link(x.url, str(x.title) || str(x.url))),
      h('div', { class: 'web-where' },
        from ? h('span', { class: 'web-site', dir: 'auto' }, from) : null,
        h('span', { class: 'web-url', dir: 'ltr' }, clip(where, 100)),
        str(x.age) ? h('span', { class: 'muted' }, str(x.age)) : null),
      str(x.snippet) || str(x.description) ? h('p', { class: 'web-snippet', dir: 'auto' }, clip(str(x.snippet) || str(x.description), 400)) : null);
  });
}

/** places is local_search_brave: each place's name, address, rating, hours and a map link. */
function places(list) {
  const items = arr(list).map(obj).filter(Boolean);
  if (items.length === 0) return empty();
  const ol = h('ol', { class: 'web-results' });
  return paged(items, PAGE.web, ol, ol, (p) => {
    const lat = num(p.latitude);
    const lon = num(p.longitude);
    const rating = num(p.rating);
    const facts = [
      rating !== null ? `★ ${rating}${num(p.rating_max) ? '/' + num(p.rating_max) : ''}${num(p.reviews) ? ` (${formatNumber(p.reviews)})` : ''}` : '',
      str(p.price_range), str(p.hours_today), str(p.phone), str(p.distance),
    ].filter(Boolean);
    return h('li', { class: 'web-result place' },
      h('div', { class: 'web-title', dir: 'auto' }, str(p.url) ? link(p.url, str(p.name) || str(p.url)) : str(p.name)),
      h('div', { class: 'web-where' },
        str(p.address) ? h('span', { class: 'web-site', dir: 'auto' }, str(p.address)) : null,
        lat !== null && lon !== null ? link(`https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=17/${lat}/${lon}`, t('map'), 'place-map') : null),
      facts.length ? h('p', { class: 'muted', dir: 'auto' }, facts.join(' · ')) : null,
      str(p.description) ? h('p', { class: 'web-snippet', dir: 'auto' }, clip(str(p.description), 300)) : null);
  });
}

/** tail is the last n characters of text, marked as cut when shorter. */
function tail(text, n) {
  const chars = Array.from(text);
  return chars.length <= n ? text : '…' + chars.slice(-n).join('');
}

/** answer is answer_brave: the answer's text, then its numbered sources. */
function answer(r) {
  const cites = arr(r.citations).map(obj).filter(Boolean);
  return [
    h('p', { class: 'answer-text', dir: 'auto' }, clip(str(r.answer), 4000)),
    cites.length ? webResults(cites.map((c) => ({ title: `[${num(c.number) ?? ''}] ${str(c.url)}`, url: c.url, snippet: c.snippet }))) : null,
  ];
}

function fetchedPage(r) {
  const content = str(r.content);
  const lines = content.split('\n');
  const first = lines.slice(0, 20).join('\n');
  const total = num(r.totalLines) ?? lines.length;
  return [
    h('div', { class: 'web-title', dir: 'auto' }, link(r.url, str(r.title) || str(r.url) || t('fetchedPage'))),
    str(r.url) ? h('div', { class: 'web-url', dir: 'ltr' }, clip(r.url, 120)) : null,
    h('pre', { class: 'page-excerpt', dir: 'auto' }, clip(first, 3000)),
    h('p', { class: 'muted' }, t('linesOf', { shown: Math.min(20, lines.length), total })),
  ];
}

// The built-in renderers, one per tool.
for (const name of Object.keys(PLAYLIST_TOOLS)) {
  registerRenderer(name, (r) => section(renderPlaylistResult(name, r)));
}
/** resourceItem is one CKAN resource: format, name linked to its portal page, size. */
function resourceItem(r) {
  const size = num(r.size);
  return h('li', { class: 'resource' },
    str(r.format) ? h('span', { class: 'chip chip-format' }, str(r.format)) : null,
    h('span', { dir: 'auto' }, link(str(r.portalUrl) || r.url, str(r.name) || str(r.url) || t('resource'), 'resource-name')),
    r.datastore_active === true ? h('span', { class: 'badge badge-indexed' }, t('queryable')) : null,
    size !== null && size > 0 ? h('span', { class: 'muted', dir: 'auto' }, formatBytes(size)) : null,
    str(r.description) ? h('span', { class: 'resource-desc muted', dir: 'auto' }, clip(r.description, 160)) : null);
}
function resourceList(resources) {
  const list = arr(resources).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const ul = h('ul', { class: 'resources' });
  return paged(list, PAGE.resources, ul, ul, resourceItem);
}
/** resourceDetails is getResourceDetails: the resource, then its datastore columns. */
function resourceDetails(r) {
  const ds = obj(r.datastore);
  const fields = ds ? arr(ds.fields).map(obj).filter(Boolean) : [];
  return [
    h('ul', { class: 'resources' }, resourceItem(r)),
    fields.length ? h('div', { class: 'dataset-meta' }, fields.slice(0, 60).map((f) =>
      h('span', { class: 'chip', dir: 'auto' }, str(f.id) + (str(f.type) ? ' · ' + str(f.type) : '')))) : null,
    portalLink(r),
  ];
}
/** previewTable is previewResource: the guessed columns and the first rows. */
function previewTable(r) {
  const cols = arr(r.columns).map(obj).filter(Boolean).slice(0, 24);
  const records = arr(r.rows).map(obj).filter(Boolean);
  if (!cols.length || !records.length) return empty();
  const tbody = h('tbody');
  const table = h('div', { class: 'md-table datastore-table' }, h('table', null,
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col', dir: 'auto', title: str(c.type) }, str(c.name))))),
    tbody));
  scrollRegion(table, t('tableScrolls'));
  return [
    h('p', { class: 'muted', dir: 'auto' }, [str(r.format).toUpperCase(), str(r.sheet), str(r.encoding)].filter(Boolean).join(' · ')),
    paged(records, PAGE.rows, table, tbody, (rec) => h('tr', null, cols.map((c) => h('td', { dir: 'auto' }, clip(cellText(rec[str(c.name)]), 200))))),
    portalLink(r),
  ];
}

registerRenderer('semanticSearch', (r) => section(trackList(r.tracks)));
registerRenderer('tidalSearch', (r) => section(
  arr(r.tracks).length ? [h('h4', { class: 'result-heading' }, t('tracks')), trackList(r.tracks)] : null,
  arr(r.albums).length ? [h('h4', { class: 'result-heading' }, t('albums')), albumGrid(r.albums)] : null,
  !arr(r.tracks).length && !arr(r.albums).length ? empty() : null));
registerRenderer('albumTracks', (r) => section(albumHeader(obj(r.album) || { ...r, title: r.title || r.albumTitle }), trackList(r.tracks)));
registerRenderer('batchMetadata', (r) => section(trackList(r.tracks),
  arr(r.notFound).length ? h('p', { class: 'muted' }, t('notFound'), arr(r.notFound).map(str).filter(Boolean).join(', ')) : null));
registerRenderer('searchDatasets', (r) => section(
  num(r.total) !== null ? h('p', { class: 'muted' }, t('datasetsOf', { shown: arr(r.datasets).length, total: r.total })) : null,
  datasetList(r.datasets)));
registerRenderer('getDatasetDetails', (r) => section(datasetDetails(r)));
registerRenderer('listGroups', (r) => section(nameList(r.groups, r.names)));
registerRenderer('listOrganizations', (r) => section(nameList(r.organizations, r.names)));
registerRenderer('listTags', (r) => section(nameList(r.tags, r.names)));
registerRenderer('queryDatastore', (r) => section(recordsTable(r)));
registerRenderer('searchResources', (r) => section(
  num(r.count) !== null ? h('p', { class: 'muted' }, `${formatNumber(arr(r.resources).length)} / ${formatNumber(r.count)}`) : null,
  resourceList(r.resources)));
registerRenderer('getResourceDetails', (r) => section(resourceDetails(r)));
registerRenderer('previewResource', (r) => section(previewTable(r)));
registerRenderer('news_search_brave', (r) => section(webResults(r.results)));
registerRenderer('image_search_brave', (r) => section(webResults(r.results)));
registerRenderer('video_search_brave', (r) => section(webResults(r.results)));
registerRenderer('web_search_brave', (r) => section(webResults(r.results)));
registerRenderer('web_search_google', (r) => section(webResults(r.results)));
registerRenderer('web_search_searxng', (r) => section(webResults(r.results)));
registerRenderer('local_search_brave', (r) => section(places(r.places)));
registerRenderer('llm_context_brave', (r) => section(webResults(arr(r.sources).map(obj).filter(Boolean).map((x) => (
  { title: x.title, url: x.url, source: x.host, age: x.date, snippet: arr(x.snippets).map(str).join(' … ') })))));
registerRenderer('answer_brave', (r) => section(answer(r)));
registerRenderer('web_fetch', (r) => section(fetchedPage(r)));
