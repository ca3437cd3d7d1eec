// Tool invocation cards: a header button (icon, friendly name, status,
// summary, duration) that expands a region with the full result rendered per
// tool, plus a Raw JSON view. Everything from the tool is untrusted: it only
// reaches the page as text nodes, http(s) links and https artwork.

import {
  h, clear, icon, link, artwork, str, num, arr, obj, clip, formatDuration, formatTrackTime, safeURL,
} from './dom.js';
import { PLAYLIST_TOOLS, renderPlaylistResult } from './playlist.js';

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
  web_fetch: { label: 'Fetch page', icon: 'page' },
};

Object.assign(TOOLS, PLAYLIST_TOOLS);

/** toolLabel returns the friendly name of a tool. */
export function toolLabel(name) {
  return (TOOLS[name] && TOOLS[name].label) || name || 'Tool';
}

const STATUS_LABEL = {
  pending: 'Pending',
  executing: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Stopped',
};

// Lists longer than this are cut, with a note, to keep the page responsive.
const MAX_ITEMS = 100;

/**
 * ToolCard renders one tool part and updates in place as its status changes,
 * keeping the expanded state and focus.
 */
export class ToolCard {
  constructor(part, uid) {
    const meta = TOOLS[part.name] || { icon: 'wrench' };
    this.bodyId = `tool-body-${uid}`;
    this.rawId = `tool-raw-${uid}`;
    this.badge = h('span', { class: 'badge status' });
    this.retried = h('span', { class: 'badge badge-retried', hidden: true }, 'Retried');
    this.summary = h('span', { class: 'tool-summary' });
    this.duration = h('span', { class: 'tool-duration' });
    this.head = h('button', {
      type: 'button', class: 'tool-head', 'aria-expanded': 'false', 'aria-controls': this.bodyId,
    },
    h('span', { class: 'tool-icon' }, icon(meta.icon)),
    h('span', { class: 'tool-title' }, h('span', { class: 'tool-name' }, toolLabel(part.name)), this.badge, this.retried),
    this.summary, this.duration, icon('chevron', 'icon chevron'));
    this.content = h('div', { class: 'tool-content' });
    this.rawBtn = h('button', { type: 'button', class: 'btn btn-ghost btn-small raw-toggle', 'aria-expanded': 'false', 'aria-controls': this.rawId }, 'Raw JSON');
    this.raw = h('pre', { class: 'raw-json', id: this.rawId, hidden: true });
    this.body = h('div', { class: 'tool-body', id: this.bodyId, role: 'region', 'aria-label': toolLabel(part.name) + ' details', hidden: true },
      this.content, h('div', { class: 'tool-actions' }, this.rawBtn), this.raw);
    this.el = h('div', { class: 'tool-card', 'data-tool': part.name }, this.head, this.body);
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
    this.badge.textContent = STATUS_LABEL[part.status] || part.status;
    this.retried.hidden = !part.wasRetried;
    this.duration.textContent = formatDuration(part.durationMs);
    clear(this.summary);
    if (part.status === 'failed') {
      this.summary.classList.add('is-error');
      this.summary.append(clip(part.error, 160));
    } else {
      this.summary.classList.remove('is-error');
      let line = part.summary;
      if (!line && part.status === 'executing') line = describeInput(part.input) || 'Working…';
      if (!line && part.status === 'canceled') line = 'Stopped before it finished';
      this.summary.append(clip(line, 200));
    }
    clear(this.content);
    this.content.appendChild(renderInput(part.input));
    if (part.status === 'failed') this.content.appendChild(renderFailure(part));
    else if (part.status === 'completed') this.content.appendChild(renderResult(part.name, part.result));
    else if (part.status === 'canceled') this.content.appendChild(h('p', { class: 'muted' }, 'The call was stopped before it returned a result.'));
    else this.content.appendChild(h('p', { class: 'muted' }, 'Waiting for the result…'));
    const rawValue = { input: part.input, result: part.result };
    this.raw.textContent = jsonText(rawValue);
  }
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
  if (Array.isArray(o.isrcs)) return `${o.isrcs.length} ISRCs`;
  return '';
}

function renderInput(input) {
  const o = obj(input);
  if (!o || Object.keys(o).length === 0) return document.createDocumentFragment();
  const dl = h('dl', { class: 'tool-input' });
  for (const [k, v] of Object.entries(o).slice(0, 12)) {
    const text = typeof v === 'string' ? v : jsonText(v);
    dl.append(h('dt', null, k), h('dd', null, clip(text, 300)));
  }
  return dl;
}

function renderFailure(part) {
  return h('div', { class: 'tool-error', role: 'note' },
    h('p', { class: 'tool-error-msg' }, icon('alert'), h('span', null, part.error)),
    h('p', { class: 'tool-error-meta' },
      part.errorCode ? h('code', null, part.errorCode) : null,
      h('span', null, part.wasRetried ? 'Retried once, then gave up.' : part.retryable ? 'Retryable, not retried.' : 'Not retried (not a transient error).')));
}

