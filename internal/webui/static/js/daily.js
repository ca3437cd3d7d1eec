// The daily features of the thread and the sidebar: copy buttons (an
// answer, a code block, a table as TSV), code blocks' language labels and
// syntax highlighting (highlight.js, vendored unmodified under
// /assets/vendor/ with its licence), the Today/Yesterday/Older groups of the
// conversation list, a search result's snippet with the words marked, and
// the links out of a music track (YouTube for a MusicCaps clip, TIDAL for a
// track with a TIDAL id).
//
// Everything from a model or a tool reaches the DOM as text: highlighted
// code is built from highlight.js's token tree as spans around text nodes
// (its HTML output is never used), and marks are <mark> elements around
// text nodes.

import hljs from '../vendor/highlight.min.js';
import { h, icon } from './dom.js';
import { t } from './i18n.js';

// MAX_HIGHLIGHT bounds the code highlighted (longer blocks stay plain):
// highlighting is linear, but a model can write a lot of code.
const MAX_HIGHLIGHT = 20000;

/** copyText writes text to the clipboard; it resolves to whether it could. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * copyButton is a button that copies what() and says so (announce).
 */
export function copyButton(cls, label, what, announce) {
  const b = h('button', { type: 'button', class: 'btn btn-ghost btn-small copy-btn ' + cls, 'aria-label': label, title: label }, icon('copy', 'icon icon-small'), h('span', { class: 'copy-text' }, t('copy')));
  b.addEventListener('click', async () => {
    const ok = await copyText(what());
    // Said through the live region; the button keeps its words (its name
    // holds them) and shows the outcome by its colour for a moment.
    announce(ok ? t('copied') : t('copyFailed'));
    b.dataset.copied = String(ok);
    setTimeout(() => delete b.dataset.copied, 1500);
  });
  return b;
}

/**
 * decorateMarkdown gives rendered Markdown's code blocks a header (the
 * language, a copy button) and highlighting, and its tables a copy button.
 */
export function decorateMarkdown(root, announce) {
  for (const pre of root.querySelectorAll('pre.md-code')) {
    const code = pre.querySelector('code');
    const lang = pre.getAttribute('data-lang') || '';
    const known = lang && hljs.getLanguage(lang);
    if (known && code.textContent.length <= MAX_HIGHLIGHT) highlight(code, lang);
    // A block that scrolls sideways can take the keyboard's focus.
    pre.tabIndex = 0;
    const label = lang ? (known ? known.name || lang : lang) : t('codeLabel');
    const head = h('div', { class: 'code-head' },
      h('span', { class: 'code-lang', dir: 'ltr' }, label),
      copyButton('copy-code', t('copyCode', { lang: label }), () => code.textContent, announce));
    const wrap = h('div', { class: 'code-block' });
    pre.replaceWith(wrap);
    wrap.append(head, pre);
  }
  for (const div of root.querySelectorAll('.md-table')) {
    const table = div.querySelector('table');
    div.before(h('div', { class: 'table-head' }, copyButton('copy-table', t('copyTable'), () => tableTSV(table), announce)));
  }
  return root;
}

/**
 * highlight colours code's text as lang: highlight.js parses it into a
 * token tree, which becomes spans around text nodes here (its HTML string
 * is never used, so no markup is parsed).
 */
function highlight(code, lang) {
  let tree;
  try {
    tree = hljs.highlight(code.textContent, { language: lang, ignoreIllegals: true })._emitter.rootNode;
  } catch {
    return; // left plain
  }
  const build = (node, depth) => {
    const el = h('span');
    const scope = typeof node.scope === 'string' ? node.scope : '';
    if (scope.startsWith('language:')) el.className = 'language-' + scope.slice(9).replace(/[^\w-]/g, '');
    else if (scope) el.className = scope.split('.').map((p, i) => (i === 0 ? 'hljs-' + p : p + '_'.repeat(i))).join(' ').replace(/[^\w -]/g, '');
    for (const c of Array.isArray(node.children) ? node.children : []) {
      if (typeof c === 'string') el.appendChild(document.createTextNode(c));
      else if (c && depth < 32) el.appendChild(build(c, depth + 1));
    }
    return el;
  };
  const out = build(tree, 0);
  // Only when highlight.js kept every character: the copy and the page
  // must show the code as it was written.
  if (out.textContent !== code.textContent) return;
  code.classList.add('hljs', 'language-' + lang.replace(/[^\w-]/g, ''));
  code.replaceChildren(...out.childNodes);
}

/** tableTSV is a table's text as tab-separated values, a row a line. */
export function tableTSV(table) {
  const cell = (c) => c.textContent.replace(/[\t\r\n]+/g, ' ').trim();
  return [...table.querySelectorAll('tr')].map((tr) => [...tr.children].map(cell).join('\t')).join('\n');
}

/** dayGroup names the group of the conversation list a date falls in. */
export function dayGroup(s, now = new Date()) {
  const d = new Date(typeof s === 'string' ? s : '');
  if (Number.isNaN(d.getTime())) return 'older';
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  if (d >= start) return 'today';
  const yesterday = new Date(start);
  yesterday.setDate(start.getDate() - 1);
  return d >= yesterday ? 'yesterday' : 'older';
}

/** queryWords splits a search as the server does: runs of letters, digits and marks. */
export function queryWords(q) {
  return (String(q).match(/[\p{L}\p{N}\p{M}]+/gu) || []).filter((w) => /[\p{L}\p{N}]/u.test(w)).slice(0, 8);
}

/**
 * markWords returns a span of text with every word that starts with one of
 * words (case-insensitive, as the server matched them) in a <mark>.
 */
export function markWords(cls, text, words) {
  const span = h('span', { class: cls, dir: 'auto' });
  const lower = words.map((w) => w.toLocaleLowerCase());
  const re = /[\p{L}\p{N}\p{M}]+/gu;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    const word = m[0].toLocaleLowerCase();
    const hit = lower.find((w) => word.startsWith(w));
    if (!hit) continue;
    if (m.index > last) span.appendChild(document.createTextNode(text.slice(last, m.index)));
    span.appendChild(h('mark', null, m[0].slice(0, hit.length)));
    last = m.index + hit.length;
  }
  if (last < text.length) span.appendChild(document.createTextNode(text.slice(last)));
  return span;
}

const MUSICCAPS = /^MusicCaps clip ([A-Za-z0-9_-]{11})@(\d{1,6})$/;

/**
 * trackLinks are the places a track can be played: a MusicCaps clip's
 * YouTube video at its start second (the demo tracks are named after their
 * YouTube id and start), a TIDAL track's page.
 */
export function trackLinks(tr) {
  const out = [];
  const m = typeof tr.title === 'string' && tr.artist === 'MusicCaps' ? MUSICCAPS.exec(tr.title) : null;
  if (m) {
    out.push({ cls: 'track-youtube', label: t('playYouTube'), href: 'https://www.youtube.com/watch?v=' + m[1] + '&t=' + Number(m[2]) + 's' });
  }
  if (typeof tr.tidalId === 'string' && /^\d{1,20}$/.test(tr.tidalId)) {
    out.push({ cls: 'track-tidal', label: t('openTidal'), href: 'https://tidal.com/browse/track/' + tr.tidalId });
  }
  return out.map((l) => h('a', { class: 'track-link ' + l.cls, href: l.href, target: '_blank', rel: 'noopener noreferrer', title: l.label, 'aria-label': l.label + ': ' + String(tr.title || '') }, l.label));
}
