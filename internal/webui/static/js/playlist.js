// The playlist card: what suggestPlaylist (and savePlaylistToTidal) return,
// rendered as an artwork grid, the tracks in order with the agent's
// reasoning behind a disclosure, the total time, an export menu (M3U8 and
// JSON downloads from /api/playlists/{id}/export) and a "Save to Tidal"
// button (POST /api/tools/savePlaylistToTidal). It is drawn from the stored
// tool result, so it survives a reload; whether the playlist was saved since
// is asked of GET /api/playlists/{id}. Everything from the tool is untrusted
// and reaches the page only as text nodes, https artwork and http(s) links.

import { h, artwork, str, num, arr, obj, clip, formatTrackTime, icon, link, clear } from './dom.js';
import { Client } from './api.js';
// t is the name of a track in this file's loops: the lookup is tr.
import { t as tr, formatNumber, formatUnit } from './i18n.js';

// The stylesheet is linked once, on first use (CSP allows 'self' styles).
let styled = false;
function ensureStyles() {
  if (styled || typeof document === 'undefined') return;
  styled = true;
  document.head.appendChild(h('link', { rel: 'stylesheet', href: '/assets/playlist.css' }));
}

// A client without a token prompt: the page's token is in sessionStorage
// already when there is one (the page asked for it to show this card).
const api = new Client(async () => null);

/** PLAYLIST_TOOLS names the playlist tools and their icons, for cards.js. */
export const PLAYLIST_TOOLS = {
  suggestPlaylist: { label: 'Playlist', icon: 'music' },
  savePlaylistToTidal: { label: 'Save to Tidal', icon: 'link' },
};

/**
 * formatTotal renders seconds as "48 min" or "1 hr 2 min" in the page's
 * language, each number with its unit in that language's order (Intl's unit
 * style, as formatDuration does).
 */
export function formatTotal(sec) {
  sec = num(sec);
  if (sec === null || sec < 0) return '';
  const m = Math.round(sec / 60);
  return m < 60 ? formatUnit(m, 'minute') : formatUnit(Math.floor(m / 60), 'hour') + ' ' + formatUnit(m % 60, 'minute');
}

/**
 * renderPlaylistResult renders a playlist tool's result, or returns null for
 * another tool (cards.js then renders it as usual).
 */
export function renderPlaylistResult(name, result) {
  const r = obj(result);
  if (!r) return null;
  if (name === 'suggestPlaylist') return playlistCard(r);
  if (name === 'savePlaylistToTidal') return savedNote(r);
  return null;
}

// Playlist ids are UUIDs: anything else is not put in a URL.
const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

