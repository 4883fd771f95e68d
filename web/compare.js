/* compare.js: two profiles compared - the differential flame graph
 * (/api/v1/diff) and the largest regressions. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage, fmtTime, firstArray, escapeRe } = U;

  const compareView = {
    searchBox: '#cmp-search',

    redraw() { this.fg.draw(); },
    fg: null,
    key: null,
    tree: null,

    init() {
      this.fg = new U.FlameView($('#cmp-fg'), {
        diff: true, crumbs: $('#cmp-crumbs'), matchEl: $('#cmp-match'),
        onZoom: (path) => U.setParams({ zoom: path.join(';') }, true),
      });
      $('#cmp-form').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        U.setParams({ base: f.base.value, target: f.target.value, event: f.event.value.trim(), weight: f.weight.value, zoom: '' });
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

    async show(s, prev) {
      const params = s.params;
      const f = $('#cmp-form').elements;
      f.event.value = params.event || '';
      f.weight.value = params.weight || 'samples';
      if (document.activeElement !== $('#cmp-search')) $('#cmp-search').value = params.q || '';
      if (!prev || prev.view !== 'compare') await this.fillChoices(params);
      if (!params.base || !params.target) {
        this.fg.setTree(null);
        this.fg.draw();
        $('#cmp-regressions tbody').textContent = '';
        return;
      }
      const dp = { base: params.base, target: params.target, event: params.event, weight: params.weight || 'samples' };
      const key = JSON.stringify(dp);
      if (key !== this.key) {
        let j;
        try {
          j = await api('diff' + qs(Object.assign({ kernel: 1 }, dp)));
        } catch (e) {
          showMessage('Could not compare: ' + e.message);
          return;
        }
        this.key = key;
        this.tree = F.buildTree(j, { diff: true, kernelMarks: true });
        this.fg.setTree(this.tree, dp.weight);
        this.renderRegressions();
      }
      this.fg.setZoom(params.zoom ? params.zoom.split(';') : []);
      this.fg.setSearch(params.q || '');
      this.fg.draw();
    },

    renderRegressions() {
      const tb = $('#cmp-regressions tbody');
      tb.textContent = '';
      for (const r of F.regressions(this.tree, 30)) {
        const term = '/^' + escapeRe(r.name) + '$/';
        tb.append(el('tr', { tabindex: 0, onclick: () => U.setParams({ q: term }, true),
          onkeydown: (e) => { if (e.key === 'Enter') U.setParams({ q: term }, true); } },
        el('td', { class: 'fn' }, r.name), el('td', { class: 'num' }, F.fmtPct(r.basePct)),
        el('td', { class: 'num' }, F.fmtPct(r.targetPct)),
        el('td', { class: 'num ' + (r.deltaPct > 0 ? 'status-failed' : 'status-ready') },
          (r.deltaPct >= 0 ? '+' : '') + r.deltaPct.toFixed(2) + ' pts')));
      }
    },
  };

  U.views.compare = compareView;
})();
