// An escape-first Markdown renderer for model output. It builds DOM nodes
// directly (text through text nodes only), so no input can produce markup
// other than the elements listed here: p, h3–h6, strong, em, del, code, pre,
// blockquote, ul, ol, li, hr, br, table parts, and a links to http(s) URLs.
//
// Supported: paragraphs (single newlines are line breaks, as in chat),
// ATX headings, emphasis, strikethrough, code spans, fenced and indented code
// blocks, block quotes, nested lists, pipe tables, links, autolinks and bare
// URLs. Images become links (the page does not load images a model names).
// Work is bounded: input is cut at MAX_CHARS and nesting at MAX_DEPTH.

import { h, safeURL } from './dom.js';

export const MAX_CHARS = 200000;
export const MAX_DEPTH = 16;

/** renderMarkdown returns a DocumentFragment for text. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  let src = typeof text === 'string' ? text : '';
  let cut = false;
  if (src.length > MAX_CHARS) {
    src = src.slice(0, MAX_CHARS);
    cut = true;
  }
  const lines = src.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  blocks(lines, frag, 0);
  if (cut) frag.appendChild(h('p', { class: 'md-cut' }, '[…]'));
  return frag;
}

// Text blocks take their direction from their own first strong character
// (dir="auto"), so a Hebrew paragraph reads right to left beside an English
// one; code stays left to right. A list takes one direction for all its
// items, from its own text: an item that starts with an English word in a
// Hebrew list keeps the list's bullet side (so do the paragraphs of a loose
// list's items).
const AUTO_DIR = 'p, h1, h2, h3, h4, h5, h6, blockquote, th, td, ul, ol';

/** setDirections marks the text blocks of rendered Markdown dir="auto". */
export function setDirections(frag) {
  for (const el of frag.querySelectorAll(AUTO_DIR)) {
    if (el.tagName === 'P' && el.parentElement && el.parentElement.tagName === 'LI') continue;
    el.setAttribute('dir', 'auto');
  }
  for (const el of frag.querySelectorAll('pre')) el.setAttribute('dir', 'ltr');
  return frag;
}

// One observer for every region that may scroll sideways (code blocks and
// tables): their width changes with the window and with the cards opening.
let scrollObserver = null;

function updateScroller(el) {
  const scrolls = el.scrollWidth > el.clientWidth + 1;
  if (scrolls) el.setAttribute('data-scrolls', 'true');
  else el.removeAttribute('data-scrolls');
  // A code block is always a tab stop (daily.js); a table is one while it
  // scrolls, so the keyboard can scroll it (arrow keys).
  if (el.tagName === 'PRE') return;
  if (scrolls) {
    el.tabIndex = 0;
    el.setAttribute('role', 'region');
    el.setAttribute('aria-label', el.dataset.scrollLabel || '');
  } else {
    el.removeAttribute('tabindex');
    el.removeAttribute('role');
    el.removeAttribute('aria-label');
  }
}

/**
 * scrollRegion marks el (a code block or a table's wrapper) when its
 * content is wider than it: data-scrolls="true" (the stylesheet shades the
 * side that has more), and, being a tab stop then, a region named label.
 */
export function scrollRegion(el, label) {
  el.dataset.scrollLabel = label;
  if (el.tagName === 'PRE') {
    el.setAttribute('role', 'region');
    el.setAttribute('aria-label', label);
  }
  if (typeof ResizeObserver === 'undefined') return el;
  scrollObserver ||= new ResizeObserver((entries) => {
    for (const e of entries) {
      // A table is watched too: a card's next page can widen it alone.
      const region = 'scrollLabel' in e.target.dataset ? e.target : e.target.parentElement;
      if (region) updateScroller(region);
    }
  });
  scrollObserver.observe(el);
  if (el.tagName !== 'PRE' && el.firstElementChild) scrollObserver.observe(el.firstElementChild);
  return el;
}

const RE_FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const RE_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RE_HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const RE_QUOTE = /^ {0,3}> ?/;
const RE_LIST = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)/;
const RE_TABLE_DELIM = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function isBlank(l) {
  return /^\s*$/.test(l);
}

