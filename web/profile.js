/* profile.js: one profile - header facts, events, records, threads, the
 * timeline heat map, the flame graph (on-CPU, off-CPU or both) and the
 * top-functions table, with links from a frame or a function to its
 * callers and callees, its annotation and its trend. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage, fmtTime, firstArray, tagList, escapeRe } = U;

  /* weights that are time off the CPU (views.md): asked of the timeline
   * too, and offered only where the recording has what they need */
  const OFFCPU_WEIGHTS = ['offcpu', 'wall'];

  /* What a recording can weigh by: {offcpu, wall}. Off-CPU time comes
   * from sched:sched_switch samples held to their thread's switch-in
   * (SWITCH records, perf record --switch-events) or perf --off-cpu's
   * offcpu-time event; wall time adds a time-based on-CPU event. */
  function offcpuOf(m) {
    const spe = m.samples_per_event || {};
    /* an event with samples whose name (modifiers aside) is one of these */
    const has = (re) => (m.events || []).some((e) => re.test(e.name) && (spe[e.name] !== undefined ? spe[e.name] : e.samples) > 0);
    const rec = m.records || {};
    const offcpu = has(/^offcpu-time$/) || (has(/^sched:sched_switch$/) && (rec.SWITCH > 0 || rec.SWITCH_CPU_WIDE > 0));
    return { offcpu: offcpu, wall: offcpu && has(/^(cpu|task)-clock(:|$)/) };
  }

  const profileView = {
    searchBox: '#fg-search',
    id: null,
    meta: null,
    dataKey: null,
    loadingKey: null,
    tlKey: null,
    tree: null,
    timeline: null,
    top: null,
    pollTimer: null,
    fg: null,
    loadSeq: 0,
    /* the on-CPU weight to go back to from off-CPU time */
    onWeight: '',

    redraw() { this.fg.draw(); this.drawHeat(); },

    init() {
      this.fg = new U.FlameView($('#fg'), {
        crumbs: $('#crumbs'), matchEl: $('#fg-match'),
        onZoom: (path) => U.setParams({ zoom: path.join(';') }),
      });
      $('#fg-filter').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        U.setParams({ event: f.event.value, comm: f.comm.value.trim(), pid: f.pid.value, tid: f.tid.value,
          weight: f.weight.value, layout: f.layout.value, zoom: '' });
      });
      $('#fg-filter').elements.layout.addEventListener('change', (e) => U.setParams({ layout: e.target.value }, true));
      $('#fg-filter').elements.weight.addEventListener('change', (e) => U.setParams({ weight: e.target.value }));
      $('#fg-filter').elements.event.addEventListener('change', (e) => U.setParams({ event: e.target.value, zoom: '' }));
      /* the toggle: on-CPU (the weight chosen before), off-CPU, both; the
       * off-CPU weights pick their own event */
      for (const r of document.querySelectorAll('#p-cpu input')) {
        r.addEventListener('change', () => {
          const w = U.state.params.weight || '';
          if (!OFFCPU_WEIGHTS.includes(w)) this.onWeight = w;
          U.setParams({ weight: r.value || this.onWeight, event: '', zoom: '' });
        });
      }
      let t = null;
      $('#fg-search').addEventListener('input', (e) => {
        clearTimeout(t);
        t = setTimeout(() => U.setParams({ q: e.target.value }, true), 200);
      });
      U.searchKeys($('#fg-search'), $('#fg'), () => clearTimeout(t));
      $('#fg-reset').addEventListener('click', () => U.setParams({ zoom: '', q: '' }));
      $('#tl-clear').addEventListener('click', () => U.setParams({ from_ns: '', to_ns: '', zoom: '' }));
      this.initHeat();
      this.initTop();
      if (typeof ResizeObserver !== 'undefined') {
        const wrap = $('#heat').parentElement;
        new ResizeObserver(() => { if (this.timeline && wrap.clientWidth !== this.heatAvail) this.drawHeat(); }).observe(wrap);
      }
    },

    show(s, prev) {
      const id = s.id, params = s.params;
      const f = $('#fg-filter').elements;
      /* every field as the URL says, or a submit would bring back a
       * filter the URL dropped (back button, edited link) */
      f.event.value = params.event || '';
      f.comm.value = params.comm || '';
      f.pid.value = params.pid || '';
      f.tid.value = params.tid || '';
      f.weight.value = params.weight || U.DEFAULT_WEIGHT;
      f.layout.value = params.layout || 'flame';
      const cpu = OFFCPU_WEIGHTS.includes(params.weight) ? params.weight : '';
      for (const r of document.querySelectorAll('#p-cpu input')) r.checked = r.value === cpu;
      if (document.activeElement !== $('#fg-search')) $('#fg-search').value = params.q || '';
      const q = 'profiles/' + encodeURIComponent(id);
      $('#p-collapsed').href = U.API + q + '/collapsed' + qs(U.dataParams(params));
      if (id !== this.id) {
        this.id = id;
        this.meta = null;
        this.dataKey = null;
        this.loadingKey = null;
        this.tlKey = null;
        this.timeline = null;
        this.top = null;
        this.tree = null;
        this.cursor = null;
        this.anchor = null;
        this.fg.setTree(null);
        $('#p-title').textContent = id;
        /* nothing of the previous profile may show while this one loads */
        $('#p-status').textContent = 'loading\u2026';
        for (const sel of ['#p-header', '#p-events tbody', '#p-records tbody', '#p-threads tbody', '#top tbody', '#fg-actions']) $(sel).textContent = '';
        $('#p-cpu').hidden = true;
        this.fg.draw();
        $('#heat').width = 0;
        $('#tl-info').textContent = '';
        this.loadMeta();
        return;
      }
      /* back from another view: the profile may have changed meanwhile
       * (parsed again, relabeled), and a poll stopped with the view */
      if (!this.meta || this.meta.status !== 'ready' || (prev && prev.view !== 'profile')) {
        this.loadMeta();
        return;
      }
      this.loadData(params);
    },

    async loadMeta() {
      clearTimeout(this.pollTimer);
      const id = this.id;
      let m;
      try {
        m = await api('profiles/' + encodeURIComponent(id));
      } catch (e) {
        showMessage('Could not load profile ' + id + ': ' + e.message);
        return;
      }
      if (id !== this.id || U.state.view !== 'profile') return;
      /* a parse that replaced the one shown: its answers are new */
      const replaced = !!(this.meta && this.meta.resymbolizing && !m.resymbolizing);
      this.meta = m;
      this.renderMeta(m);
      if (replaced) this.dataKey = null;
      /* a profile being parsed again (re-symbolized) is served from its
       * earlier parse meanwhile: shown, and followed until it is done */
      if (m.status === 'ready' || m.resymbolizing) {
        if (replaced || !this.dataKey) this.loadThreads();
        this.loadData(U.state.params);
      }
      if (m.status === 'queued' || m.status === 'parsing') this.pollTimer = setTimeout(() => this.loadMeta(), U.POLL_MS);
    },

    renderMeta(m) {
      $('#p-title').textContent = (m.name || m.id) + (m.name && m.name !== String(m.id) ? '  (' + m.id + ')' : '');
      const st = $('#p-status');
      st.textContent = '';
      st.append(el('span', { class: 'status-' + m.status }, m.status));
      if (m.status === 'failed') st.append(': ', el('span', null, m.error || 'unknown error'));
      if (m.resymbolizing) st.append(el('span', { class: 'muted' }, ' (re-symbolizing; the earlier parse is shown until the new one is complete)'));
      else if (m.status === 'queued' || m.status === 'parsing') st.append(el('span', { class: 'muted' }, ' (updating live)'));
      else if (m.status === 'ready' && m.error) st.append(': ', el('span', null, m.error));
      /* what the parser warned about: an unfinished recording (perf record
       * killed), a broken header section */
      const warn = $('#p-warnings');
      warn.textContent = '';
      for (const w of Array.isArray(m.warnings) ? m.warnings : []) warn.append(el('li', null, String(w)));
      warn.hidden = !warn.children.length;
      const h = m.header || {};
      const dl = $('#p-header');
      dl.textContent = '';
      const fact = (k, v) => { if (v !== undefined && v !== null && v !== '') dl.append(el('dt', null, k), el('dd', null, String(v))); };
      fact('host', h.hostname);
      fact('kernel', h.os_release);
      fact('perf', h.perf_version);
      fact('arch', h.arch);
      fact('CPU', h.cpu_desc);
      if (h.nr_cpus_online !== undefined) fact('CPUs', h.nr_cpus_online + ' online / ' + h.nr_cpus_available + ' available');
      if (typeof h.total_mem === 'number') fact('memory', F.fmtBytes(h.total_mem * 1024));
      fact('command', h.cmdline);
      if (h.sample_time && typeof h.sample_time.first_ns === 'number') {
        fact('duration', ((h.sample_time.last_ns - h.sample_time.first_ns) / 1e9).toFixed(3) + ' s');
      }
      fact('uploaded', fmtTime(m.uploaded_at));
      if (typeof m.size === 'number') fact('size', F.fmtBytes(m.size));
      if (typeof m.parse_ms === 'number') fact('parse', m.parse_ms + ' ms');
      if (typeof m.symbolized_pct === 'number') fact('symbolized', F.fmtPct(m.symbolized_pct));
      if (m.lost !== undefined) fact('lost samples', m.lost);
      fact('sha256', m.sha256);
      const tags = tagList(m.tags);
      if (tags.length) fact('tags', tags.join(', '));

      const ev = $('#p-events tbody');
      ev.textContent = '';
      const sel = $('#fg-filter').elements.event;
      sel.textContent = '';
      /* no event in the URL: the server's default, the first event in the
       * recording's own order that has samples (perf report's); the page
       * names it but never pins it by itself */
      const spe = m.samples_per_event || {};
      const sampled = (m.events || []).find((e) => (spe[e.name] !== undefined ? spe[e.name] : e.samples) > 0);
      sel.append(el('option', { value: '' }, sampled ? '(default: ' + sampled.name + ')' : '(default)'));
      for (const e of m.events || []) {
        const n = spe[e.name] !== undefined ? spe[e.name] : e.samples;
        ev.append(el('tr', null, el('td', null, e.name), el('td', { class: 'num' }, n === undefined ? '' : n),
          el('td', null, e.sample_freq !== undefined ? e.sample_freq + ' Hz' : e.sample_period !== undefined ? 'period ' + e.sample_period : '')));
        if (n) sel.append(el('option', { value: e.name }, e.name));
      }
      if (U.state.params.event) sel.value = U.state.params.event;
      const can = offcpuOf(m);
      $('#p-cpu').hidden = !can.offcpu;
      $('#p-cpu input[value="wall"]').disabled = !can.wall;
      for (const o of $('#fg-filter').elements.weight.options) if (OFFCPU_WEIGHTS.includes(o.value)) o.disabled = !can[o.value];
      const rec = $('#p-records tbody');
      rec.textContent = '';
      const recs = Object.entries(m.records || {}).sort((a, b) => b[1] - a[1]);
      for (const [k, v] of recs) rec.append(el('tr', null, el('td', null, k), el('td', { class: 'num' }, v)));
    },

    async loadThreads() {
      const tb = $('#p-threads tbody');
      tb.textContent = '';
      try {
        const j = await api('profiles/' + encodeURIComponent(this.id) + '/threads');
        const list = firstArray(j, ['threads', 'rows']).slice().sort((a, b) => (b.samples || 0) - (a.samples || 0));
        for (const t of list) {
          const comm = Array.isArray(t.comms) ? t.comms.join(', ') : t.comm || '';
          tb.append(el('tr', { tabindex: 0, title: 'show only this thread',
            onclick: () => U.setParams({ pid: t.pid, tid: t.tid, zoom: '' }),
            onkeydown: (e) => { if (e.key === 'Enter') U.setParams({ pid: t.pid, tid: t.tid, zoom: '' }); } },
          el('td', { class: 'num' }, t.pid), el('td', { class: 'num' }, t.tid), el('td', null, comm),
          el('td', { class: 'num' }, t.samples === undefined ? '' : t.samples)));
        }
      } catch (e) {
        tb.append(el('tr', null, el('td', { colspan: 4, class: 'muted' }, 'threads: ' + e.message)));
      }
    },

    /* Fetches the flame graph (and the timeline and top table when their
     * inputs changed) unless only the zoom or the search moved. */
    async loadData(params) {
      const dp = U.dataParams(params);
      const key = JSON.stringify(dp);
      const id = this.id;
      const base = 'profiles/' + encodeURIComponent(id);
      if (key === this.loadingKey) return; /* the load in flight draws when done */
      if (key !== this.dataKey) {
        const seq = ++this.loadSeq;
        this.loadingKey = key;
        /* the heat map counts what the flame graph does: period, samples
         * or the off-CPU weight's time */
        const tlWeight = dp.weight;
        const tlKey = id + '|' + (dp.event || '') + '|' + tlWeight + '|' + this.bucketMs();
        /* kernel=1: kernel frames come marked "_[k]", which buildTree
         * turns into their kind (colour) */
        const jobs = [api(base + '/flamegraph' + qs(Object.assign({ kernel: 1 }, dp)))];
        jobs.push(tlKey !== this.tlKey ? api(base + '/timeline' + qs({ event: dp.event, weight: tlWeight, bucket_ms: this.bucketMs() })).catch((e) => e) : null);
        const filtered = dp.comm || dp.pid || dp.tid || dp.from_ns || dp.to_ns;
        jobs.push(filtered ? null : api(base + '/top' + qs({ event: dp.event, weight: dp.weight, limit: 500 })).catch((e) => e));
        let res;
        try {
          res = await Promise.all(jobs);
        } catch (e) {
          if (seq === this.loadSeq) this.loadingKey = null;
          showMessage('Could not load the flame graph: ' + e.message);
          return;
        }
        /* a newer load (other filters, other profile) supersedes this one */
        if (seq !== this.loadSeq || id !== this.id) return;
        this.loadingKey = null;
        this.dataKey = key;
        this.tree = F.buildTree(res[0], { kernelMarks: true });
        this.fg.setTree(this.tree, dp.weight);
        if (res[1] && !(res[1] instanceof Error)) {
          this.tlKey = tlKey;
          this.timeline = F.normalizeTimeline(res[1], this.bucketMs(), tlWeight);
          this.timeline.unit = tlWeight;
        } else if (res[1] instanceof Error) {
          this.timeline = null;
          $('#tl-info').textContent = 'timeline: ' + res[1].message;
        }
        if (res[2] && !(res[2] instanceof Error)) this.top = firstArray(res[2], ['functions', 'top', 'rows']);
        else this.top = F.topFunctions(this.tree); /* filtered: computed from the filtered tree */
      }
      /* zoom, search and layout as the URL says now, not as it said when
       * the load began */
      if (U.state.view !== 'profile' || U.state.id !== id) return;
      const p = U.state.params;
      this.fg.icicle = p.layout === 'icicle';
      this.fg.setZoom(p.zoom ? p.zoom.split(';') : []);
      this.fg.setSearch(p.q || '');
      this.fg.draw();
      this.drawHeat();
      this.renderTop();
      this.renderActions();
    },

    /* The zoomed frame's views: its callers and callees, its annotation,
     * its trend over the recordings. */
    renderActions() {
      const box = $('#fg-actions');
      box.textContent = '';
      const n = this.fg.focus;
      if (!n || F.frameKind(n) === 'root' || F.frameKind(n) === 'comm') return;
      box.append(el('span', { class: 'muted' }, n.name + ':'), ...U.functionLinks(this.id, n.name, U.dataParams(U.state.params)));
    },

    bucketMs() {
      /* FlameScope uses 50 rows of 20 ms; long recordings get 10 rows of
       * 100 ms so that the grid stays a few hundred columns wide. */
      const h = (this.meta && this.meta.header) || {};
      const st = h.sample_time;
      const dur = st && typeof st.first_ns === 'number' ? (st.last_ns - st.first_ns) / 1e9 : 0;
      return dur > 600 ? 100 : 20;
    },

    /* ---- heat map ---- */

    initHeat() {
      const cv = $('#heat');
      let start = null;
      const idx = (e) => {
        if (!this.timeline || !this.grid) return null;
        const b = cv.getBoundingClientRect();
        const col = Math.floor((e.clientX - b.left) / this.cellW);
        const row = Math.floor((e.clientY - b.top) / this.cellH);
        if (col < 0 || row < 0 || col >= this.grid.cols || row >= this.grid.rows) return null;
        return col * this.grid.rows + row;
      };
      cv.addEventListener('mousedown', (e) => {
        /* no text selection while dragging (Firefox starts one), but
         * the canvas still takes the focus for the keys */
        e.preventDefault();
        cv.focus();
        start = idx(e);
        this.dragEnd = start;
        this.drawHeat();
      });
      /* Keys: arrows move a cursor cell (the first press shows it), down
       * and up through a second's buckets, right and left by a second;
       * Shift extends a range from where it began; Enter selects the range
       * (or the cursor's bucket), Escape clears the selection. */
      this.cursor = null;
      this.anchor = null;
      cv.addEventListener('keydown', (e) => {
        if (!this.timeline || !this.grid) return;
        const n = this.grid.cols * this.grid.rows;
        const steps = { ArrowDown: 1, ArrowUp: -1, ArrowRight: this.grid.rows, ArrowLeft: -this.grid.rows };
        if (e.key in steps) {
          e.preventDefault();
          const was = this.cursor;
          this.cursor = was === null ? 0 : Math.max(0, Math.min(n - 1, was + steps[e.key]));
          if (!e.shiftKey) this.anchor = null;
          else if (this.anchor === null) this.anchor = was === null ? this.cursor : was;
          this.drawHeat();
          const b = cv.getBoundingClientRect();
          const col = Math.floor(this.cursor / this.grid.rows), row = this.cursor % this.grid.rows;
          U.showTip(this.heatTip(this.cursor), b.left + (col + 1) * this.cellW, b.top + (row + 1) * this.cellH);
        } else if (e.key === 'Enter' && this.cursor !== null) {
          e.preventDefault();
          const r = F.bucketRange(this.timeline, this.anchor === null ? this.cursor : this.anchor, this.cursor);
          this.anchor = null;
          U.hideTip();
          U.setParams({ from_ns: String(Math.round(r.fromNs)), to_ns: String(Math.round(r.toNs)), zoom: '' });
        } else if (e.key === 'Escape') {
          e.preventDefault();
          this.anchor = null;
          U.hideTip();
          if (U.state.params.from_ns || U.state.params.to_ns) U.setParams({ from_ns: '', to_ns: '', zoom: '' });
          else this.drawHeat();
        }
      });
      cv.addEventListener('blur', () => { this.anchor = null; U.hideTip(); this.drawHeat(); });
      const move = (e) => {
        const i = idx(e);
        if (i === null) { U.hideTip(); return; }
        if (start !== null) { this.dragEnd = i; this.drawHeat(); }
        U.showTip(this.heatTip(i), e.clientX, e.clientY, { el: cv, again: move });
      };
      cv.addEventListener('mousemove', move);
      cv.addEventListener('mouseleave', () => U.hideTip());
      window.addEventListener('mouseup', (e) => {
        if (start === null) return;
        const end = idx(e) !== null ? idx(e) : this.dragEnd;
        const a = start;
        start = null;
        this.dragEnd = null;
        if (end === null || end === undefined) return;
        const r = F.bucketRange(this.timeline, a, end);
        U.setParams({ from_ns: String(Math.round(r.fromNs)), to_ns: String(Math.round(r.toNs)), zoom: '' });
      });
      this.dragStart = () => start;
    },

    heatTip(i) {
      const tl = this.timeline;
      const v = tl.counts[i] || 0;
      return [el('div', null, ((i * tl.bucketNs) / 1e9).toFixed(3) + ' s: ' + (tl.unit ? F.fmtWeight(v, tl.unit, true) : v + ' samples'))];
    },

    drawHeat() {
      const cv = $('#heat');
      const tl = this.timeline;
      const info = $('#tl-info');
      const p = U.state.params;
      $('#tl-clear').hidden = !(p.from_ns || p.to_ns);
      this.heatGeom = null;
      if (!tl || !tl.counts.length) {
        cv.width = 0; cv.height = 0; delete cv.dataset.hash;
        if (tl) info.textContent = 'no samples';
        return;
      }
      const g = F.heatGrid(tl);
      this.grid = g;
      const avail = cv.parentElement.clientWidth || 800;
      this.heatAvail = cv.parentElement.clientWidth;
      this.cellW = Math.max(3, Math.min(40, Math.floor(avail / g.cols)));
      this.cellH = Math.max(3, Math.floor(150 / g.rows));
      const w = g.cols * this.cellW, h = g.rows * this.cellH;
      const dpr = window.devicePixelRatio || 1;
      cv.width = Math.round(w * dpr);
      cv.height = Math.round(h * dpr);
      cv.style.width = w + 'px';
      cv.style.height = h + 'px';
      const ctx = cv.getContext('2d');
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, h);
      let lo = -1, hi = -1;
      const ds = this.dragStart ? this.dragStart() : null;
      if (ds !== null && this.dragEnd !== null && this.dragEnd !== undefined) {
        lo = Math.min(ds, this.dragEnd); hi = Math.max(ds, this.dragEnd);
      } else if (this.anchor !== null && this.cursor !== null) {
        lo = Math.min(this.anchor, this.cursor); hi = Math.max(this.anchor, this.cursor);
      } else if (p.from_ns && p.to_ns) {
        lo = Math.floor((+p.from_ns - tl.startNs) / tl.bucketNs);
        hi = Math.ceil((+p.to_ns - tl.startNs) / tl.bucketNs) - 1;
      }
      for (let i = 0; i < g.cols * g.rows; i++) {
        const c = tl.counts[i] || 0;
        const col = Math.floor(i / g.rows), row = i % g.rows;
        const v = g.max ? c / g.max : 0;
        ctx.fillStyle = c === 0 ? '#f7f7f7' : 'hsl(' + Math.round(50 - 50 * v) + ',90%,' + Math.round(85 - 45 * v) + '%)';
        if (i >= lo && i <= hi) ctx.fillStyle = c === 0 ? '#c7d7fb' : 'hsl(220,80%,' + Math.round(75 - 35 * v) + '%)';
        ctx.fillRect(col * this.cellW, row * this.cellH, this.cellW - 1, this.cellH - 1);
      }
      if (this.cursor !== null && this.cursor < g.cols * g.rows && document.activeElement === cv) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1.5;
        ctx.strokeRect(Math.floor(this.cursor / g.rows) * this.cellW + 0.75, (this.cursor % g.rows) * this.cellH + 0.75,
          this.cellW - 2.5, this.cellH - 2.5);
      }
      const most = tl.unit ? F.fmtWeight(g.max, tl.unit, true) + ' per bucket' : g.max + ' samples/bucket';
      let txt = g.cols + ' s \u00d7 ' + g.rows + ' rows of ' + Math.round(tl.bucketNs / 1e6) + ' ms; max ' + most;
      if (p.from_ns && p.to_ns) {
        txt += '; selected ' + ((+p.from_ns - tl.startNs) / 1e9).toFixed(3) + '\u2013' + ((+p.to_ns - tl.startNs) / 1e9).toFixed(3) + ' s';
      }
      info.textContent = txt;
      this.heatGeom = { cols: g.cols, rows: g.rows, cellW: this.cellW, cellH: this.cellH, max: g.max,
        startNs: tl.startNs, bucketNs: tl.bucketNs, counts: tl.counts.slice(), selected: [lo, hi] };
      cv.dataset.hash = location.hash;
    },

    /* ---- top table ---- */

    initTop() {
      this.sortKey = 'self';
      this.sortDir = -1;
      for (const th of document.querySelectorAll('#top th[data-key]')) {
        th.tabIndex = 0;
        const sort = () => {
          const k = th.dataset.key;
          this.sortDir = this.sortKey === k ? -this.sortDir : (k === 'name' ? 1 : -1);
          this.sortKey = k;
          this.renderTop();
        };
        th.addEventListener('click', sort);
        th.addEventListener('keydown', (e) => { if (e.key === 'Enter') sort(); });
      }
    },

    renderTop() {
      const tb = $('#top tbody');
      tb.textContent = '';
      if (!this.top || !this.tree) return;
      const total = this.tree.value || 1;
      const rows = this.top.map((r) => ({ name: r.name, self: +r.self || 0, total: +r.total || 0,
        selfPct: (100 * (+r.self || 0)) / total, totalPct: (100 * (+r.total || 0)) / total }));
      const k = this.sortKey, d = this.sortDir;
      rows.sort((a, b) => (a[k] < b[k] ? -d : a[k] > b[k] ? d : 0));
      for (const th of document.querySelectorAll('#top th')) {
        th.setAttribute('aria-sort', th.dataset.key === k ? (d < 0 ? 'descending' : 'ascending') : 'none');
      }
      const q = U.state.params.q || '';
      const dp = U.dataParams(U.state.params);
      for (const r of rows.slice(0, 300)) {
        const term = '/^' + escapeRe(r.name) + '$/';
        const pick = () => U.setParams({ q: q === term ? '' : term }, true);
        tb.append(el('tr', { tabindex: 0, class: q === term ? 'selected' : null, title: 'highlight in the flame graph',
          onclick: pick, onkeydown: (e) => { if (e.key === 'Enter') pick(); } },
        el('td', { class: 'fn' }, r.name), el('td', { class: 'num' }, F.fmtWeight(r.self, dp.weight)),
        el('td', { class: 'num' }, F.fmtPct(r.selfPct)), el('td', { class: 'num' }, F.fmtWeight(r.total, dp.weight)),
        el('td', { class: 'num' }, F.fmtPct(r.totalPct)),
        el('td', { class: 'actions' }, ...U.functionLinks(this.id, r.name, dp, ['sandwich', 'annotate']))));
      }
    },
  };

  U.views.profile = profileView;
})();
