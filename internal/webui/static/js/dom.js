// DOM helpers. Every string that reaches the page goes through textContent or
// setAttribute with a fixed attribute name: no HTML string is ever parsed.

import { formatDuration as formatDurationIn } from './i18n.js';

/**
 * h creates an element. attrs maps attribute names to values (false/null/
 * undefined skip the attribute, true sets it empty); "class" may be an array.
 * Children are nodes or strings (strings become text nodes).
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === false || v === null || v === undefined) continue;
      if (k.startsWith('on')) throw new Error('h: event handler attributes are not allowed');
      if (k === 'class') {
        el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : String(v);
      } else {
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

/** append adds children (nodes, strings, nested arrays; null skipped). */
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

/** clear removes all children of el. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/**
 * safeURL returns the absolute URL if s is an http(s) URL, else null.
 * Only these schemes may become links: javascript:, data:, vbscript: and
 * relative URLs from untrusted text are refused.
 */
export function safeURL(s, schemes = ['http:', 'https:']) {
  if (typeof s !== 'string' || s.length === 0 || s.length > 4096) return null;
  let u;
  try {
    u = new URL(s.trim());
  } catch {
    return null;
  }
  if (!schemes.includes(u.protocol)) return null;
  return u.href;
}

/**
 * link builds an external link that opens in a new tab without giving the
 * target a handle on this page or the page's URL; if url is not http(s) it
 * returns the label as plain text.
 */
export function link(url, label, cls) {
  const href = safeURL(url);
  const text = label === undefined || label === null || label === '' ? url : label;
  if (!href) return h('span', { class: cls }, text === undefined ? '' : String(text));
  return h('a', { class: cls, href, target: '_blank', rel: 'noopener noreferrer' }, String(text));
}

/** str returns v as a string when it is a string or a finite number, else ''. */
export function str(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return '';
}

/** num returns v when it is a finite number, else null. */
export function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** arr returns v when it is an array, else []. */
export function arr(v) {
  return Array.isArray(v) ? v : [];
}

/** obj returns v when it is a plain object, else null. */
export function obj(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

/** clip shortens s to at most n characters, ending with an ellipsis. */
export function clip(s, n) {
  s = str(s);
  return s.length > n ? s.slice(0, n - 1).trimEnd() + '…' : s;
}

/**
 * formatDuration renders milliseconds ("<1 ms", "840 ms", "1.2 sec") in the
 * page's language (i18n.js); anything but a number is "".
 */
export function formatDuration(ms) {
  return formatDurationIn(num(ms));
}

/** formatTrackTime renders seconds as m:ss (h:mm:ss past an hour). */
export function formatTrackTime(sec) {
  sec = num(sec);
  if (sec === null || sec < 0) return '';
  sec = Math.round(sec);
  const hh = Math.floor(sec / 3600);
  const mm = Math.floor((sec % 3600) / 60);
  const ss = String(sec % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

// Icon path data (24×24, stroked). Constants only: never untrusted input.
const ICONS = {
  search: 'M11 4a7 7 0 1 0 0 14a7 7 0 1 0 0-14z M20 20l-4.2-4.2',
  sparkle: 'M12 3l1.9 5.1L19 10l-5.1 1.9L12 17l-1.9-5.1L5 10l5.1-1.9z M19 15l.8 2.2L22 18l-2.2.8L19 21l-.8-2.2L16 18l2.2-.8z',
  music: 'M9 18V5l11-2v13 M9 18a3 3 0 1 1-6 0a3 3 0 1 1 6 0z M20 16a3 3 0 1 1-6 0a3 3 0 1 1 6 0z',
  disc: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z M12 10a2 2 0 1 0 0 4a2 2 0 1 0 0-4z',
  list: 'M9 6h11 M9 12h11 M9 18h11 M4.5 6h.01 M4.5 12h.01 M4.5 18h.01',
  database: 'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3z M4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6 M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  file: 'M14 3H6v18h12V7z M14 3v4h4 M9 13h6 M9 17h6',
  folder: 'M3 6h6l2 2h10v11H3z',
  tag: 'M3 3h8l10 10-8 8L3 11z M7.5 7.5h.01',
  building: 'M4 21V4h10v17 M14 9h6v12 M2 21h20 M8 8h2 M8 12h2 M8 16h2',
  table: 'M3 4h18v16H3z M3 10h18 M3 15h18 M9 4v16',
  globe: 'M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z M3 12h18 M12 3c3 3.5 3 14.5 0 18 M12 3c-3 3.5-3 14.5 0 18',
  page: 'M14 3H6v18h12V7z M14 3v4h4 M12 10v7 M9 14l3 3 3-3',
  wrench: 'M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 0 0 5.4-5.4l-2.5 2.5-2.4-.6-.6-2.4z',
  chevron: 'M9 6l6 6-6 6',
  send: 'M5 12h14 M13 6l6 6-6 6',
  menu: 'M4 6h16 M4 12h16 M4 18h16',
  copy: 'M9 9h11v11H9z M5 15H4V4h11v1',
  down: 'M12 5v14 M6 13l6 6l6-6',
  trash: 'M4 7h16 M10 11v6 M14 11v6 M6 7l1 13h10l1-13 M9 7V4h6v3',
  alert: 'M12 3l10 18H2z M12 10v5 M12 18h.01',
  stop: 'M7 7h10v10H7z',
  more: 'M5 10.5a1.5 1.5 0 1 0 0 3a1.5 1.5 0 1 0 0-3z M12 10.5a1.5 1.5 0 1 0 0 3a1.5 1.5 0 1 0 0-3z M19 10.5a1.5 1.5 0 1 0 0 3a1.5 1.5 0 1 0 0-3z',
  close: 'M6 6l12 12 M18 6L6 18',
  link: 'M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1 M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1',
};

/** icon returns an inline SVG icon (decorative: hidden from screen readers). */
export function icon(name, cls = 'icon') {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', cls);
  const p = document.createElementNS(SVG_NS, 'path');
  p.setAttribute('d', ICONS[name] || ICONS.wrench);
  svg.appendChild(p);
  return svg;
}

/**
 * artwork returns an <img> for an http(s) image URL (CSP lets https load),
 * falling back to a placeholder tile when the URL is refused or fails.
 */
export function artwork(url, alt, cls = 'art') {
  const placeholder = () => h('span', { class: [cls, 'art-placeholder'], 'aria-hidden': 'true' }, icon('music'));
  const src = safeURL(url);
  if (!src) return placeholder();
  const img = h('img', {
    class: cls, src, alt: alt || '', loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer',
    width: 48, height: 48,
  });
  img.addEventListener('error', () => img.replaceWith(placeholder()), { once: true });
  return img;
}