// startsBlock reports whether a line interrupts a paragraph.
function startsBlock(l) {
  return RE_FENCE.test(l) || RE_HEADING.test(l) || RE_HR.test(l) || RE_QUOTE.test(l) || RE_LIST.test(l);
}

function blocks(lines, parent, depth) {
  if (depth > MAX_DEPTH) {
    parent.appendChild(h('p', null, lines.join('\n')));
    return;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m;
    if ((m = RE_FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp('^ {0,3}' + fence[0] + '{' + fence.length + ',}\\s*$').test(lines[i])) {
        body.push(lines[i]);
        i++;
      }
      i++; // closing fence (or end of input while streaming)
      const code = h('code', null, body.join('\n'));
      const pre = h('pre', { class: 'md-code' }, code);
      if (m[2]) pre.setAttribute('data-lang', m[2].slice(0, 32));
      parent.appendChild(pre);
      continue;
    }
    if ((m = RE_HEADING.exec(line))) {
      const level = Math.min(6, m[1].length + 2);
      parent.appendChild(inlineInto(h('h' + level, { class: 'md-h' }), m[2] || '', depth));
      i++;
      continue;
    }
    if (RE_HR.test(line)) {
      parent.appendChild(h('hr'));
      i++;
      continue;
    }
    if (RE_QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && !isBlank(lines[i])) {
        if (RE_QUOTE.test(lines[i])) inner.push(lines[i].replace(RE_QUOTE, ''));
        else if (startsBlock(lines[i])) break;
        else inner.push(lines[i]);
        i++;
      }
      const q = h('blockquote');
      blocks(inner, q, depth + 1);
      parent.appendChild(q);
      continue;
    }
    if (RE_LIST.test(line)) {
      i = list(lines, i, parent, depth);
      continue;
    }
    if (/^ {4}/.test(line)) {
      const body = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || isBlank(lines[i]))) {
        body.push(lines[i].slice(4));
        i++;
      }
      while (body.length && isBlank(body[body.length - 1])) body.pop();
      parent.appendChild(h('pre', { class: 'md-code' }, h('code', null, body.join('\n'))));
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && RE_TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, parent, depth);
      continue;
    }
    // Paragraph.
    const para = [line.trim()];
    i++;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i])) {
      if (lines[i].includes('|') && i + 1 < lines.length && RE_TABLE_DELIM.test(lines[i + 1])) break;
      para.push(lines[i].trim());
      i++;
    }
    parent.appendChild(inlineInto(h('p'), para.join('\n'), depth));
  }
}

function list(lines, i, parent, depth) {
  const first = RE_LIST.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const marker = ordered ? first[2].slice(-1) : first[2];
  const el = ordered ? h('ol') : h('ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1 && Number.isFinite(start)) el.setAttribute('start', String(start));
  }
  let loose = false;
  while (i < lines.length) {
    const m = RE_LIST.exec(lines[i]);
    if (!m) break;
    const sameKind = ordered ? /\d/.test(m[2]) && m[2].slice(-1) === marker : m[2] === marker;
    if (!sameKind) break;
    const indent = m[1].length + m[2].length + Math.max(1, m[3].length);
    const body = [lines[i].slice(m[0].length)];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (isBlank(l)) {
        // A blank line continues the item only if indented content follows.
        let j = i;
        while (j < lines.length && isBlank(lines[j])) j++;
        if (j < lines.length && leading(lines[j]) >= indent) {
          body.push('');
          loose = true;
          i = j;
          continue;
        }
        if (j < lines.length && RE_LIST.test(lines[j]) && leading(lines[j]) < indent) loose = true;
        break;
      }
      if (leading(l) >= indent) {
        body.push(l.slice(indent));
      } else if (RE_LIST.test(l) || startsBlock(l)) {
        break;
      } else {
        body.push(l.trim()); // lazy continuation
      }
      i++;
    }
    const li = h('li');
    if (!loose && !body.some((b) => isBlank(b))) {
      // Tight item: its first lines are inline text, then nested blocks.
      let k = 1;
      while (k < body.length && !startsBlock(body[k])) k++;
      inlineInto(li, body.slice(0, k).join('\n'), depth);
      if (k < body.length) blocks(body.slice(k), li, depth + 1);
    } else {
      blocks(body, li, depth + 1);
    }
    el.appendChild(li);
    // Skip blank lines between items of this list.
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    if (j > i && j < lines.length && RE_LIST.test(lines[j]) && leading(lines[j]) <= first[1].length + 3) i = j;
  }
  parent.appendChild(el);
  return i;
}