/** renderResult renders a tool's result envelope for people. */
export function renderResult(name, result) {
  const r = obj(result);
  if (!r) return h('pre', { class: 'json' }, jsonText(result));
  const playlist = renderPlaylistResult(name, r);
  if (playlist) return section(playlist);
  switch (name) {
    case 'semanticSearch':
      return section(trackList(r.tracks));
    case 'tidalSearch':
      return section(
        arr(r.tracks).length ? [h('h4', { class: 'result-heading' }, 'Tracks'), trackList(r.tracks)] : null,
        arr(r.albums).length ? [h('h4', { class: 'result-heading' }, 'Albums'), albumGrid(r.albums)] : null,
        !arr(r.tracks).length && !arr(r.albums).length ? empty() : null);
    case 'albumTracks':
      return section(albumHeader(obj(r.album) || { ...r, title: r.title || r.albumTitle }), trackList(r.tracks));
    case 'batchMetadata':
      return section(trackList(r.tracks),
        arr(r.notFound).length ? h('p', { class: 'muted' }, 'Not found: ', arr(r.notFound).map(str).filter(Boolean).join(', ')) : null);
    case 'searchDatasets':
      return section(
        num(r.total) !== null ? h('p', { class: 'muted' }, `${arr(r.datasets).length} of ${r.total} datasets`) : null,
        datasetList(r.datasets));
    case 'getDatasetDetails':
      return section(datasetDetails(r));
    case 'listGroups':
      return section(nameList(r.groups, r.names));
    case 'listOrganizations':
      return section(nameList(r.organizations, r.names));
    case 'listTags':
      return section(nameList(r.tags, r.names));
    case 'queryDatastore':
      return section(recordsTable(r));
    case 'web_search_brave':
    case 'web_search_google':
      return section(webResults(r.results));
    case 'web_fetch':
      return section(fetchedPage(r));
    default:
      return h('pre', { class: 'json' }, jsonText(stripEnvelope(r)));
  }
}

function stripEnvelope(r) {
  const { success, summary, durationMs, ...rest } = r;
  return rest;
}

function section(...children) {
  return h('div', { class: 'result' }, children);
}

function empty() {
  return h('p', { class: 'muted' }, 'No results.');
}

function more(list) {
  return list.length > MAX_ITEMS ? h('p', { class: 'muted' }, `…and ${list.length - MAX_ITEMS} more (see Raw JSON).`) : null;
}

function trackList(tracks) {
  const list = arr(tracks).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const ol = h('ol', { class: 'tracks' });
  for (const t of list.slice(0, MAX_ITEMS)) {
    const badges = h('span', { class: 'track-badges' },
      t.inLibrary === true ? h('span', { class: 'badge badge-library' }, 'In library') : null,
      t.isIndexed === true ? h('span', { class: 'badge badge-indexed' }, 'Indexed') : null);
    const score = num(t.score);
    ol.appendChild(h('li', { class: 'track' },
      artwork(t.artworkUrl, ''),
      h('span', { class: 'track-main' },
        h('span', { class: 'track-title' }, str(t.title) || 'Untitled'),
        h('span', { class: 'track-sub' }, [str(t.artist), str(t.album)].filter(Boolean).join(' · '))),
      badges,
      h('span', { class: 'track-score', title: score !== null ? 'Similarity score' : null }, score !== null ? score.toFixed(2) : ''),
      h('span', { class: 'track-time' }, formatTrackTime(t.duration))));
  }
  return [ol, more(list)];
}

function albumGrid(albums) {
  const list = arr(albums).map(obj).filter(Boolean);
  const grid = h('ul', { class: 'albums' });
  for (const a of list.slice(0, MAX_ITEMS)) {
    const year = str(a.releaseDate).slice(0, 4);
    const tc = num(a.trackCount);
    grid.appendChild(h('li', { class: 'album' },
      artwork(a.artworkUrl, '', 'album-art'),
      h('span', { class: 'album-title' }, str(a.title) || 'Untitled'),
      h('span', { class: 'album-sub' }, [str(a.artist), year, tc !== null ? `${tc} tracks` : ''].filter(Boolean).join(' · ')),
      a.inLibrary === true ? h('span', { class: 'badge badge-library' }, 'In library') : null));
  }
  return [grid, more(list)];
}

function albumHeader(a) {
  if (!a || !str(a.title)) return null;
  return h('div', { class: 'album-header' },
    artwork(a.artworkUrl, '', 'album-art'),
    h('span', null, h('strong', null, str(a.title)), h('br'), h('span', { class: 'muted' }, str(a.artist))));
}

function orgName(o) {
  if (typeof o === 'string') return o;
  const oo = obj(o);
  return oo ? str(oo.title) || str(oo.name) : '';
}

function chips(items, cls = 'chip') {
  const list = arr(items).map((x) => (typeof x === 'string' ? x : orgName(x))).filter(Boolean);
  if (!list.length) return null;
  return h('span', { class: 'chips' }, list.slice(0, 12).map((x) => h('span', { class: cls }, x)));
}