function playlistCard(r) {
  ensureStyles();
  const id = ID_RE.test(str(r.playlistId)) ? str(r.playlistId) : '';
  const tracks = arr(r.tracks).map(obj).filter(Boolean).slice(0, 100);
  const unresolved = arr(r.unresolved).map(obj).filter(Boolean).slice(0, 100);
  const total = num(r.totalDuration) ?? tracks.reduce((s, t) => s + (num(t.duration) || 0), 0);

  // Up to four distinct covers, as a 2×2 grid.
  const covers = [];
  for (const t of tracks) {
    const u = str(t.artworkUrl);
    if (u && !covers.includes(u)) covers.push(u);
    if (covers.length === 4) break;
  }
  const grid = h('div', { class: ['pl-grid', covers.length < 4 ? 'pl-grid-one' : null], 'aria-hidden': 'true' },
    (covers.length < 4 ? covers.slice(0, 1) : covers).map((u) => artwork(u, '', 'pl-cover')),
    covers.length === 0 ? artwork('', '', 'pl-cover') : null);

  const status = h('p', { class: 'pl-status', role: 'status', 'aria-live': 'polite' });
  const saveBtn = h('button', { type: 'button', class: 'btn btn-small pl-save', disabled: !id }, icon('link', 'icon icon-small'), tr('plSave'));
  const exportM3U = h('button', { type: 'button', class: 'btn btn-ghost btn-small pl-export', 'data-format': 'm3u8', disabled: !id }, tr('plExportM3U'));
  const exportJSON = h('button', { type: 'button', class: 'btn btn-ghost btn-small pl-export', 'data-format': 'json', disabled: !id }, tr('plExportJSON'));

  const list = h('ol', { class: 'pl-tracks' }, tracks.map((t, i) => {
    const reasoning = str(t.reasoning);
    return h('li', { class: 'pl-track' },
      h('span', { class: 'pl-pos' }, String(i + 1)),
      artwork(t.artworkUrl, '', 'art'),
      h('span', { class: 'pl-main' },
        h('span', { class: 'track-title' }, str(t.title) || tr('plUntitled')),
        h('span', { class: 'track-sub' }, [str(t.artist), str(t.album)].filter(Boolean).join(' · ')),
        reasoning ? h('details', { class: 'pl-why' }, h('summary', null, tr('plWhy')), h('p', null, clip(reasoning, 1000))) : null),
      h('span', { class: 'track-badges' },
        t.inLibrary === true ? h('span', { class: 'badge badge-library' }, tr('plInLibrary')) : null),
      h('span', { class: 'track-time' }, formatTrackTime(t.duration)));
  }));

  const card = h('div', { class: 'playlist-card', 'data-playlist-id': id },
    h('div', { class: 'pl-head' }, grid,
      h('div', { class: 'pl-meta' },
        h('h4', { class: 'pl-title' }, str(r.title) || tr('plTitle')),
        h('p', { class: 'pl-sub muted' }, tr(tracks.length === 1 ? 'plTrack' : 'plTracks', { n: formatNumber(tracks.length) }) + ' · ',
          h('span', { class: 'pl-total' }, formatTotal(total))),
        h('div', { class: 'pl-actions' }, saveBtn, exportM3U, exportJSON),
        status)),
    list,
    unresolved.length ? h('details', { class: 'pl-unresolved' },
      h('summary', null, tr('plNotFound', { n: formatNumber(unresolved.length) })),
      h('ul', null, unresolved.map((u) => h('li', null,
        [str(u.title), str(u.artist)].filter(Boolean).join(' — ') || str(u.isrc), h('span', { class: 'muted' }, ' · ' + clip(u.reason, 120)))))) : null);

  const say = (text, href) => {
    clear(status);
    status.append(text);
    if (href) status.append(' ', link(href, tr('plOpen')));
  };
  const showSaved = (url) => {
    saveBtn.disabled = true;
    saveBtn.textContent = tr('plSaved');
    say(tr('plSavedAccount'), url);
  };

  for (const btn of [exportM3U, exportJSON]) {
    btn.addEventListener('click', async () => {
      const format = btn.dataset.format;
      btn.disabled = true;
      try {
        const res = await api.fetch(`/api/playlists/${encodeURIComponent(id)}/export?format=${format}`);
        const blob = await res.blob();
        const a = h('a', { href: URL.createObjectURL(blob), download: exportName(r.title, format), hidden: true });
        document.body.appendChild(a);
        a.click();
        setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
        say(tr('plExported', { format: format === 'json' ? 'JSON' : 'M3U8' }));
      } catch (e) {
        say(tr('plExportFailed') + ' ' + clip(e && e.message, 200));
      } finally {
        btn.disabled = false;
      }
    });
  }
  saveBtn.addEventListener('click', async () => {
    saveBtn.disabled = true;
    say(tr('plSaving'));
    try {
      const res = JSON.parse(await api.callTool('savePlaylistToTidal', { playlistId: id }));
      if (res && res.success) {
        showSaved(str(res.url));
      } else {
        say(tr('plNotSaved') + ' ' + clip(res && res.error, 300));
        saveBtn.disabled = false;
      }
    } catch (e) {
      say(tr('plNotSaved') + ' ' + clip(e && e.message, 300));
      saveBtn.disabled = false;
    }
  });

  // Saved since the result was stored (by the button or the agent)?
  if (id) {
    api.json(`/api/playlists/${encodeURIComponent(id)}`).then((p) => {
      const tid = str(obj(p) && p.tidalPlaylistId);
      if (ID_RE.test(tid)) showSaved('https://tidal.com/browse/playlist/' + tid);
    }).catch(() => { /* an older server without playlists: the button stays */ });
  }
  return card;
}

function savedNote(r) {
  ensureStyles();
  const title = str(r.title) || tr('plThePlaylist');
  return h('div', { class: 'playlist-saved' },
    h('p', null, r.alreadySaved ? tr('plAlreadySaved', { title }) : tr('plSavedAdded', { title, n: formatNumber(num(r.added) ?? 0) }), ' ',
      link(r.url, tr('plOpen'))),
    r.skipped && Object.keys(obj(r.skipped) || {}).length
      ? h('p', { class: 'muted' }, tr('plSkipped', { n: formatNumber(Object.keys(r.skipped).length) })) : null);
}

function exportName(title, format) {
  const base = str(title).replace(/[^A-Za-z0-9 _-]/g, '').trim().replace(/\s+/g, '-').slice(0, 60) || 'playlist';
  return `${base}.${format}`;
}
