/* compare.js: two sides compared - each a profile or a selector (the
 * recordings it picks, merged) - as the ranked regressions and
 * improvements of /api/v1/diff and its differential flame graph. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage, fmtTime, firstArray, escapeRe } = U;

  const TESTS = { 'welch-t': "Welch's t-test", 'prediction-t': 'prediction interval', 'two-proportion-z': 'two-proportion z-test' };
  const ROWS = 30; /* rows of each ranked table */

  /* "12.34%", "+1.20 pts": two decimals, as the API's shares are compared */
  const pct = (v) => (typeof v === 'number' && isFinite(v) ? v.toFixed(2) + '%' : '-');
  const pts = (v) => (typeof v === 'number' && isFinite(v) ? (v >= 0 ? '+' : '') + v.toFixed(2) + ' pts' : '-');

  const compareView = {
    searchBox: '#cmp-search',
    fg: null,
    key: null,
    tree: null,
    seq: 0,

    redraw() { this.fg.draw(); },

    init() {
      this.fg = new U.FlameView($('#cmp-fg'), {
        diff: true, crumbs: $('#cmp-crumbs'), matchEl: $('#cmp-match'),
        onZoom: (path) => U.setParams({ zoom: path.join(';') }, true),
      });
      $('#cmp-form').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        /* each side: the selector when one is given, else the profile */
        const side = (name) => {
          const sel = f[name + '_q'].value.trim();
          return sel ? { [name]: '', [name + '_q']: sel } : { [name]: f[name].value, [name + '_q']: '' };
        };
        U.setParams(Object.assign(side('base'), side('target'), { event: f.event.value.trim(), weight: f.weight.value, zoom: '' }));
      });
      let t = null;
      $('#cmp-search').addEventListener('input', (e) => {
        clearTimeout(t);
        t = setTimeout(() => U.setParams({ q: e.target.value }, true), 200);
      });
      U.searchKeys($('#cmp-search'), $('#cmp-fg'), () => clearTimeout(t));
      $('#cmp-reset').addEventListener('click', () => U.setParams({ zoom: '', q: '' }, true));
    },

    async fillChoices(params) {
      const f = $('#cmp-form').elements;
      let list = [];
      try {
        list = firstArray(await api('profiles' + qs({ status: 'ready', limit: 200 })), ['profiles']);
      } catch (e) {
        showMessage('Could not list profiles: ' + e.message);
      }
      for (const s of [f.base, f.target]) {
        s.textContent = '';
        s.append(el('option', { value: '' }, '(choose)'));
        for (const p of list) s.append(el('option', { value: p.id }, (p.name || p.id) + ' \u00b7 ' + fmtTime(p.uploaded_at)));
      }
      f.base.value = params.base || '';
      f.target.value = params.target || '';
      /* a profile not in the first page still shows as chosen */
      for (const [s, v] of [[f.base, params.base], [f.target, params.target]]) {
        if (v && s.value !== v) { s.append(el('option', { value: v }, v)); s.value = v; }
      }
    },

    clear() {
      this.key = null;
      this.fg.setTree(null);
      this.fg.draw();
      for (const sel of ['#cmp-regressions tbody', '#cmp-improvements tbody', '#cmp-summary']) $(sel).textContent = '';
    },

    async show(s, prev) {
      const params = s.params;
      const f = $('#cmp-form').elements;
      f.event.value = params.event || '';
      f.weight.value = params.weight || U.DEFAULT_WEIGHT;
      f.base_q.value = params.base_q || '';
      f.target_q.value = params.target_q || '';
      if (document.activeElement !== $('#cmp-search')) $('#cmp-search').value = params.q || '';
      if (!prev || prev.view !== 'compare') await this.fillChoices(params);
      else { f.base.value = params.base || ''; f.target.value = params.target || ''; }
      if (!(params.base || params.base_q) || !(params.target || params.target_q)) {
        this.clear();
        return;
      }
      const dp = { base: params.base, base_q: params.base_q, target: params.target, target_q: params.target_q,
        event: params.event, weight: params.weight || U.DEFAULT_WEIGHT };
      const key = JSON.stringify(dp);
      if (key !== this.key) {
        const seq = ++this.seq;
        let j;
        try {
          j = await api('diff' + qs(Object.assign({ kernel: 1, rows: ROWS }, dp)));
        } catch (e) {
          if (seq !== this.seq) return;
          const bad = U.markSelector(f.base_q, e, 'base_q') || U.markSelector(f.target_q, e, 'target_q');
          this.clear();
          showMessage((bad ? 'Bad selector: ' : 'Could not compare: ') + e.message);
          return;
        }
        if (seq !== this.seq) return; /* another comparison was asked for meanwhile */
        U.markSelector(f.base_q, null, 'base_q');
        U.markSelector(f.target_q, null, 'target_q');
        this.key = key;
        this.tree = F.buildTree(j, { diff: true, kernelMarks: true });
        this.fg.setTree(this.tree, dp.weight);
        this.renderSummary(j.summary);
        this.renderRanked($('#cmp-regressions tbody'), firstArray(j, ['regressions']));
        this.renderRanked($('#cmp-improvements tbody'), firstArray(j, ['improvements']));
      }
      if (U.state.view !== 'compare') return;
      this.fg.setZoom(params.zoom ? params.zoom.split(';') : []);
      this.fg.setSearch(params.q || '');
      this.fg.draw();
    },

    /* how many recordings on each side, the test, the change of the total */
    renderSummary(sm) {
      const out = $('#cmp-summary');
      out.textContent = '';
      if (!sm) return;
      const side = (n, matched, capped) => n + ' recording' + (n === 1 ? '' : 's') +
        (capped ? ' (the newest ' + n + ' of ' + matched + ')' : '');
      let t = 'Base: ' + side(sm.base_profiles, sm.base_matched, sm.base_capped) + '; target: ' +
        side(sm.target_profiles, sm.target_matched, sm.target_capped) + '. ';
      if (sm.test) t += 'Significant: ' + (TESTS[sm.test] || sm.test) + (typeof sm.alpha === 'number' ? ' at \u03b1 = ' + sm.alpha : '') + '. ';
      const tc = sm.total_change_pct;
      if (typeof tc === 'number') t += 'The total per recording changed by ' + (tc >= 0 ? '+' : '') + tc.toFixed(1) + '%.';
      out.textContent = t;
    },

    /* /diff's ranked rows as the API orders them (worst first); a row
     * highlights its function in the graph */
    renderRanked(tb, rows) {
      tb.textContent = '';
      for (const r of rows) {
        /* asked with kernel=1, as the tree: "_[k]" marks a kernel function */
        const kernel = /_\[k\]$/.test(r.function);
        const name = kernel ? r.function.slice(0, -4) : r.function;
        const term = '/^' + escapeRe(name) + '$/';
        const dso = typeof r.dso === 'string' ? r.dso : '';
        const grew = (v) => 'num ' + (v > 0 ? 'status-failed' : v < 0 ? 'status-ready' : '');
        tb.append(el('tr', { tabindex: 0, 'data-function': name, title: 'highlight in the flame graph',
          onclick: () => U.setParams({ q: term }, true),
          onkeydown: (e) => { if (e.key === 'Enter') U.setParams({ q: term }, true); } },
        el('td', { class: 'fn' + (kernel ? ' kernel' : ''), title: kernel ? 'kernel' : null }, name),
        el('td', { class: 'num' }, pct(r.base_self_share)), el('td', { class: 'num' }, pct(r.target_self_share)),
        el('td', { class: grew(r.delta_self) }, pts(r.delta_self)),
        el('td', { class: 'num' }, pct(r.base_total_share)), el('td', { class: 'num' }, pct(r.target_total_share)),
        el('td', { class: grew(r.delta_total) }, pts(r.delta_total)),
        el('td', { title: typeof r.p_value === 'number' ? 'p = ' + r.p_value.toPrecision(3) : null }, r.significant ? 'yes' : 'no'),
        el('td', { class: 'dso', title: dso }, dso.slice(dso.lastIndexOf('/') + 1))));
      }
      if (!rows.length) tb.append(el('tr', null, el('td', { colspan: 9, class: 'muted' }, 'none')));
    },
  };

  U.views.compare = compareView;
})();
