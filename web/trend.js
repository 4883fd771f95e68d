/* trend.js: a function (or a DSO, or a comm) over the recordings a
 * selector picks (/api/v1/series): a chart with a point per recording,
 * oldest first, one line per value of a label when grouped; a click on a
 * point opens that recording. The name is typed (the selection's largest
 * functions are offered) or picked with a click on a frame of the
 * selection's merged flame graph (/api/v1/query/flamegraph). */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage, fmtTime, firstArray, tagList, escapeRe } = U;

  const KINDS = ['function', 'dso', 'comm'];
  const CHART_H = 300;
  const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#854d0e', '#db2777'];
  const MERGED_NODES = 20000; /* the merged graph is for picking: its largest nodes */

  /* the series' key: {kind, name} from the URL (function=, dso= or comm=) */
  const keyOf = (p) => {
    const kind = KINDS.find((k) => p[k]);
    return kind ? { kind: kind, name: p[kind] } : { kind: 'function', name: '' };
  };
  const isShare = (metric) => !metric || /share$/.test(metric);
  /* the flame graph weight a metric counts by (samples, self_samples;
   * period, self_period); the shares: the server's default */
  const weightOf = (metric) => (/period$/.test(metric || '') ? 'period' : /samples$/.test(metric || '') ? 'samples' : U.DEFAULT_WEIGHT);
  const fmtValue = (v, metric) => (typeof v !== 'number' ? '-' : isShare(metric) ? v.toFixed(2) + '%' : F.fmtCount(v));

  const trendView = {
    fg: null,
    data: null,      /* {series, metric} of the last answer */
    geom: null,      /* what the chart shows (the test hook) */
    width: 0,        /* the chart's, as last drawn */
    loading: false,  /* the series of the state shown is being asked for */
    seq: 0,
    mergedKey: null,
    tree: null,

    redraw() { this.drawChart(); this.fg.draw(); },

    init() {
      this.fg = new U.FlameView($('#tr-fg'), { onZoom: (path) => this.pickFrame(path) });
      $('#tr-form').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        const p = { sel: f.sel.value.trim(), metric: f.metric.value, group_by: f.group_by.value.trim() };
        for (const k of KINDS) p[k] = k === f.kind.value ? f.name.value.trim() : '';
        U.go({ view: 'trend', params: p });
      });
      /* the names offered follow the kind */
      $('#tr-form').elements.kind.addEventListener('change', () => this.fillNames());
      /* the chart's width can change without a window resize: a
       * scrollbar that appears once the merged graph below makes the
       * page taller (Firefox, classic scrollbars) */
      if (typeof ResizeObserver !== 'undefined') {
        const box = $('#tr-chart').parentElement;
        new ResizeObserver(() => {
          if (this.data && box.clientWidth && box.clientWidth !== this.width) this.drawChart();
        }).observe(box);
      }
    },

    show(s) {
      const p = s.params;
      const f = $('#tr-form').elements;
      const key = keyOf(p);
      f.sel.value = p.sel || '';
      f.kind.value = key.kind;
      f.name.value = key.name;
      f.metric.value = p.metric || 'self_share';
      f.group_by.value = p.group_by || '';
      this.fillNames();
      this.loadMerged(p);
      this.loadSeries(p);
    },

    /* ---- the chart ---- */

    async loadSeries(p) {
      const key = keyOf(p);
      const metric = p.metric || 'self_share';
      const info = $('#tr-info');
      const seq = ++this.seq;
      /* until this state's answer is drawn the chart is not its (a
       * redraw meanwhile shows the last answer, or none) */
      this.loading = true;
      if (!key.name && isShare(metric)) {
        this.data = null;
        this.loading = false;
        this.drawChart();
        info.textContent = 'Pick a function, a DSO or a comm: type its name above or click a frame below.';
        return;
      }
      let j;
      try {
        j = await api('series' + qs({ q: p.sel, [key.kind]: key.name || undefined, metric: metric, group_by: p.group_by }));
      } catch (e) {
        if (seq !== this.seq) return;
        const bad = U.markSelector($('#tr-form').elements.sel, e, 'q');
        this.data = null;
        this.loading = false;
        this.drawChart();
        showMessage((bad ? 'Bad selector: ' : 'Could not get the series: ') + e.message);
        return;
      }
      if (seq !== this.seq || U.state.view !== 'trend') return;
      U.markSelector($('#tr-form').elements.sel, null, 'q');
      const series = Array.isArray(j.series) ? j.series : [{ label: '', points: firstArray(j, ['points']) }];
      this.data = { series: series, metric: metric, key: key };
      this.loading = false;
      const n = series.reduce((a, s) => a + s.points.length, 0);
      info.textContent = (key.name ? key.kind + ' ' + key.name + ': ' : 'every recording: ') + metric.replace('_', ' ') + ' in ' + n +
        ' recording' + (n === 1 ? '' : 's') + (j.capped ? ' (the newest of ' + j.matched + ')' : '') +
        (p.group_by ? ', by ' + p.group_by : '') + '. A point opens its recording.';
      this.drawChart();
    },

    drawChart() {
      const svg = $('#tr-chart');
      const NS = svg.namespaceURI; /* SVG's, as the page's own <svg> has it */
      const mk = (tag, attrs, text) => {
        const e = document.createElementNS(NS, tag);
        for (const k of Object.keys(attrs || {})) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, String(attrs[k]));
        if (text !== undefined) e.textContent = text;
        return e;
      };
      svg.textContent = '';
      $('#tr-legend').textContent = '';
      this.geom = null;
      const d = this.data;
      const width = svg.parentElement.clientWidth || 800;
      this.width = width;
      svg.setAttribute('width', width);
      svg.setAttribute('height', d ? CHART_H : 0);
      svg.setAttribute('viewBox', '0 0 ' + width + ' ' + (d ? CHART_H : 0));
      if (!d) {
        if (!this.loading) svg.dataset.hash = location.hash;
        return;
      }
      const g = F.trendLayout(d.series, width, CHART_H);
      const pl = g.plot;
      for (const t of g.ticks) {
        svg.append(mk('line', { class: 'grid', x1: pl.left, x2: pl.right, y1: t.y, y2: t.y }),
          mk('text', { class: 'tick', x: pl.left - 6, y: t.y + 4, 'text-anchor': 'end' }, fmtValue(t.value, d.metric)));
      }
      if (g.runs.length) {
        const first = g.runs[0], last = g.runs[g.runs.length - 1];
        svg.append(mk('text', { class: 'tick', x: first.x, y: CHART_H - 8, 'text-anchor': 'start' }, fmtTime(first.uploaded_at)));
        if (g.runs.length > 1) svg.append(mk('text', { class: 'tick', x: last.x, y: CHART_H - 8, 'text-anchor': 'end' }, fmtTime(last.uploaded_at)));
      } else {
        svg.append(mk('text', { class: 'tick', x: (pl.left + pl.right) / 2, y: CHART_H / 2, 'text-anchor': 'middle' }, 'no recordings match'));
      }
      g.series.forEach((s, i) => {
        const color = COLORS[i % COLORS.length];
        if (s.points.length > 1) {
          svg.append(mk('polyline', { class: 'line', stroke: color, points: s.points.map((p) => p.x.toFixed(1) + ',' + p.y.toFixed(1)).join(' ') }));
        }
        for (const p of s.points) {
          const c = mk('circle', { class: 'pt', cx: p.x, cy: p.y, r: 5, fill: color, tabindex: 0, role: 'link', 'data-id': p.id,
            'aria-label': (p.name || p.id) + ': ' + fmtValue(p.value, d.metric) });
          c.addEventListener('click', () => this.open(p));
          c.addEventListener('keydown', (e) => { if (e.key === 'Enter') this.open(p); });
          c.addEventListener('mousemove', (e) => U.showTip(this.describe(p, s.label), e.clientX, e.clientY));
          c.addEventListener('mouseleave', () => U.hideTip());
          c.addEventListener('focus', () => { const b = c.getBoundingClientRect(); U.showTip(this.describe(p, s.label), b.right, b.bottom); });
          c.addEventListener('blur', () => U.hideTip());
          svg.append(c);
        }
        if (d.series.length > 1) $('#tr-legend').append(el('span', { style: 'background:' + color + ';color:#fff' }, s.label || '(no label)'));
      });
      this.geom = { metric: d.metric, series: g.series.map((s) => ({ label: s.label,
        points: s.points.map((p) => ({ id: String(p.id), name: p.name, value: p.value, x: p.x, y: p.y })) })) };
      if (!this.loading) svg.dataset.hash = location.hash;
    },

    describe(p, label) {
      const lines = [el('div', { class: 'fn' }, (p.name || p.id) + ' (' + p.id + ')'),
        el('div', { class: 'value' }, fmtValue(p.value, this.data.metric) + ' ' + this.data.metric.replace('_', ' ')),
        el('div', { class: 'muted' }, fmtTime(p.uploaded_at))];
      const tags = tagList(p.tags);
      if (tags.length) lines.push(el('div', { class: 'muted' }, tags.join(', ')));
      if (label) lines.push(el('div', { class: 'muted' }, U.state.params.group_by + ' = ' + label));
      return lines;
    },

    /* A recording of the chart, with what the chart follows highlighted. */
    open(p) {
      U.hideTip();
      const key = this.data.key;
      const params = {};
      if (key.kind === 'function' && key.name) params.q = '/^' + escapeRe(key.name) + '$/';
      if (key.kind === 'dso') params.q = 'dso:' + key.name;
      if (key.kind === 'comm') params.comm = key.name;
      const weight = weightOf(this.data.metric);
      if (weight !== U.DEFAULT_WEIGHT) params.weight = weight;
      U.go({ view: 'profile', id: String(p.id), params: params });
    },

    /* ---- the selection's merged flame graph and the names offered ---- */

    async loadMerged(p) {
      const weight = weightOf(p.metric);
      const mk = JSON.stringify([p.sel || '', weight]);
      if (mk !== this.mergedKey) {
        this.mergedKey = mk;
        this.tree = null;
        this.top = [];
        this.fg.setTree(null);
        this.fg.draw();
        let res;
        try {
          res = await Promise.all([
            api('query/flamegraph' + qs({ q: p.sel, weight: weight, kernel: 1, max_nodes: MERGED_NODES })),
            api('query/top' + qs({ q: p.sel, weight: weight, rows: 500 })).catch(() => null),
          ]);
        } catch (e) {
          if (mk === this.mergedKey) this.mergedKey = null;
          return; /* the series says what is wrong with the selector */
        }
        if (mk !== this.mergedKey) return;
        this.tree = F.buildTree(res[0], { kernelMarks: true });
        this.top = firstArray(res[1], ['functions']);
        this.fg.setTree(this.tree, weight);
        this.fillNames();
      }
      if (U.state.view !== 'trend' || !this.tree) return;
      const key = keyOf(U.state.params);
      this.fg.setSearch(!key.name ? '' : key.kind === 'function' ? '/^' + escapeRe(key.name) + '$/' : key.kind === 'dso' ? 'dso:' + key.name : '');
      this.fg.draw();
    },

    /* the datalist: the selection's functions (largest self first), DSOs
     * or comms for the kind chosen */
    fillNames() {
      const list = $('#tr-names');
      list.textContent = '';
      const kind = $('#tr-form').elements.kind.value;
      const names = new Set();
      if (kind === 'function') {
        for (const r of this.top || []) names.add(r.name);
      } else if (this.tree) {
        const stack = [this.tree];
        while (stack.length) {
          const n = stack.pop();
          if (kind === 'comm' && n.depth === 1) names.add(n.name);
          const dso = kind === 'dso' && n.depth >= 2 ? F.frameDso(n) : null;
          if (dso) names.add(dso.base);
          if (n.depth < 1 || kind === 'dso') stack.push(...n.children);
        }
      }
      for (const n of names) list.append(el('option', { value: n }));
    },

    /* a click (or Enter) on a frame of the merged graph: its function, or
     * its comm on the first level, is what the chart follows */
    pickFrame(path) {
      if (!this.tree || !path.length) return;
      const n = F.findPath(this.tree, path);
      const kind = F.frameKind(n) === 'comm' ? 'comm' : 'function';
      const p = {};
      for (const k of KINDS) p[k] = k === kind ? n.name : '';
      U.setParams(p);
    },
  };

  U.views.trend = trendView;
})();
