/* widgets.js: what more than one view draws - the flame graph on a
 * canvas (FlameView), the tooltip, a search box's keys. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el } = U;
  const ROW_H = 17;

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
      this.unit = U.DEFAULT_WEIGHT;
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
          if (!this.tree) return;
          if (canvas.parentElement.clientWidth !== this.width) this.draw();
          else this.openAtRoot(canvas.parentElement); /* shown at the width it was drawn at */
        }).observe(canvas.parentElement);
      }
    }

    setTree(tree, unit) {
      this.tree = tree;
      this.unit = unit || U.DEFAULT_WEIGHT;
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
      if (!c) return;
      c.textContent = '';
      const chain = [];
      for (let n = this.focus; n; n = n.parent) chain.unshift(n);
      chain.forEach((n, i) => {
        if (i) c.append(el('span', { class: 'sep' }, '\u203a'));
        const label = F.nodeLabel(n);
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
            const name = F.nodeLabel(n);
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
     * 2,000 px; style.css caps .fg-wrap) scrolls inside the box; a new
     * graph, zoom or layout opens at the root's end, where the widest
     * frames - the most samples - are, not on the empty top of the
     * deepest tower. Redraws of the same view keep the reader's scroll.
     * A box not laid out (its view hidden while the graph came) cannot
     * scroll: the draw once it is shown (the resize observer's) opens it. */
    openAtRoot(wrap) {
      const view = [this.tree, this.focus, this.icicle];
      const prev = this.openedView || [];
      if (view.every((v, i) => v === prev[i]) || !wrap.clientHeight) return;
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
          name: F.nodeLabel(n), path: F.pathOf(n).join(';'), depth: n.depth,
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
      const lines = [el('div', { class: 'fn' }, F.nodeLabel(n))];
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
        lines.push(el('div', { class: 'value' }, F.fmtWeight(n.value, this.unit, true) + ', self ' + F.fmtWeight(n.self, this.unit)));
        const parent = n.parent ? n.parent.value : n.value;
        lines.push(el('div', { class: 'share' }, F.fmtPct((100 * n.value) / total) + ' of ' + (this.tree.rootLabel || 'all') + ', ' +
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
        U.setParams({ q: '' }, true);
        return;
      }
      if (e.key === 'Enter') U.setParams({ q: box.value }, true);
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

  U.FlameView = FlameView;
  U.ROW_H = ROW_H;
  U.showTip = showTip;
  U.hideTip = hideTip;
  U.tipAfterScroll = tipAfterScroll;
  U.searchKeys = searchKeys;
})();