function datasetList(datasets) {
  const list = arr(datasets).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  const ul = h('ul', { class: 'datasets' });
  for (const d of list.slice(0, MAX_ITEMS)) {
    ul.appendChild(h('li', { class: 'dataset' },
      h('div', { class: 'dataset-title' }, link(d.datasetUrl, str(d.title) || str(d.name) || 'Untitled dataset')),
      orgName(d.organization) ? h('div', { class: 'dataset-org' }, icon('building', 'icon icon-small'), orgName(d.organization)) : null,
      str(d.description) ? h('p', { class: 'dataset-desc' }, clip(d.description, 240)) : null,
      h('div', { class: 'dataset-meta' }, chips(d.formats, 'chip chip-format'),
        str(d.metadata_modified) ? h('span', { class: 'muted' }, 'Updated ' + str(d.metadata_modified).slice(0, 10)) : null)));
  }
  return [ul, more(list)];
}

function datasetDetails(d) {
  const lic = obj(d.license);
  const resources = arr(d.resources).map(obj).filter(Boolean);
  return [
    h('div', { class: 'dataset dataset-single' },
      h('div', { class: 'dataset-title' }, link(d.datasetUrl, str(d.title) || str(d.name) || 'Untitled dataset')),
      orgName(d.organization) ? h('div', { class: 'dataset-org' }, icon('building', 'icon icon-small'), orgName(d.organization)) : null,
      str(d.notes) ? h('p', { class: 'dataset-desc' }, clip(d.notes, 600)) : null,
      h('div', { class: 'dataset-meta' }, chips(d.tags),
        lic && (str(lic.title) || str(lic.id)) ? h('span', { class: 'muted' }, 'Licence: ' + (str(lic.title) || str(lic.id))) : null)),
    resources.length ? h('h4', { class: 'result-heading' }, `Resources (${resources.length})`) : null,
    resources.length ? h('ul', { class: 'resources' }, resources.slice(0, MAX_ITEMS).map((r) => h('li', { class: 'resource' },
      str(r.format) ? h('span', { class: 'chip chip-format' }, str(r.format)) : null,
      link(r.url, str(r.name) || str(r.url) || 'Resource', 'resource-name'),
      r.datastore_active === true ? h('span', { class: 'badge badge-indexed' }, 'Queryable') : null,
      str(r.description) ? h('span', { class: 'resource-desc muted' }, clip(r.description, 160)) : null))) : null,
  ];
}

function nameList(objects, names) {
  const objs = arr(objects).map(obj).filter(Boolean);
  if (objs.length) {
    return h('ul', { class: 'names' }, objs.slice(0, MAX_ITEMS).map((o) => {
      const count = num(o.package_count) ?? num(o.count);
      return h('li', { class: 'chip' }, str(o.display_name) || str(o.title) || str(o.name),
        count !== null ? h('span', { class: 'chip-count' }, String(count)) : null);
    }));
  }
  const list = arr(names).map(str).filter(Boolean);
  if (!list.length) return empty();
  return h('ul', { class: 'names' }, list.slice(0, MAX_ITEMS).map((x) => h('li', { class: 'chip' }, x)));
}

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return jsonText(v);
}

function recordsTable(r) {
  const records = arr(r.records).map(obj).filter(Boolean);
  let cols = arr(r.fields).map((f) => str(obj(f) && f.id)).filter(Boolean);
  if (!cols.length && records.length) cols = Object.keys(records[0]);
  cols = cols.slice(0, 24);
  if (!records.length) return empty();
  const shown = records.slice(0, 50);
  return [
    h('p', { class: 'muted' }, `${records.length} of ${num(r.total) ?? records.length} rows`),
    h('div', { class: 'md-table' }, h('table', null,
      h('thead', null, h('tr', null, cols.map((c) => h('th', null, c)))),
      h('tbody', null, shown.map((rec) => h('tr', null, cols.map((c) => h('td', null, clip(cellText(rec[c]), 200)))))))),
  ];
}

function webResults(results) {
  const list = arr(results).map(obj).filter(Boolean);
  if (list.length === 0) return empty();
  return h('ol', { class: 'web-results' }, list.slice(0, MAX_ITEMS).map((x) => {
    const href = safeURL(x.url);
    let where = str(x.url);
    if (href) {
      const u = new URL(href);
      where = u.host + (u.pathname === '/' ? '' : u.pathname);
    }
    return h('li', { class: 'web-result' },
      h('div', { class: 'web-title' }, link(x.url, str(x.title) || str(x.url))),
      h('div', { class: 'web-url' }, clip(where, 100)),
      str(x.snippet) ? h('p', { class: 'web-snippet' }, clip(x.snippet, 400)) : null);
  }));
}

function fetchedPage(r) {
  const content = str(r.content);
  const lines = content.split('\n');
  const first = lines.slice(0, 20).join('\n');
  const total = num(r.totalLines) ?? lines.length;
  return [
    h('div', { class: 'web-title' }, link(r.url, str(r.title) || str(r.url) || 'Fetched page')),
    str(r.url) ? h('div', { class: 'web-url' }, clip(r.url, 120)) : null,
    h('pre', { class: 'page-excerpt' }, clip(first, 3000)),
    h('p', { class: 'muted' }, `Showing ${Math.min(20, lines.length)} of ${total} lines`),
  ];
}