function leading(l) {
  return l.length - l.trimStart().length;
}

function splitRow(l) {
  let s = l.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let inCode = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c === '\\' && s[k + 1] === '|') {
      cur += '|';
      k++;
    } else if (c === '`') {
      inCode = !inCode;
      cur += c;
    } else if (c === '|' && !inCode) {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += c;
    }
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, i, parent, depth) {
  const head = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) => {
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    return l && r ? 'center' : r ? 'right' : l ? 'left' : '';
  });
  i += 2;
  const cols = Math.min(head.length, 64);
  const cell = (tag, text, k) => inlineInto(h(tag, { class: aligns[k] ? 'align-' + aligns[k] : null }), text, depth);
  const thead = h('thead', null, h('tr', null, head.slice(0, cols).map((c, k) => cell('th', c, k))));
  const tbody = h('tbody');
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
    const row = splitRow(lines[i]);
    const tr = h('tr');
    for (let k = 0; k < cols; k++) tr.appendChild(cell('td', row[k] || '', k));
    tbody.appendChild(tr);
    i++;
  }
  parent.appendChild(h('div', { class: 'md-table' }, h('table', null, thead, tbody)));
  return i;
}

// ---- Inline ----

const PUNCT = /[!-/:-@[-`{-~]/;
const RE_AUTOLINK = /^<(https?:\/\/[^\s<>]+)>/i;
const RE_BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>".,:;!?)\]}'*_~]/i;

/** inlineInto appends the inline rendering of text to el and returns el. */
function inlineInto(el, text, depth) {
  inline(text, el, depth, false);
  return el;
}

function inline(text, parent, depth, inLink) {
  if (depth > MAX_DEPTH) {
    parent.appendChild(document.createTextNode(text));
    return;
  }
  // Openers known to have no closer in this text: each is searched once.
  const noCloser = new Set();
  let buf = '';
  const flush = () => {
    if (buf) parent.appendChild(document.createTextNode(buf));
    buf = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && PUNCT.test(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') {
      flush();
      parent.appendChild(h('br'));
      i += 2;
      continue;
    }
    if (c === '\n') {
      buf = buf.replace(/ +$/, '');
      flush();
      parent.appendChild(h('br'));
      i++;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (text[i + n] === '`') n++;
      const key = '`' + n;
      if (!noCloser.has(key)) {
        const close = findRun(text, '`', n, i + n);
        if (close >= 0) {
          flush();
          let code = text.slice(i + n, close).replace(/\n/g, ' ');
          if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
          parent.appendChild(h('code', null, code));
          i = close + n;
          continue;
        }
        noCloser.add(key);
      }
      buf += text.slice(i, i + n);
      i += n;
      continue;
    }
    if ((c === '[' || (c === '!' && text[i + 1] === '[')) && !inLink) {
      const open = c === '!' ? i + 1 : i;
      const lk = noCloser.has('[') ? null : parseLink(text, open);
      if (lk === undefined) noCloser.add('[');
      if (lk) {
        flush();
        const href = safeURL(lk.url);
        if (href) {
          const a = h('a', { href, target: '_blank', rel: 'noopener noreferrer' });
          if (lk.title) a.title = lk.title;
          inline(lk.label || lk.url, a, depth + 1, true);
          parent.appendChild(a);
        } else {
          inline(lk.label, parent, depth + 1, true);
        }
        i = lk.end;
        continue;
      }
    }
    if (c === '<' && !inLink) {
      const m = RE_AUTOLINK.exec(text.slice(i, i + 2100));
      if (m) {
        flush();
        parent.appendChild(autoLink(m[1]));
        i += m[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && !inLink && (i === 0 || /[\s(*_~]/.test(text[i - 1]))) {
      const m = RE_BARE_URL.exec(text.slice(i, i + 2100));
      if (m) {
        flush();
        parent.appendChild(autoLink(m[0]));
        i += m[0].length;
        continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      let n = 1;
      while (text[i + n] === c) n++;
      const next = text[i + n];
      const prev = i > 0 ? text[i - 1] : ' ';
      const canOpen = next !== undefined && !/\s/.test(next) &&
        !(c === '_' && /[\p{L}\p{N}]/u.test(prev)) && !(c === '~' && n !== 2);
      const use = c === '~' ? 2 : Math.min(n, 3);
      const key = c + use;
      if (canOpen && !noCloser.has(key)) {
        const close = findCloser(text, c, use, i + n);
        if (close >= 0) {
          flush();
          if (n > use) buf += c.repeat(n - use);
          flush();
          const inner = text.slice(i + n, close);
          let el;
          if (c === '~') el = h('del');
          else if (use === 1) el = h('em');
          else if (use === 2) el = h('strong');
          else el = h('strong', null, h('em'));
          inline(inner, el.firstChild || el, depth + 1, inLink);
          parent.appendChild(el);
          i = close + use;
          continue;
        }
        noCloser.add(key);
      }
      buf += text.slice(i, i + n);
      i += n;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
}

function autoLink(url) {
  const href = safeURL(url);
  if (!href) return document.createTextNode(url);
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, url);
}

// findRun finds a run of exactly n ch characters at or after from.
function findRun(text, ch, n, from) {
  let i = text.indexOf(ch, from);
  while (i >= 0) {
    let k = 0;
    while (text[i + k] === ch) k++;
    if (k === n) return i;
    i = text.indexOf(ch, i + k);
  }
  return -1;
}

// findCloser finds a closing delimiter run of at least n ch characters that
// is not preceded by whitespace (and, for _, not followed by a letter).
function findCloser(text, ch, n, from) {
  let i = from;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '`') {
      // Skip code spans: delimiters inside them do not count.
      let k = 1;
      while (text[i + k] === '`') k++;
      const close = findRun(text, '`', k, i + k);
      i = close >= 0 ? close + k : i + k;
      continue;
    }
    if (c === ch) {
      let k = 1;
      while (text[i + k] === ch) k++;
      const prev = text[i - 1];
      const after = text[i + k];
      const ok = k >= n && prev !== undefined && !/\s/.test(prev) &&
        !(ch === '_' && after !== undefined && /[\p{L}\p{N}]/u.test(after)) && !(ch === '~' && k !== 2);
      if (ok) return i + (k - n);
      i += k;
      continue;
    }
    i++;
  }
  return -1;
}

// parseLink parses [label](url "title") at text[open] === '['. It returns
// null when this bracket is not a link, and undefined when no closing bracket
// exists at all (so later brackets need not search again).
function parseLink(text, open) {
  let depthB = 0;
  let i = open;
  let close = -1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '`') {
      let k = 1;
      while (text[i + k] === '`') k++;
      const e = findRun(text, '`', k, i + k);
      if (e >= 0) i = e + k - 1;
      continue;
    }
    if (c === '[') depthB++;
    else if (c === ']') {
      depthB--;
      if (depthB === 0) {
        close = i;
        break;
      }
    }
  }
  if (close < 0) return undefined;
  if (text[close + 1] !== '(') return null;
  const m = /^\(\s*<?([^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)>?(?:\s+"([^"]*)")?\s*\)/.exec(text.slice(close + 1, close + 2200));
  if (!m) return null;
  return { label: text.slice(open + 1, close), url: m[1], title: m[2] || '', end: close + 1 + m[0].length };
}
