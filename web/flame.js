/* flame.js: the page's model, free of the DOM so that it can be tested
 * outside a browser: flame-graph trees from the API, layout, search,
 * frame kinds and colours, differential trees, heat-map geometry and the
 * URL state. The page (app.js) draws what these functions compute. */
(function (root) {
  'use strict';

  /* ---- trees ---------------------------------------------------------- */

  /* Turns the API's {name, value, children} (or, for /api/v1/diff,
   * {name, base, target, children}) into nodes with parent links, depth
   * and self values. Children are sorted by name, as flamegraph.pl does,
   * so that the same stack sits in the same place in every view. The walk
   * is iterative: deep stacks must not overflow the JS stack. */
  function buildTree(json, opts) {
    const diff = !!(opts && opts.diff);
    const kmarks = !!(opts && opts.kernelMarks);
    /* a tree of /sandwich: the function at the root, frames from the first
     * level on; 'callers' ends each path at its comm (a leaf) */
    const sandwich = (opts && opts.sandwich) || null;
    const num = (v) => (typeof v === 'number' && isFinite(v) && v > 0 ? v : 0);
    const make = (j, parent) => {
      const n = {
        name: typeof j.name === 'string' ? j.name : String(j.name),
        value: 0, base: 0, target: 0, self: 0,
        dso: typeof j.dso === 'string' ? j.dso : null,
        kind: typeof j.kind === 'string' ? j.kind : null,
        children: [], parent: parent, depth: parent ? parent.depth + 1 : 0,
      };
      /* kernelMarks: the tree was asked for with kernel=1, so kernel
       * frames end in "_[k]" (as `perfhub collapse --kernel` prints
       * them); the mark becomes the kind and the name stays the plain
       * one, the same as in /top, /collapsed and the URL. */
      if (kmarks && n.depth >= 2 && !n.kind && n.name.length > 4 && n.name.endsWith('_[k]')) {
        n.name = n.name.slice(0, -4);
        n.kind = 'kernel';
      }
      if (diff) {
        n.base = num(j.base);
        n.target = num(j.target);
        n.value = n.target;
      } else {
        n.value = num(j.value);
      }
      return n;
    };
    const top = make(json || { name: 'all' }, null);
    let maxDepth = 0;
    /* pre-order: every parent comes before its children, so walking
     * `order` backwards visits children first */
    const order = [top];
    const src = [json || {}];
    for (let i = 0; i < order.length; i++) {
      const n = order[i];
      const kids = Array.isArray(src[i].children) ? src[i].children : [];
      for (const kj of kids) {
        if (!kj || typeof kj !== 'object') continue;
        const k = make(kj, n);
        n.children.push(k);
        if (k.depth > maxDepth) maxDepth = k.depth;
        order.push(k);
        src.push(kj);
      }
    }
    const count = order.length;
    /* Values bottom-up: a node is at least the sum of its children (the
     * API promises this; the page must not draw children wider than their
     * parent if a server rounds). */
    const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (let i = order.length - 1; i >= 0; i--) {
      const n = order[i];
      if (n.children.length > 1) n.children.sort(byName);
      let sv = 0, sb = 0, st2 = 0;
      for (const k of n.children) { sv += k.value; sb += k.base; st2 += k.target; }
      if (n.value < sv) n.value = sv;
      if (diff) {
        if (n.base < sb) n.base = sb;
        if (n.target < st2) n.target = st2;
        n.value = n.target;
      }
      n.self = n.value - sv;
      n.selfBase = n.base - sb;
    }
    if (sandwich) {
      for (const n of order) {
        if (!n.parent || n.kind) continue;
        n.kind = sandwich === 'callers' && !n.children.length && !n.dso ? 'comm' : nameKind(n);
      }
      top.rootLabel = top.name;
    }
    top.count = count;
    top.maxDepth = maxDepth;
    return top;
  }

  /* The text a frame is drawn and described with: its name; the root of
   * a flame graph is "all", a sandwich's root its function. */
  function nodeLabel(n) {
    return n.parent ? n.name : n.rootLabel || 'all';
  }

  /* The frames from the root's child to n, outermost first. */
  function pathOf(n) {
    const p = [];
    for (let c = n; c && c.parent; c = c.parent) p.push(c.name);
    return p.reverse();
  }

  /* The node a path names, or the deepest one that exists. */
  function findPath(top, path) {
    let n = top;
    for (const name of path || []) {
      const next = n.children.find((k) => k.name === name);
      if (!next) break;
      n = next;
    }
    return n;
  }

  /* Folded lines ("a;b;c count") for the leaf paths of a tree: the inverse
   * of the API's construction, used by tests to compare with /collapsed. */
  function toFolded(top) {
    const out = [];
    const walk = (n, prefix) => {
      const p = n.parent ? (prefix ? prefix + ';' + n.name : n.name) : '';
      if (n.self > 0 && n.parent) out.push(p + ' ' + n.self);
      for (const k of n.children) walk(k, p);
    };
    walk(top, '');
    return out;
  }

  /* ---- layout ----------------------------------------------------------- */

  /* Rectangles for a canvas of `width` px with `focus` zoomed to the full
   * width: the focus's ancestors span the width too (drawn dimmed), the
   * focus's descendants are scaled by value. Frames narrower than minPx
   * are not laid out (nor their children), which keeps 100,000-frame
   * graphs cheap. Returns rows[depth] = [{node, x, w}] sorted by x. */
  function layout(top, focus, width, minPx) {
    const rows = [];
    const min = minPx === undefined ? 0.3 : minPx;
    const put = (n, x, w, dim) => {
      (rows[n.depth] || (rows[n.depth] = [])).push({ node: n, x: x, w: w, dim: dim });
    };
    focus = focus || top;
    for (let a = focus.parent; a; a = a.parent) put(a, 0, width, true);
    if (focus.value <= 0) { put(focus, 0, width, false); return rows; }
    /* Offsets are kept in value units and scaled once, so that a frame
     * that is all of its parent is exactly as wide as it. */
    const fv = focus.value;
    const px = (v) => (v / fv) * width;
    const stack = [[focus, 0]];
    while (stack.length) {
      const [n, xv] = stack.pop();
      put(n, px(xv), px(n.value), false);
      let cv = xv;
      for (const k of n.children) {
        if (px(k.value) >= min) stack.push([k, cv]);
        cv += k.value;
      }
    }
    for (const r of rows) if (r) r.sort((p, q) => p.x - q.x);
    return rows;
  }

  /* The rectangle under x in a row (binary search), or null. */
  function hit(row, x) {
    if (!row) return null;
    let lo = 0, hi = row.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = row[mid];
      if (x < r.x) hi = mid - 1;
      else if (x >= r.x + r.w) lo = mid + 1;
      else return r;
    }
    return null;
  }

  /* ---- search ------------------------------------------------------------ */

  /* A matcher for the search box: /re/flags as a regular expression, else
   * a case-insensitive substring. Returns null for an empty or bad term. */
  function matcher(term) {
    if (!term) return null;
    const m = /^\/(.*)\/([a-z]*)$/.exec(term);
    if (m) {
      try { const re = new RegExp(m[1], m[2]); return (s) => re.test(s); } catch (e) { return null; }
    }
    const t = term.toLowerCase();
    return (s) => s.toLowerCase().indexOf(t) >= 0;
  }

  /* Marks matching frames under `within` (default: the whole tree) and
   * returns {nodes: Set, value, pct}: value counts each sample once even
   * when a match sits inside another match (as flamegraph.pl's "Matched"
   * does), pct is its share of `within`. A term "dso:T" matches the
   * frames whose DSO path matches T instead of their names. */
  function search(top, term, within) {
    const byDso = typeof term === 'string' && term.startsWith('dso:');
    const m = matcher(byDso ? term.slice(4) : term);
    const test = m && (byDso ? (n) => n.depth >= 2 && !!n.dso && m(n.dso) : (n) => m(n.name));
    const nodes = new Set();
    const base = within || top;
    if (!test) return { nodes: nodes, value: 0, pct: 0 };
    let value = 0;
    const stack = [[base, false]];
    while (stack.length) {
      const [n, inMatch] = stack.pop();
      const hitHere = n.parent !== null && test(n);
      if (hitHere) {
        nodes.add(n);
        if (!inMatch) value += n.value;
      }
      for (const k of n.children) stack.push([k, inMatch || hitHere]);
    }
    return { nodes: nodes, value: value, pct: base.value > 0 ? (100 * value) / base.value : 0 };
  }

  /* ---- kinds and colours ---------------------------------------------- */

  /* kernel, jit, unresolved, comm (the first level), root or user. The
   * folded-stack conventions say it: "_[k]" kernel, "_[j]" JIT, a frame
   * in brackets ("[unknown]", "[libfoo.so]") has no symbol. */
  function frameKind(n) {
    if (!n.parent) return 'root';
    if (n.kind) return n.kind;
    if (n.depth === 1) return 'comm';
    return nameKind(n);
  }

  /* A frame's kind by its name and DSO alone, wherever it sits. */
  function nameKind(n) {
    const s = n.name;
    if (/_\[k\]$/.test(s)) return 'kernel';
    if (/_\[j\]$/.test(s) || /^\[?jit/i.test(s) || /perf-\d+\.map/.test(s)) return 'jit';
    if (/^\[.*\]$/.test(s) || s === '') return 'unresolved';
    if (n.dso && (n.dso === '[kernel.kallsyms]' || /^\[kernel/.test(n.dso) || /\.ko(\.[a-z]+)?$/.test(n.dso))) return 'kernel';
    return 'user';
  }

  /* A frame's DSO for the tooltip: {base, full} (the file name and the
   * path the API gave), or null. Without the API's "dso", an unresolved
   * frame's bracketed name ("[libfoo.so]") is the best there is. */
  function frameDso(n) {
    let full = n.dso;
    if (!full && n.depth >= 2 && frameKind(n) === 'unresolved' && n.name.length > 2) full = n.name.replace(/^\[|\]$/g, '');
    if (!full) return null;
    const cut = full.lastIndexOf('/');
    return { base: cut >= 0 && cut < full.length - 1 ? full.slice(cut + 1) : full, full: full };
  }

  function hash(s) {
    /* FNV-1a: stable colours per name across reloads. */
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0) / 4294967296;
  }

  const palette = {
    /* kernel aqua, well apart from the red-yellow of user code */
    root: [0, 0, 80], comm: [210, 30, 72], kernel: [188, 55, 60],
    jit: [120, 45, 55], unresolved: [0, 0, 68], user: [8, 70, 60],
  };

  /* An hsl() colour: the kind picks the hue family, the name a stable
   * variation inside it. */
  function frameColor(n) {
    const kind = frameKind(n);
    const p = palette[kind] || palette.user;
    const v = hash(n.name);
    if (kind === 'user') {
      /* the classic flame-graph warm range: red to yellow */
      return 'hsl(' + Math.round(v * 50) + ',' + Math.round(70 + v * 20) + '%,' + Math.round(55 + v * 10) + '%)';
    }
    return 'hsl(' + Math.round(p[0] + (v - 0.5) * 16) + ',' + p[1] + '%,' + Math.round(p[2] + (v - 0.5) * 10) + '%)';
  }

  /* Differential colour: red where the target grew relative to the base,
   * blue where it shrank, white where equal; both sides normalised to
   * their totals so that a longer recording does not paint everything red. */
  function diffColor(n, baseTotal, targetTotal) {
    const b = baseTotal > 0 ? n.base / baseTotal : 0;
    const t = targetTotal > 0 ? n.target / targetTotal : 0;
    const d = t - b;
    const m = Math.max(b, t);
    if (m <= 0) return 'hsl(0,0%,92%)';
    const r = Math.max(-1, Math.min(1, d / m));
    const l = Math.round(95 - Math.abs(r) * 40);
    return r >= 0 ? 'hsl(0,80%,' + l + '%)' : 'hsl(220,80%,' + l + '%)';
  }

  /* Self and total per function name over a tree: the page's own top
   * table when the server's /top is not reachable, and a cross-check of
   * it. "total" counts a sample once per stack even under recursion. */
  function topFunctions(top) {
    const acc = new Map();
    const walk = (n, seen) => {
      let added = false;
      if (n.depth >= 2) {
        const e = acc.get(n.name) || { name: n.name, self: 0, total: 0 };
        e.self += n.self;
        if (!seen.has(n.name)) { e.total += n.value; seen.add(n.name); added = true; }
        acc.set(n.name, e);
      }
      for (const k of n.children) walk(k, seen);
      if (added) seen.delete(n.name);
    };
    walk(top, new Set());
    return Array.from(acc.values()).sort((a, b) => b.self - a.self || b.total - a.total);
  }

  /* ---- timeline / heat map ---------------------------------------------- */

  const firstNum = (o, keys) => {
    for (const k of keys) if (typeof o[k] === 'number' && isFinite(o[k])) return o[k];
    return undefined;
  };

  /* Reads the /timeline answer into {bucketNs, startNs, counts[]}. It
   * accepts the bucket list as numbers or as objects with a start time
   * and a count, under the names a server is likely to use. */
  function normalizeTimeline(json, bucketMs, weight) {
    const j = json || {};
    /* off-CPU weights: the nanoseconds switched out in each bucket, plus
     * the on-CPU period for wall */
    const measure = weight === 'offcpu' ? (b) => firstNum(b, ['offcpu']) || 0
      : weight === 'wall' ? (b) => (firstNum(b, ['period']) || 0) + (firstNum(b, ['offcpu']) || 0) : null;
    const bms = firstNum(j, ['bucket_ms']) || bucketMs || 10;
    const bucketNs = (firstNum(j, ['bucket_ns']) || bms * 1e6);
    let list = null;
    for (const k of ['buckets', 'timeline', 'samples', 'counts', 'rows']) {
      if (Array.isArray(j[k])) { list = j[k]; break; }
    }
    if (!list && Array.isArray(json)) list = json;
    list = list || [];
    let startNs = firstNum(j, ['start_ns', 'first_ns', 'from_ns', 'begin_ns']);
    const counts = [];
    if (list.length && typeof list[0] === 'object') {
      const tk = ['start_ns', 't_ns', 'time_ns', 'ns', 'from_ns', 'ts'];
      const ck = ['value', 'samples', 'count', 'n']; /* value: by the asked weight */
      let t0 = startNs;
      for (const b of list) {
        const t = firstNum(b, tk);
        if (t !== undefined && (t0 === undefined || t < t0)) t0 = t;
      }
      startNs = t0 || 0;
      for (let i = 0; i < list.length; i++) {
        const b = list[i] || {};
        const t = firstNum(b, tk);
        const idx = t === undefined ? i : Math.round((t - startNs) / bucketNs);
        if (idx < 0 || idx > 10000000) continue;
        counts[idx] = (counts[idx] || 0) + (measure ? measure(b) : firstNum(b, ck) || 0);
      }
      for (let i = 0; i < counts.length; i++) counts[i] = counts[i] || 0;
    } else {
      for (const c of list) counts.push(typeof c === 'number' && c > 0 ? c : 0);
      startNs = startNs || 0;
    }
    return { bucketNs: bucketNs, startNs: startNs, counts: counts };
  }

  /* FlameScope's grid: a column per second, `rows` buckets per column
   * (row 0 at the top is the start of the second). */
  function heatGrid(tl) {
    const perCol = Math.max(1, Math.round(1e9 / tl.bucketNs));
    const cols = Math.max(1, Math.ceil(tl.counts.length / perCol));
    let max = 0;
    for (const c of tl.counts) if (c > max) max = c;
    return { cols: cols, rows: perCol, max: max };
  }

  /* The time range [fromNs, toNs) covered by the bucket indices a..b in
   * either order (a drag from one cell to another). */
  function bucketRange(tl, a, b) {
    const lo = Math.min(a, b), hi = Math.max(a, b);
    return { fromNs: tl.startNs + lo * tl.bucketNs, toNs: tl.startNs + (hi + 1) * tl.bucketNs };
  }

  /* ---- trend chart ----------------------------------------------------------- */

  /* A "nice" axis for values 0..max: the top tick and the step, as 1, 2
   * or 5 times a power of ten, about `want` steps. */
  function niceAxis(max, want) {
    if (!(max > 0)) return { top: 1, step: 0.25 };
    const raw = max / (want || 4);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    return { top: Math.ceil(max / step - 1e-9) * step, step: step };
  }

  /* Geometry of the trend chart: series [{label, points: [{id,
   * uploaded_at, value, ...}]}] (each oldest first, as /api/v1/series
   * gives them) on a plot of width x height px inside the margins. Runs
   * are evenly spaced in upload order (many share one second), all series
   * on one axis; y from 0 to a nice top. Returns {runs, ticks, plot,
   * series: [{label, points: [{...point, x, y}]}]}. */
  function trendLayout(series, width, height) {
    const plot = { left: 64, right: width - 16, top: 12, bottom: height - 30 };
    const byId = new Map();
    for (const s of series) for (const p of s.points || []) byId.set(String(p.id), p);
    const runs = Array.from(byId.values()).sort((a, b) => (a.uploaded_at < b.uploaded_at ? -1 : a.uploaded_at > b.uploaded_at ? 1 : (+a.id) - (+b.id)));
    const index = new Map(runs.map((p, i) => [String(p.id), i]));
    let max = 0;
    for (const s of series) for (const p of s.points || []) if (p.value > max) max = p.value;
    const axis = niceAxis(max, 4);
    const w = plot.right - plot.left, h = plot.bottom - plot.top;
    const xOf = (i) => plot.left + (runs.length > 1 ? (i * w) / (runs.length - 1) : w / 2);
    const yOf = (v) => plot.bottom - ((typeof v === 'number' && isFinite(v) ? v : 0) / axis.top) * h;
    const ticks = [];
    for (let i = 0; i * axis.step <= axis.top + axis.step / 2; i++) ticks.push({ value: i * axis.step, y: yOf(i * axis.step) });
    return {
      runs: runs.map((p, i) => ({ id: String(p.id), name: p.name, uploaded_at: p.uploaded_at, x: xOf(i) })),
      ticks: ticks, plot: plot,
      series: series.map((s) => ({
        label: s.label, points: (s.points || []).map((p) => Object.assign({}, p, { x: xOf(index.get(String(p.id))), y: yOf(p.value) })),
      })),
    };
  }

  /* ---- URL state ------------------------------------------------------------ */

  /* "#/profile/ID?k=v&..." <-> {view, id, params}. The zoom path is kept
   * as frames joined by ';' (the folded separator, never inside a frame). */
  function parseHash(hash) {
    const h = (hash || '').replace(/^#/, '');
    const q = h.indexOf('?');
    const path = (q >= 0 ? h.slice(0, q) : h).split('/').filter(Boolean).map(decodeURIComponent);
    const params = {};
    if (q >= 0) {
      for (const kv of h.slice(q + 1).split('&')) {
        if (!kv) continue;
        const e = kv.indexOf('=');
        const k = decodeURIComponent(e >= 0 ? kv.slice(0, e) : kv);
        params[k] = e >= 0 ? decodeURIComponent(kv.slice(e + 1).replace(/\+/g, ' ')) : '';
      }
    }
    if (ID_VIEWS.includes(path[0]) && path[1]) return { view: path[0], id: path[1], params: params };
    if (path[0] === 'compare' || path[0] === 'trend') return { view: path[0], id: null, params: params };
    return { view: 'list', id: null, params: params };
  }

  /* the views of one profile: #/VIEW/ID?... */
  const ID_VIEWS = ['profile', 'sandwich', 'annotate'];

  function formatHash(state) {
    const keys = Object.keys(state.params || {}).filter((k) => {
      const v = state.params[k];
      return v !== undefined && v !== null && v !== '';
    }).sort();
    const qs = keys.map((k) => encodeURIComponent(k) + '=' + encodeURIComponent(state.params[k])).join('&');
    let p = '#/';
    if (ID_VIEWS.includes(state.view)) p = '#/' + state.view + '/' + encodeURIComponent(state.id);
    else if (state.view === 'compare' || state.view === 'trend') p = '#/' + state.view;
    return qs ? p + '?' + qs : p;
  }

  /* ---- tar, for uploading a perf.data directory --------------------------- */

  /* One ustar header block for a regular file (or a directory when
   * size < 0). Names longer than 100 bytes go to the prefix field;
   * null when a name does not fit ustar at all. */
  function tarHeader(name, size, mtime) {
    const enc = (str) => Array.from(new TextEncoder().encode(str));
    const h = new Uint8Array(512);
    const put = (off, bytes) => { for (let i = 0; i < bytes.length; i++) h[off + i] = bytes[i]; };
    const oct = (v, len) => enc(Math.floor(v).toString(8).padStart(len - 1, '0'));
    const dir = size < 0;
    let bytes = enc(dir && !name.endsWith('/') ? name + '/' : name);
    let prefix = [];
    if (bytes.length > 100) {
      /* split at a '/' so that name <= 100 and prefix <= 155 */
      const cut = bytes.lastIndexOf(47, Math.min(155, bytes.length - 2));
      if (cut <= 0 || bytes.length - cut - 1 > 100) return null;
      prefix = bytes.slice(0, cut);
      bytes = bytes.slice(cut + 1);
    }
    if (size > 0o77777777777) return null;
    put(0, bytes);
    put(100, oct(dir ? 0o755 : 0o644, 8));
    put(108, oct(0, 8));
    put(116, oct(0, 8));
    put(124, oct(dir ? 0 : size, 12));
    put(136, oct(mtime || 0, 12));
    put(148, enc('        '));
    h[156] = dir ? 53 : 48; /* '5' directory, '0' file */
    put(257, enc('ustar'));
    put(263, enc('00'));
    put(345, prefix);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += h[i];
    put(148, oct(sum, 7));
    h[155] = 32;
    return h;
  }

  /* The pieces of a tar stream for entries [{name, size, mtime, data}]
   * (data: anything a Blob takes; a File stays on disk until sent):
   * header, data and padding for each, then two zero blocks. */
  function tarParts(entries) {
    const parts = [];
    for (const e of entries) {
      const h = tarHeader(e.name, e.size, e.mtime);
      if (!h) throw new Error('name too long for tar: ' + e.name);
      parts.push(h);
      if (e.size > 0) {
        parts.push(e.data);
        const pad = (512 - (e.size % 512)) % 512;
        if (pad) parts.push(new Uint8Array(pad));
      }
    }
    parts.push(new Uint8Array(1024));
    return parts;
  }

  /* ---- numbers ----------------------------------------------------------- */

  function fmtCount(v) {
    if (!isFinite(v)) return '-';
    if (Math.abs(v) >= 1e9) return (v / 1e9).toFixed(2) + ' G';
    if (Math.abs(v) >= 1e6) return (v / 1e6).toFixed(2) + ' M';
    if (Math.abs(v) >= 1e4) return (v / 1e3).toFixed(1) + ' k';
    return String(Math.round(v));
  }

  /* A duration in nanoseconds: "1.25 s", "324.7 ms", "12.0 µs", "80 ns". */
  function fmtNs(v) {
    if (!isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + ' s';
    if (a >= 1e6) return (v / 1e6).toFixed(1) + ' ms';
    if (a >= 1e3) return (v / 1e3).toFixed(1) + ' \u00b5s';
    return Math.round(v) + ' ns';
  }

  /* A value of a weight: counts (samples, period) as fmtCount, with the
   * weight's name when `named`; off-CPU and wall time as durations. */
  function fmtWeight(v, weight, named) {
    if (weight === 'offcpu' || weight === 'wall') return fmtNs(v) + (named ? (weight === 'offcpu' ? ' off-CPU' : ' on+off-CPU') : '');
    return fmtCount(v) + (named ? ' ' + (weight || 'samples') : '');
  }

  function fmtPct(v) {
    if (!isFinite(v)) return '-';
    return (v >= 10 ? v.toFixed(1) : v.toFixed(2)) + '%';
  }

  function fmtBytes(v) {
    if (!isFinite(v)) return '-';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + ' ' + u[i];
  }

  const api = {
    buildTree, nodeLabel, pathOf, findPath, toFolded, layout, hit, matcher, search,
    frameKind, frameDso, frameColor, diffColor, topFunctions, trendLayout,
    normalizeTimeline, heatGrid, bucketRange, parseHash, formatHash,
    tarHeader, tarParts, fmtCount, fmtNs, fmtWeight, fmtPct, fmtBytes,
  };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  else root.PerfhubFlame = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
