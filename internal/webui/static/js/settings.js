// The settings panel: setting up the model, keys and MCP servers
// (setup.js), then what `toolport doctor` says about every upstream
// (GET /api/doctor), one row each, so a person sees at a glance what works.
// Checks that spend the person's quota (a web search, a model request) run
// only when they press the second button, as POST {"quota":true}.

import { h, clear, str } from './dom.js';
import { t } from './i18n.js';
import { Setup } from './setup.js';

// The i18n.js strings of the checks' statuses.
const STATUS_LABEL = {
  ok: 'settingsStatusOk',
  'not configured': 'settingsStatusNotConfigured',
  failing: 'settingsStatusFailing',
  skipped: 'settingsStatusSkipped',
};

/** Settings is the panel: a modal dialog built on first use. */
export class Settings {
  constructor(api, announce, changed) {
    this.api = api;
    this.announce = announce || (() => {});
    // After a change from Setup: the page's model picker, then the checks.
    this.setup = new Setup(api, this.announce, () => {
      if (changed) changed();
      this.check(false);
    });
    this.dlg = null;
    this.running = false;
  }

  build() {
    this.status = h('p', { class: 'dialog-text settings-status', id: 'settings-status', role: 'status', 'aria-live': 'polite' });
    // The list scrolls on its own (max-height): focusable, so that the
    // keyboard can scroll it too (WCAG 2.1.1; axe scrollable-region-focusable).
    this.list = h('ul', { class: 'settings-list', id: 'settings-list', 'aria-labelledby': 'settings-checks-title', tabindex: '0' });
    this.runFree = h('button', { type: 'button', class: 'btn btn-ghost', id: 'settings-check' }, t('settingsCheckAgain'));
    this.runQuota = h('button', { type: 'button', class: 'btn btn-ghost', id: 'settings-check-quota' }, t('settingsCheckQuota'));
    const close = h('button', { type: 'button', class: 'btn btn-primary', id: 'settings-close' }, t('settingsClose'));
    this.dlg = h('dialog', { class: 'dialog settings-dialog', id: 'settings-dialog', 'aria-labelledby': 'settings-title' },
      h('div', { class: 'dialog-body' },
        h('h2', { class: 'dialog-title', id: 'settings-title' }, t('setupTitle')),
        this.setup.element(),
        h('h3', { class: 'setup-title', id: 'settings-checks-title' }, t('settingsUpstreams')),
        h('p', { class: 'dialog-text' }, t('settingsChecksIntro')),
        this.status, this.list,
        h('div', { class: 'dialog-actions' }, this.runFree, this.runQuota, close)));
    this.runFree.addEventListener('click', () => this.check(false));
    this.runQuota.addEventListener('click', () => this.check(true));
    close.addEventListener('click', () => this.dlg.close());
    document.body.appendChild(this.dlg);
  }

  /** open shows the panel and runs the free checks. */
  async open() {
    if (!this.dlg) this.build();
    if (!this.dlg.open) this.dlg.showModal();
    await Promise.all([this.setup.load(), this.check(false)]);
  }

  async check(quota) {
    if (this.running) return;
    this.running = true;
    this.runFree.disabled = this.runQuota.disabled = true;
    this.dlg.dataset.state = 'checking';
    this.status.textContent = t(quota ? 'settingsCheckingQuota' : 'settingsChecking');
    try {
      // Checks that spend quota are a POST, under the server's cross-origin guard.
      const rep = quota
        ? await this.api.json('/api/doctor', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ quota: true }) })
        : await this.api.json('/api/doctor');
      this.render(rep);
      this.dlg.dataset.state = 'done';
    } catch (err) {
      this.status.textContent = t('settingsCheckFailed', { error: err && err.message ? err.message : String(err) });
      this.dlg.dataset.state = 'error';
    } finally {
      this.running = false;
      this.runFree.disabled = this.runQuota.disabled = false;
    }
  }

  render(rep) {
    const results = Array.isArray(rep && rep.results) ? rep.results : [];
    clear(this.list);
    let failing = 0;
    for (const r of results) {
      const status = str(r.status);
      if (status === 'failing') failing++;
      const limits = r.limits && typeof r.limits === 'object'
        ? Object.entries(r.limits).map(([k, v]) => `${k}: ${str(v)}`).join('; ') : '';
      this.list.appendChild(h('li', { class: 'settings-row', 'data-upstream': str(r.name), 'data-status': status },
        h('span', { class: 'settings-name' }, str(r.title) || str(r.name)),
        h('span', { class: 'settings-badge' }, Object.hasOwn(STATUS_LABEL, status) ? t(STATUS_LABEL[status]) : status),
        // An optional engine not configured is no fault: say so by its badge.
        r.optional === true ? h('span', { class: 'settings-optional' }, t('settingsOptional')) : null,
        // The server's texts keep their own direction beside the page's labels.
        str(r.detail) ? h('span', { class: 'settings-detail', dir: 'auto' }, str(r.detail)) : null,
        limits ? h('span', { class: 'settings-limits' }, t('settingsLimits') + ' ', h('bdi', null, limits)) : null,
        str(r.fix) && status !== 'ok' ? h('span', { class: 'settings-fix' }, t('settingsFix') + ' ', h('bdi', null, str(r.fix))) : null,
        str(r.warning) ? h('span', { class: 'settings-warning' }, t('settingsNote') + ' ', h('bdi', null, str(r.warning))) : null));
    }
    const summary = failing === 0
      ? t('settingsSummaryOk', { n: results.length })
      : t('settingsSummaryFailing', { n: results.length, failing });
    this.status.textContent = summary;
    this.announce(summary);
  }
}
