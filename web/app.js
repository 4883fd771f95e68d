/* app.js: the perfhub page. Three views behind the URL fragment
 * (#/ the list, #/profile/ID?..., #/compare?...), all state in the URL so
 * that any view can be pasted into a chat. It talks only to the JSON API
 * of perfhubd (README, perfhubd(8)); the model lives in flame.js. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const API = 'api/v1/';
  const ROW_H = 17;
  const POLL_MS = 1500;
  /* the server's default weight for every answer: the sample period, as
   * stackcollapse-perf sums it (docs/query.md) */
  const DEFAULT_WEIGHT = 'period';

  /* ---- small helpers ----------------------------------------------------- */

  const $ = (sel) => document.querySelector(sel);

  /* el('td', {class: 'num'}, 'text', child...) */
  function el(tag, attrs) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else if (k === 'text') e.textContent = v;
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) {
      const c = arguments[i];
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  function token() {
    try { return localStorage.getItem('perfhub.token') || ''; } catch (e) { return ''; }
  }

  function headers() {
    const t = token();
    return t ? { Authorization: 'Bearer ' + t } : {};
  }

  function qs(params) {
    const u = new URLSearchParams();
    for (const k of Object.keys(params)) {
      const v = params[k];
      if (v === undefined || v === null || v === '') continue;
      if (Array.isArray(v)) v.forEach((x) => u.append(k, x));
      else u.set(k, v);
    }
    const s = u.toString();
    return s ? '?' + s : '';
  }

  /* A server that needs a token (require-read-token) answers the API 401
   * while the page itself loads: the token box says so and takes focus. */
  function askForToken() {
    const tok = $('#token');
    tok.classList.add('wanted');
    tok.focus();
  }

  /* JSON from the API; a failure throws an Error carrying the server's
   * {"error"} text and the HTTP status. A busy server (503 with
   * Retry-After, too many heavy queries at once) is asked again, up to
   * three times. */
  async function api(path, opts) {
    const url = path.startsWith('/') || path.startsWith('healthz') ? path : API + path;
    let r;
    for (let attempt = 0; ; attempt++) {
      r = await fetch(url, Object.assign({ headers: headers() }, opts || {}));
      const wait = Number(r.headers.get('Retry-After'));
      if (r.status !== 503 || attempt >= 3 || !(wait > 0 && wait <= 30)) break;
      await new Promise((res) => setTimeout(res, wait * 1000));
    }
    if (r.status === 204) return null;
    const type = r.headers.get('Content-Type') || '';
    const body = type.includes('json') ? await r.json().catch(() => null) : await r.text();
    if (!r.ok) {
      if (r.status === 401) askForToken();
      const msg = r.status === 401 ? 'this server wants a token: enter it in the Token box above'
        : body && body.error ? body.error : 'HTTP ' + r.status;
      const err = new Error(msg);
      err.status = r.status;
      throw err;
    }
    return body;
  }

  function showMessage(text, info) {
    const m = $('#message');
    if (!text) { m.hidden = true; return; }
    m.textContent = text;
    m.className = 'message' + (info ? ' info' : '');
    m.hidden = false;
  }

  function fmtTime(v) {
    if (v === undefined || v === null || v === '') return '-';
    const d = typeof v === 'number' ? new Date(v < 1e11 ? v * 1000 : v) : new Date(v);
    return isNaN(d) ? String(v) : d.toLocaleString();
  }

  function firstArray(j, keys) {
    if (Array.isArray(j)) return j;
    for (const k of keys) if (j && Array.isArray(j[k])) return j[k];
    return [];
  }

  function profileSamples(p) {
    if (typeof p.samples === 'number') return p.samples;
    if (p.samples_per_event && typeof p.samples_per_event === 'object') {
      return Object.values(p.samples_per_event).reduce((a, b) => a + (+b || 0), 0);
    }
    return undefined;
  }

  function tagList(tags) {
    if (!tags) return [];
    if (Array.isArray(tags)) return tags.map(String);
    return Object.keys(tags).map((k) => k + '=' + tags[k]);
  }

  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'); }

  /* ---- routing ------------------------------------------------------------ */

  let current = { view: null, id: null, params: {} };

  function go(state, replace) {
    const h = F.formatHash(state);
    if (h === location.hash) return;
    if (replace) history.replaceState(null, '', h);
    else history.pushState(null, '', h);
    route();
  }

  /* Updates some URL parameters of the current view. */
  function setParams(changes, replace) {
    const p = Object.assign({}, current.params, changes);
    go({ view: current.view, id: current.id, params: p }, replace);
  }

  function route() {
    const s = F.parseHash(location.hash);
    const prev = current;
    current = s;
    for (const v of ['list', 'profile', 'compare']) $('#view-' + v).hidden = v !== s.view;
    $('#nav-list').toggleAttribute('aria-current', s.view === 'list');
    $('#nav-compare').toggleAttribute('aria-current', s.view === 'compare');
    if (s.view !== 'list') stopListPoll();
    showMessage('');
    /* back from another view: no rows of an old answer while the list loads */
    if (s.view === 'list' && prev.view !== 'list') $('#profiles tbody').textContent = '';
    if (s.view === 'list') listView.show(s.params);
    else if (s.view === 'profile') profileView.show(s.id, s.params, prev);
    else compareView.show(s.params, prev);
  }

  /* ---- the flame graph on a canvas ----------------------------------------- */

  /* One canvas, one tree. Zoom, search, selection and layout are set from
   * the URL by the views; clicks and keys report back through callbacks. */
  class FlameView {
    constructor(canvas, opts) {
      this.canvas = canvas;
      this.opts = opts;
      this.tree = null;
      this.focus = null;
      this.sel = null;
      this.icicle = false;
      this.match = { nodes: new Set(), value: 0, pct: 0 };
      this.rows = [];
      this.unit = 'samples';
      canvas.addEventListener('mousemove', (e) => this.hover(e));
      canvas.addEventListener('mouseleave', () => hideTip());
      canvas.addEventListener('click', (e) => {
        const r = this.at(e);
        if (r) this.opts.onZoom(r.node.parent ? F.pathOf(r.node) : []);
      });
      canvas.addEventListener('keydown', (e) => this.key(e));
      /* the keyboard's tooltip goes with the focus */
      canvas.addEventListener('blur', () => hideTip());
      /* the width can change without a window resize: a scrollbar that
       * appears once the page is taller (Firefox, classic scrollbars) */
      this.width = 0;
      if (typeof ResizeObserver !== 'undefined') {
        new ResizeObserver(() => {
          if (this.tree && canvas.parentElement.clientWidth !== this.width) this.draw();
        }).observe(canvas.parentElement);
      }
    }

    setTree(tree, unit) {
      this.tree = tree;
      this.unit = unit || 'samples';
      this.focus = tree;
      this.sel = null;
    }

    setZoom(path) {
      if (!this.tree) return;
      this.focus = F.findPath(this.tree, path);
      this.renderCrumbs();
    }

    setSearch(term) {
      if (!this.tree) return;
      this.match = F.search(this.tree, term);
      const m = this.opts.matchEl;
      if (m) {
        m.textContent = term
          ? 'matched ' + this.match.nodes.size + ' frames, ' + F.fmtPct(this.match.pct) + ' of all'
          : '';
      }
    }

    renderCrumbs() {
      const c = this.opts.crumbs;
      c.textContent = '';
      const chain = [];
      for (let n = this.focus; n; n = n.parent) chain.unshift(n);
      chain.forEach((n, i) => {
        if (i) c.append(el('span', { class: 'sep' }, '\u203a'));
        const label = n.parent ? n.name : 'all';
        if (i === chain.length - 1) c.append(el('strong', null, label));
        else c.append(el('a', { tabindex: 0, onclick: () => this.opts.onZoom(F.pathOf(n)),
          onkeydown: (e) => { if (e.key === 'Enter') this.opts.onZoom(F.pathOf(n)); } }, label));
      });
    }

    draw() {
      const cv = this.canvas;
      const ctx = cv.getContext('2d');
      const width = cv.parentElement.clientWidth || 800;
      this.width = width;
      this.drawn = [];
      if (!this.tree) { cv.height = 0; delete cv.dataset.hash; return; }
      this.rows = F.layout(this.tree, this.focus, width, 0.3);
      const nrows = Math.max(1, this.rows.length);
      const height = nrows * ROW_H + 4;
      const dpr = window.devicePixelRatio || 1;
      cv.width = Math.round(width * dpr);
      cv.height = Math.round(height * dpr);
      cv.style.height = height + 'px';
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.font = '11.5px ui-monospace, "DejaVu Sans Mono", monospace';
      ctx.textBaseline = 'middle';
      const charW = ctx.measureText('mmmmmmmmmm').width / 10 || 7;
      const searching = this.match.nodes.size > 0;
      const rootB = this.tree.base, rootT = this.tree.target;
      this.nrows = nrows;
      for (let d = 0; d < this.rows.length; d++) {
        const row = this.rows[d];
        if (!row) continue;
        const y = this.yOf(d);
        for (const r of row) {
          const n = r.node;
          let color = this.opts.diff ? F.diffColor(n, rootB, rootT) : F.frameColor(n);
          if (searching && this.match.nodes.has(n)) color = 'rgb(220,40,220)';
          ctx.globalAlpha = r.dim ? 0.55 : 1;
          ctx.fillStyle = color;
          ctx.fillRect(r.x, y, Math.max(r.w - 0.5, 0.3), ROW_H - 1);
          let label = '', labelW = 0;
          if (r.w > 24) {
            const max = Math.floor((r.w - 6) / charW);
            const name = n.parent ? n.name : 'all';
            let text = name.length > max ? name.slice(0, Math.max(0, max - 1)) + '\u2026' : name;
            if (max >= 2) {
              /* the estimate assumes a monospaced font; where the browser
               * picked another (or measures differently), shorten until
               * the text as measured fits */
              let tw = ctx.measureText(text).width;
              while (tw > r.w - 6 && text.length > 2) {
                text = text.slice(0, -2) + '\u2026';
                tw = ctx.measureText(text).width;
              }
              if (tw <= r.w - 6) {
                ctx.fillStyle = '#111';
                ctx.fillText(text, r.x + 3, y + ROW_H / 2);
                label = text;
                labelW = tw;
              }
            }
          }
          this.drawn.push({ r: r, y: y, color: color, label: label, labelW: labelW });
        }
      }
      ctx.globalAlpha = 1;
      this.openAtRoot(cv.parentElement);
      if (this.sel) {
        const r = this.rectOf(this.sel);
        if (r) {
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 2;
          ctx.strokeRect(r.x + 1, this.yOf(this.sel.depth) + 1, Math.max(r.w - 2, 1), ROW_H - 3);
        }
      }
      /* which URL state this drawing shows (see frames() and docs/web.md) */
      cv.dataset.hash = location.hash;
    }

    /* A graph taller than its box (deep stacks: a 128-frame chain is
     * 2,000 px) scrolls inside the box; a new graph, zoom or layout opens
     * at the root's end, where the widest frames - the most samples - are,
     * not on the empty top of the deepest tower. Redraws of the same view
     * keep the reader's scroll. */
    openAtRoot(wrap) {
      const view = [this.tree, this.focus, this.icicle];
      const prev = this.openedView || [];
      if (view.every((v, i) => v === prev[i])) return;
      this.openedView = view;
      wrap.scrollTop = this.icicle ? 0 : wrap.scrollHeight;
    }

    /* What the last draw() put on the canvas, one object per rectangle
     * (CSS pixels from the canvas's top left): the page's test hook,
     * window.PerfhubPage.frames(). */
    frames() {
      return (this.drawn || []).map((d) => {
        const n = d.r.node;
        return {
          name: n.parent ? n.name : 'all', path: F.pathOf(n).join(';'), depth: n.depth,
          value: n.value, self: n.self, base: n.base, target: n.target, kind: F.frameKind(n),
          x: d.r.x, y: d.y, w: d.r.w, h: ROW_H - 1, color: d.color, label: d.label, labelW: d.labelW,
          dim: !!d.r.dim, match: this.match.nodes.has(n), selected: this.sel === n,
        };
      });
    }

    yOf(depth) {
      return this.icicle ? depth * ROW_H + 2 : (this.nrows - 1 - depth) * ROW_H + 2;
    }

    rectOf(n) {
      const row = this.rows[n.depth];
      return row ? row.find((r) => r.node === n) || null : null;
    }

    at(e) {
      const b = this.canvas.getBoundingClientRect();
      /* in layout units, should the canvas be shown at another width */
      const x = (e.clientX - b.left) * (b.width > 0 && this.width > 0 ? this.width / b.width : 1);
      const y = e.clientY - b.top - 2;
      const slot = Math.floor(y / ROW_H);
      const depth = this.icicle ? slot : this.nrows - 1 - slot;
      return depth >= 0 ? F.hit(this.rows[depth], x) : null;
    }

    hover(e) {
      const r = this.at(e);
      if (!r) { hideTip(); return; }
      showTip(this.describe(r.node), e.clientX, e.clientY, { el: this.canvas, again: (ev) => this.hover(ev) });
    }

    /* The tooltip: name, DSO, value, share of the whole and of the parent. */
    describe(n) {
      const total = this.tree.value || 1;
      const kind = F.frameKind(n);
      const lines = [el('div', { class: 'fn' }, n.parent ? n.name : 'all')];
      /* the DSO's file name on the kind line; its full path under it */
      const dso = F.frameDso(n);
      lines.push(el('div', { class: 'muted kind', title: dso ? dso.full : null }, kind + (dso ? ' \u00b7 ' + dso.base : '')));
      if (dso && dso.full !== dso.base) lines.push(el('div', { class: 'muted dso' }, dso.full));
      if (this.opts.diff) {
        const bp = this.tree.base ? (100 * n.base) / this.tree.base : 0;
        const tp = this.tree.target ? (100 * n.target) / this.tree.target : 0;
        lines.push(el('div', { class: 'value' }, 'base ' + F.fmtCount(n.base) + ' (' + F.fmtPct(bp) + '), target ' +
          F.fmtCount(n.target) + ' (' + F.fmtPct(tp) + ')'));
        lines.push(el('div', { class: 'share' }, 'change ' + (tp - bp >= 0 ? '+' : '') + (tp - bp).toFixed(2) + ' points'));
      } else {
        lines.push(el('div', { class: 'value' }, F.fmtCount(n.value) + ' ' + this.unit + ', self ' + F.fmtCount(n.self)));
        const parent = n.parent ? n.parent.value : n.value;
        lines.push(el('div', { class: 'share' }, F.fmtPct((100 * n.value) / total) + ' of all, ' +
          F.fmtPct(parent ? (100 * n.value) / parent : 100) + ' of parent'));
      }
      return lines;
    }

    /* Keys: arrows move the selection (up/down towards callers/callees as
     * drawn), Enter zooms to it, Escape resets the zoom. */
    key(e) {
      if (!this.tree) return;
      let s = this.sel || this.focus;
      const upIsChild = !this.icicle;
      const child = () => s.children.slice().sort((a, b) => b.value - a.value)[0];
      const sibling = (dir) => {
        const row = this.rows[s.depth] || [];
        const i = row.findIndex((r) => r.node === s);
        const j = i + dir;
        return j >= 0 && j < row.length ? row[j].node : null;
      };
      let next = null;
      switch (e.key) {
        case 'ArrowUp': next = upIsChild ? child() : s.parent; break;
        case 'ArrowDown': next = upIsChild ? s.parent : child(); break;
        case 'ArrowLeft': next = sibling(-1); break;
        case 'ArrowRight': next = sibling(1); break;
        case 'Enter': this.opts.onZoom(s.parent ? F.pathOf(s) : []); e.preventDefault(); return;
        case 'Escape': this.opts.onZoom([]); e.preventDefault(); return;
        default: return;
      }
      e.preventDefault();
      if (!next) return;
      this.sel = next;
      this.draw();
      const r = this.rectOf(next);
      if (r) {
        const b = this.canvas.getBoundingClientRect();
        showTip(this.describe(next), b.left + r.x + Math.min(r.w, 40), b.top + this.yOf(next.depth) + ROW_H);
      }
    }
  }

  /* pointer: {el, again(event)} for a tooltip the mouse asked for at
   * (x, y). A scroll moves the page under a pointer that stays, with no
   * mousemove: the tooltip then describes what is under it now (see
   * tipAfterScroll). The keyboard's tooltips go with the focus. */
  let tipAt = null;
  function showTip(children, x, y, pointer) {
    tipAt = pointer ? { el: pointer.el, again: pointer.again, x: x, y: y } : null;
    const t = $('#tooltip');
    t.textContent = '';
    for (const c of children) t.append(c);
    t.hidden = false;
    const w = t.offsetWidth, h = t.offsetHeight;
    t.style.left = Math.max(4, Math.min(x + 14, window.innerWidth - w - 8)) + 'px';
    t.style.top = (y + h + 24 > window.innerHeight ? y - h - 10 : y + 16) + 'px';
  }

  /* A search box's keys, the same in every browser: Escape clears the
   * search (a second Escape goes back to the graph), Enter searches at
   * once and goes back to the graph. */
  function searchKeys(box, canvas, cancel) {
    box.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' && e.key !== 'Enter') return;
      e.preventDefault();
      cancel();
      if (e.key === 'Escape' && box.value) {
        box.value = '';
        setParams({ q: '' }, true);
        return;
      }
      if (e.key === 'Enter') setParams({ q: box.value }, true);
      canvas.focus();
    });
  }

  function hideTip() { $('#tooltip').hidden = true; tipAt = null; }

  function tipAfterScroll() {
    const a = tipAt;
    if (!a || $('#tooltip').hidden) return;
    if (document.elementFromPoint && document.elementFromPoint(a.x, a.y) === a.el) a.again({ clientX: a.x, clientY: a.y });
    else hideTip();
  }

  /* ---- the list ------------------------------------------------------------ */

  let listTimer = null;
  function stopListPoll() { if (listTimer) { clearTimeout(listTimer); listTimer = null; } }

  const PAGE = 50;
  const listView = {
    cmp: { base: '', target: '' },

    show(params) {
      const f = $('#list-filter');
      for (const k of ['q', 'status', 'hostname', 'tag', 'since', 'until']) f.elements[k].value = params[k] || '';
      this.load(params);
    },

    async load(params) {
      stopListPoll();
      const offset = Math.max(0, parseInt(params.offset || '0', 10) || 0);
      let j;
      try {
        j = await api('profiles' + qs({ limit: PAGE, offset: offset, status: params.status,
          hostname: params.hostname, tag: params.tag, since: params.since, until: params.until }));
      } catch (e) {
        showMessage('Could not list profiles: ' + e.message);
        return;
      }
      if (current.view !== 'list') return;
      const all = firstArray(j, ['profiles']);
      const q = (params.q || '').toLowerCase();
      const rows = q ? all.filter((p) => [p.id, p.name, p.hostname, p.header && p.header.hostname]
        .concat(tagList(p.tags)).some((s) => s && String(s).toLowerCase().includes(q))) : all;
      this.render(rows);
      const total = typeof j.total === 'number' ? j.total : all.length;
      $('#page-info').textContent = total ? (offset + 1) + '\u2013' + (offset + all.length) + ' of ' + total : 'no profiles';
      $('#prev').disabled = offset === 0;
      $('#next').disabled = offset + all.length >= total;
      /* live status: refresh while anything is still being parsed */
      if (all.some((p) => p.status === 'queued' || p.status === 'parsing')) {
        listTimer = setTimeout(() => { if (current.view === 'list') this.load(current.params); }, POLL_MS);
      }
    },

    render(rows) {
      const tb = $('#profiles tbody');
      tb.textContent = '';
      for (const p of rows) {
        const host = (p.header && p.header.hostname) || p.hostname || '';
        const cmp = el('td', null,
          el('label', { title: 'use as base' }, el('input', { type: 'radio', name: 'cmp-base', value: p.id,
            checked: this.cmp.base === String(p.id), onchange: () => { this.cmp.base = String(p.id); this.cmpReady(); } }), 'B'),
          ' ',
          el('label', { title: 'use as target' }, el('input', { type: 'radio', name: 'cmp-target', value: p.id,
            checked: this.cmp.target === String(p.id), onchange: () => { this.cmp.target = String(p.id); this.cmpReady(); } }), 'T'));
        const tags = el('td');
        for (const t of tagList(p.tags)) tags.append(el('span', { class: 'tag' }, t));
        const status = el('td', { class: 'status-' + p.status, title: p.error || '' }, p.status,
          p.status === 'failed' && p.error ? el('div', { class: 'muted' }, p.error) : null);
        tb.append(el('tr', { 'data-id': p.id },
          el('td', null, el('a', { href: F.formatHash({ view: 'profile', id: p.id, params: {} }) }, p.name || p.id)),
          el('td', null, host),
          el('td', null, fmtTime(p.uploaded_at)),
          status,
          el('td', { class: 'num' }, profileSamples(p) === undefined ? '' : F.fmtCount(profileSamples(p))),
          el('td', { class: 'num' }, typeof p.size === 'number' ? F.fmtBytes(p.size) : ''),
          tags, cmp,
          el('td', null, el('button', { type: 'button', title: 'delete', 'aria-label': 'delete ' + (p.name || p.id),
            onclick: () => this.remove(p) }, '\u2715'))));
      }
      if (!rows.length) tb.append(el('tr', null, el('td', { colspan: 9, class: 'muted' }, 'No profiles. Upload a perf.data file above.')));
    },

    cmpReady() {
      if (this.cmp.base && this.cmp.target && this.cmp.base !== this.cmp.target) {
        go({ view: 'compare', params: { base: this.cmp.base, target: this.cmp.target } });
      }
    },

    async remove(p) {
      if (!confirm('Delete profile ' + (p.name || p.id) + '?')) return;
      try {
        await api('profiles/' + encodeURIComponent(p.id), { method: 'DELETE', headers: headers() });
        this.load(current.params);
      } catch (e) {
        showMessage('Could not delete: ' + e.message);
      }
    },
  };

  /* ---- upload ----------------------------------------------------------------- */

  /* Streams a file to POST /api/v1/profiles with a progress bar; the
   * server answers 202 (queued) or 200 (already stored). */
  function upload(file, type) {
    return new Promise((resolve, reject) => {
      const name = $('#upload-name').value.trim() || file.name;
      const tags = $('#upload-tags').value.split(/[,\s]+/).filter(Boolean);
      const xhr = new XMLHttpRequest();
      const bar = $('#upload-progress');
      const st = $('#upload-status');
      xhr.open('POST', API + 'profiles' + qs({ name: name, tag: tags }));
      xhr.setRequestHeader('Content-Type', type || 'application/octet-stream');
      const t = token();
      if (t) xhr.setRequestHeader('Authorization', 'Bearer ' + t);
      bar.hidden = false;
      bar.value = 0;
      st.textContent = 'uploading ' + file.name;
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) {
          bar.value = (100 * e.loaded) / e.total;
          st.textContent = file.name + ': ' + F.fmtBytes(e.loaded) + ' of ' + F.fmtBytes(e.total);
        }
      };
      xhr.onerror = () => { st.textContent = 'upload failed: network error'; reject(new Error('network error')); };
      xhr.onload = () => {
        let j = null;
        try { j = JSON.parse(xhr.responseText); } catch (e) { j = null; }
        if (xhr.status === 200 || xhr.status === 202) {
          bar.value = 100;
          st.textContent = file.name + (xhr.status === 200 ? ': already stored as ' : ': queued as ') + (j && j.id);
          resolve(j);
        } else {
          const msg = (j && j.error) || 'HTTP ' + xhr.status;
          st.textContent = file.name + ': ' + msg;
          reject(new Error(msg));
        }
      };
      xhr.send(file);
    });
  }

  /* A perf.data directory (perf record --threads, --kcore) goes up as one
   * tar: [{path, file}] with paths under the directory's own name. The
   * Blob only references the files; nothing is read into memory here. */
  function tarBlob(dirName, items) {
    const now = Math.floor(Date.now() / 1000);
    const dirs = new Set([dirName]);
    for (const it of items) {
      const parts = it.path.split('/');
      for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    }
    const entries = Array.from(dirs).sort().map((d) => ({ name: d, size: -1, mtime: now }));
    for (const it of items.slice().sort((a, b) => (a.path < b.path ? -1 : 1))) {
      entries.push({ name: it.path, size: it.file.size, mtime: Math.floor((it.file.lastModified || Date.now()) / 1000), data: it.file });
    }
    const blob = new Blob(F.tarParts(entries), { type: 'application/x-tar' });
    blob.name = dirName;
    return blob;
  }

  /* The files under a dropped directory entry, with their paths. */
  function readDir(entry) {
    const out = [];
    const walk = (e) => new Promise((resolve, reject) => {
      if (e.isFile) {
        e.file((f) => { out.push({ path: e.fullPath.replace(/^\//, ''), file: f }); resolve(); }, reject);
        return;
      }
      const r = e.createReader();
      const batch = () => r.readEntries((list) => {
        if (!list.length) { resolve(); return; }
        Promise.all(list.map(walk)).then(batch, reject);
      }, reject);
      batch();
    });
    return walk(entry).then(() => out);
  }

  /* uploads: [{blob, type}] one after the other */
  async function uploadFiles(files) {
    let last = null;
    for (const f of files) {
      const blob = f.blob || f;
      try { last = await upload(blob, f.type); } catch (e) { showMessage('Upload of ' + blob.name + ' failed: ' + e.message); return; }
    }
    if (files.length === 1 && last && last.id !== undefined) go({ view: 'profile', id: String(last.id), params: {} });
    else listView.load(current.params);
  }

  /* ---- one profile ------------------------------------------------------------- */

  const DATA_KEYS = ['event', 'comm', 'pid', 'tid', 'weight', 'from_ns', 'to_ns'];

  const profileView = {
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

    init() {
      this.fg = new FlameView($('#fg'), {
        crumbs: $('#crumbs'), matchEl: $('#fg-match'),
        onZoom: (path) => setParams({ zoom: path.join(';') }),
      });
      $('#fg-filter').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        setParams({ event: f.event.value, comm: f.comm.value.trim(), pid: f.pid.value, tid: f.tid.value,
          weight: f.weight.value, layout: f.layout.value, zoom: '' });
      });
      $('#fg-filter').elements.layout.addEventListener('change', (e) => setParams({ layout: e.target.value }, true));
      $('#fg-filter').elements.weight.addEventListener('change', (e) => setParams({ weight: e.target.value }));
      $('#fg-filter').elements.event.addEventListener('change', (e) => setParams({ event: e.target.value, zoom: '' }));
      let t = null;
      $('#fg-search').addEventListener('input', (e) => {
        clearTimeout(t);
        t = setTimeout(() => setParams({ q: e.target.value }, true), 200);
      });
      searchKeys($('#fg-search'), $('#fg'), () => clearTimeout(t));
      $('#fg-reset').addEventListener('click', () => setParams({ zoom: '', q: '' }));
      $('#tl-clear').addEventListener('click', () => setParams({ from_ns: '', to_ns: '', zoom: '' }));
      this.initHeat();
      this.initTop();
      if (typeof ResizeObserver !== 'undefined') {
        const wrap = $('#heat').parentElement;
        new ResizeObserver(() => { if (this.timeline && wrap.clientWidth !== this.heatAvail) this.drawHeat(); }).observe(wrap);
      }
    },

    show(id, params, prev) {
      const f = $('#fg-filter').elements;
      /* every field as the URL says, or a submit would bring back a
       * filter the URL dropped (back button, edited link) */
      f.event.value = params.event || '';
      f.comm.value = params.comm || '';
      f.pid.value = params.pid || '';
      f.tid.value = params.tid || '';
      f.weight.value = params.weight || DEFAULT_WEIGHT;
      f.layout.value = params.layout || 'flame';
      if (document.activeElement !== $('#fg-search')) $('#fg-search').value = params.q || '';
      const q = 'profiles/' + encodeURIComponent(id);
      $('#p-collapsed').href = API + q + '/collapsed' + qs(this.dataParams(params));
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
        for (const sel of ['#p-header', '#p-events tbody', '#p-records tbody', '#p-threads tbody', '#top tbody']) $(sel).textContent = '';
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

    dataParams(params) {
      const p = {};
      for (const k of DATA_KEYS) if (params[k]) p[k] = params[k];
      if (!p.weight) p.weight = DEFAULT_WEIGHT;
      return p;
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
      if (id !== this.id || current.view !== 'profile') return;
      /* a parse that replaced the one shown: its answers are new */
      const replaced = this.meta && this.meta.resymbolizing && !m.resymbolizing;
      this.meta = m;
      this.renderMeta(m);
      if (replaced) this.dataKey = null;
      /* a profile being parsed again (re-symbolized) is served from its
       * earlier parse meanwhile: shown, and followed until it is done */
      if (m.status === 'ready' || m.resymbolizing) {
        if (replaced || !this.dataKey) this.loadThreads();
        this.loadData(current.params);
      }
      if (m.status === 'queued' || m.status === 'parsing') this.pollTimer = setTimeout(() => this.loadMeta(), POLL_MS);
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
      if (current.params.event) sel.value = current.params.event;
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
            onclick: () => setParams({ pid: t.pid, tid: t.tid, zoom: '' }),
            onkeydown: (e) => { if (e.key === 'Enter') setParams({ pid: t.pid, tid: t.tid, zoom: '' }); } },
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
      const dp = this.dataParams(params);
      const key = JSON.stringify(dp);
      const id = this.id;
      const base = 'profiles/' + encodeURIComponent(id);
      if (key === this.loadingKey) return; /* the load in flight draws when done */
      if (key !== this.dataKey) {
        const seq = ++this.loadSeq;
        this.loadingKey = key;
        const tlKey = id + '|' + (dp.event || '') + '|' + dp.weight + '|' + this.bucketMs();
        /* kernel=1: kernel frames come marked "_[k]", which buildTree
         * turns into their kind (colour) */
        const jobs = [api(base + '/flamegraph' + qs(Object.assign({ kernel: 1 }, dp)))];
        jobs.push(tlKey !== this.tlKey ? api(base + '/timeline' + qs({ event: dp.event, weight: dp.weight, bucket_ms: this.bucketMs() })).catch((e) => e) : null);
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
          this.timeline = F.normalizeTimeline(res[1], this.bucketMs());
          this.timeline.unit = dp.weight;
        } else if (res[1] instanceof Error) {
          this.timeline = null;
          $('#tl-info').textContent = 'timeline: ' + res[1].message;
        }
        if (res[2] && !(res[2] instanceof Error)) this.top = firstArray(res[2], ['functions', 'top', 'rows']);
        else this.top = F.topFunctions(this.tree); /* filtered: computed from the filtered tree */
      }
      /* zoom, search and layout as the URL says now, not as it said when
       * the load began */
      if (current.view !== 'profile' || current.id !== id) return;
      const p = current.params;
      this.fg.icicle = p.layout === 'icicle';
      this.fg.setZoom(p.zoom ? p.zoom.split(';') : []);
      this.fg.setSearch(p.q || '');
      this.fg.draw();
      this.drawHeat();
      this.renderTop();
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
          showTip(this.heatTip(this.cursor), b.left + (col + 1) * this.cellW, b.top + (row + 1) * this.cellH);
        } else if (e.key === 'Enter' && this.cursor !== null) {
          e.preventDefault();
          const r = F.bucketRange(this.timeline, this.anchor === null ? this.cursor : this.anchor, this.cursor);
          this.anchor = null;
          hideTip();
          setParams({ from_ns: String(Math.round(r.fromNs)), to_ns: String(Math.round(r.toNs)), zoom: '' });
        } else if (e.key === 'Escape') {
          e.preventDefault();
          this.anchor = null;
          hideTip();
          if (current.params.from_ns || current.params.to_ns) setParams({ from_ns: '', to_ns: '', zoom: '' });
          else this.drawHeat();
        }
      });
      cv.addEventListener('blur', () => { this.anchor = null; hideTip(); this.drawHeat(); });
      const move = (e) => {
        const i = idx(e);
        if (i === null) { hideTip(); return; }
        if (start !== null) { this.dragEnd = i; this.drawHeat(); }
        showTip(this.heatTip(i), e.clientX, e.clientY, { el: cv, again: move });
      };
      cv.addEventListener('mousemove', move);
      cv.addEventListener('mouseleave', () => hideTip());
      window.addEventListener('mouseup', (e) => {
        if (start === null) return;
        const end = idx(e) !== null ? idx(e) : this.dragEnd;
        const a = start;
        start = null;
        this.dragEnd = null;
        if (end === null || end === undefined) return;
        const r = F.bucketRange(this.timeline, a, end);
        setParams({ from_ns: String(Math.round(r.fromNs)), to_ns: String(Math.round(r.toNs)), zoom: '' });
      });
      this.dragStart = () => start;
    },

    heatTip(i) {
      const tl = this.timeline;
      return [el('div', null, ((i * tl.bucketNs) / 1e9).toFixed(3) + ' s: ' + (tl.counts[i] || 0) + ' ' + (tl.unit || 'samples'))];
    },

    drawHeat() {
      const cv = $('#heat');
      const tl = this.timeline;
      const info = $('#tl-info');
      const p = current.params;
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
      let txt = g.cols + ' s \u00d7 ' + g.rows + ' rows of ' + Math.round(tl.bucketNs / 1e6) + ' ms; max ' + g.max + ' ' + (tl.unit || 'samples') + ' per bucket';
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
      for (const th of document.querySelectorAll('#top th')) {
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
      const q = current.params.q || '';
      for (const r of rows.slice(0, 300)) {
        const term = '/^' + escapeRe(r.name) + '$/';
        const pick = () => setParams({ q: q === term ? '' : term }, true);
        tb.append(el('tr', { tabindex: 0, class: q === term ? 'selected' : null, title: 'highlight in the flame graph',
          onclick: pick, onkeydown: (e) => { if (e.key === 'Enter') pick(); } },
        el('td', { class: 'fn' }, r.name), el('td', { class: 'num' }, F.fmtCount(r.self)),
        el('td', { class: 'num' }, F.fmtPct(r.selfPct)), el('td', { class: 'num' }, F.fmtCount(r.total)),
        el('td', { class: 'num' }, F.fmtPct(r.totalPct))));
      }
    },
  };

  /* ---- compare ---------------------------------------------------------------- */

  const compareView = {
    fg: null,
    key: null,
    tree: null,

    init() {
      this.fg = new FlameView($('#cmp-fg'), {
        diff: true, crumbs: $('#cmp-crumbs'), matchEl: $('#cmp-match'),
        onZoom: (path) => setParams({ zoom: path.join(';') }, true),
      });
      $('#cmp-form').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        setParams({ base: f.base.value, target: f.target.value, event: f.event.value.trim(), weight: f.weight.value, zoom: '' });
      });
      let t = null;
      $('#cmp-search').addEventListener('input', (e) => {
        clearTimeout(t);
        t = setTimeout(() => setParams({ q: e.target.value }, true), 200);
      });
      searchKeys($('#cmp-search'), $('#cmp-fg'), () => clearTimeout(t));
      $('#cmp-reset').addEventListener('click', () => setParams({ zoom: '', q: '' }, true));
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

    async show(params, prev) {
      const f = $('#cmp-form').elements;
      f.event.value = params.event || '';
      f.weight.value = params.weight || DEFAULT_WEIGHT;
      if (document.activeElement !== $('#cmp-search')) $('#cmp-search').value = params.q || '';
      if (!prev || prev.view !== 'compare') await this.fillChoices(params);
      if (!params.base || !params.target) {
        this.fg.setTree(null);
        this.fg.draw();
        $('#cmp-regressions tbody').textContent = '';
        return;
      }
      const dp = { base: params.base, target: params.target, event: params.event, weight: params.weight || DEFAULT_WEIGHT };
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
        tb.append(el('tr', { tabindex: 0, onclick: () => setParams({ q: term }, true),
          onkeydown: (e) => { if (e.key === 'Enter') setParams({ q: term }, true); } },
        el('td', { class: 'fn' }, r.name), el('td', { class: 'num' }, F.fmtPct(r.basePct)),
        el('td', { class: 'num' }, F.fmtPct(r.targetPct)),
        el('td', { class: 'num ' + (r.deltaPct > 0 ? 'status-failed' : 'status-ready') },
          (r.deltaPct >= 0 ? '+' : '') + r.deltaPct.toFixed(2) + ' pts')));
      }
    },
  };

  /* ---- health ----------------------------------------------------------------- */

  async function health() {
    const h = $('#health');
    try {
      const j = await api('healthz');
      h.className = 'health ' + (j && j.status === 'ok' ? 'ok' : 'bad');
      h.title = 'server: ' + (j && j.status);
    } catch (e) {
      h.className = 'health bad';
      h.title = 'server: ' + e.message;
    }
    setTimeout(health, 15000);
  }

  /* ---- start ---------------------------------------------------------------------- */

  /* The test hook (docs/web.md): what the canvases show, for browser
   * tests and for anyone checking the page from the console. Each canvas
   * carries data-hash, the URL state its last drawing shows. */
  window.PerfhubPage = {
    frames: (which) => (which === 'compare' ? compareView.fg : profileView.fg).frames(),
    heat: () => profileView.heatGeom || null,
  };

  function init() {
    const tok = $('#token');
    tok.value = token();
    tok.addEventListener('change', () => {
      try { localStorage.setItem('perfhub.token', tok.value.trim()); } catch (e) { /* private mode */ }
      /* a token given after a 401: the view asks again with it */
      if (tok.classList.contains('wanted')) {
        tok.classList.remove('wanted');
        route();
      }
    });
    $('#list-filter').addEventListener('submit', (e) => {
      e.preventDefault();
      const f = e.target.elements;
      go({ view: 'list', params: { q: f.q.value.trim(), status: f.status.value, hostname: f.hostname.value.trim(),
        tag: f.tag.value.trim(), since: f.since.value, until: f.until.value } });
    });
    $('#prev').addEventListener('click', () => setParams({ offset: Math.max(0, (+current.params.offset || 0) - PAGE) || '' }));
    $('#next').addEventListener('click', () => setParams({ offset: (+current.params.offset || 0) + PAGE }));
    const drop = $('#drop');
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', async (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const dt = e.dataTransfer;
      if (!dt) return;
      /* directories come as entries; files as files */
      const entries = Array.from(dt.items || []).map((it) => (it.webkitGetAsEntry ? it.webkitGetAsEntry() : null));
      if (entries.some((en) => en && en.isDirectory)) {
        const ups = [];
        try {
          for (const en of entries) {
            if (!en) continue;
            if (en.isDirectory) ups.push({ blob: tarBlob(en.name, await readDir(en)), type: 'application/x-tar' });
            else ups.push({ blob: await new Promise((res, rej) => en.file(res, rej)) });
          }
        } catch (err) {
          showMessage('Could not read the dropped directory: ' + err.message);
          return;
        }
        uploadFiles(ups);
      } else if (dt.files && dt.files.length) {
        uploadFiles(Array.from(dt.files));
      }
    });
    $('#dir').addEventListener('change', (e) => {
      const files = Array.from(e.target.files);
      e.target.value = '';
      if (!files.length) return;
      const items = files.map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
      const top = items[0].path.split('/')[0];
      uploadFiles([{ blob: tarBlob(top, items), type: 'application/x-tar' }]);
    });
    drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === drop) $('#file').click(); });
    $('#file').addEventListener('change', (e) => { if (e.target.files.length) uploadFiles(Array.from(e.target.files)); e.target.value = ''; });
    document.addEventListener('keydown', (e) => {
      if (e.key === '/' && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) {
        const s = current.view === 'compare' ? $('#cmp-search') : $('#fg-search');
        if (current.view !== 'list') { e.preventDefault(); s.focus(); }
      }
    });
    profileView.init();
    compareView.init();
    let rt = null;
    const redraw = () => {
      clearTimeout(rt);
      rt = setTimeout(() => {
        if (current.view === 'profile') { profileView.fg.draw(); profileView.drawHeat(); }
        if (current.view === 'compare') compareView.fg.draw();
      }, 100);
    };
    window.addEventListener('resize', redraw);
    window.addEventListener('scroll', tipAfterScroll, { passive: true });
    /* a new pixel ratio without a resize (the window moved to another
     * screen): the canvases' backing stores must follow it */
    const watchRatio = () => {
      if (!window.matchMedia) return;
      const mq = window.matchMedia('(resolution: ' + (window.devicePixelRatio || 1) + 'dppx)');
      const changed = () => { mq.removeEventListener('change', changed); redraw(); watchRatio(); };
      mq.addEventListener('change', changed);
    };
    watchRatio();
    /* hashchange covers back/forward and edited URLs; go() routes itself
     * after pushState, which fires no event. */
    window.addEventListener('hashchange', route);
    route();
    health();
  }

  init();
})();
