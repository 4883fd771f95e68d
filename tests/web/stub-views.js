/* The stand-in perfhubd's answers to questions about many profiles and the
 * deeper views of one (tests/web/stub-server.js serves them): selectors
 * (/profiles?q=, /series, /diff?base_q=&target_q=, /query/flamegraph and
 * /query/top), callers and callees (/sandwich) and annotation
 * (/annotate). Computed from the stub's fixed samples, with perfhubd's
 * shapes (docs/query.md, docs/views.md); the page tests compare what the
 * page shows with these answers. */
'use strict';

/* A selector {label op "value", ...} (op = != =~ !~) as
 * [{label, op, value}], or throws {position, msg}. */
function parseSelector(text) {
  let i = 0;
  const fail = (msg) => { throw { position: i + 1, msg: msg }; };
  const ws = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  const out = [];
  ws();
  if (text[i] !== '{') fail("expected '{'");
  i++;
  ws();
  while (text[i] !== '}') {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (!m) fail('expected a label name');
    i += m[0].length;
    ws();
    const op = ['!=', '=~', '!~', '='].find((o) => text.startsWith(o, i));
    if (!op) fail('expected =, !=, =~ or !~');
    i += op.length;
    ws();
    if (text[i] !== '"') fail('expected a quoted value');
    const end = text.indexOf('"', i + 1);
    if (end < 0) fail('the quoted value is not closed');
    out.push({ label: m[0], op: op, value: text.slice(i + 1, end) });
    i = end + 1;
    ws();
    if (text[i] === ',') { i++; ws(); } else if (text[i] !== '}') fail("expected ',' or '}'");
  }
  return out;
}

function labelsOf(p) { return Object.assign({}, p.tags, { name: p.name, hostname: 'farm-' + p.id, id: p.id }); }

function matches(p, sel) {
  const l = labelsOf(p);
  return sel.every((m) => {
    const v = l[m.label] === undefined ? '' : String(l[m.label]);
    if (m.op === '=') return v === m.value;
    if (m.op === '!=') return v !== m.value;
    const hit = new RegExp('^(?:' + m.value + ')$').test(v);
    return m.op === '=~' ? hit : !hit;
  });
}

/* The profiles a selector parameter picks, oldest first; null after
 * answering a bad selector with perfhubd's 400. */
function pick(profiles, q, param, res, json) {
  const text = q.get(param);
  if (text === null) return profiles.slice().sort((a, b) => a.id - b.id);
  let sel;
  try {
    sel = parseSelector(text);
  } catch (e) {
    json(res, 400, { error: "bad selector in '" + param + "' at position " + e.position + ': ' + e.msg, parameter: param, position: e.position });
    return null;
  }
  return profiles.filter((p) => matches(p, sel)).sort((a, b) => a.id - b.id);
}

/* A side of a comparison: a profile id or a selector's profiles. */
function side(state, q, name, res, json) {
  if (q.get(name)) return state.profiles.filter((p) => p.id === q.get(name));
  return pick(state.profiles.filter((p) => p.status === 'ready'), q, name + '_q', res, json);
}

/* Per function: self and total weight, its DSO; and the whole. */
function functionSums(samples, h, q) {
  const acc = new Map();
  let all = 0;
  for (const s of samples) {
    const w = h.weightOf(s, q);
    all += w;
    const seen = new Set();
    s.stack.forEach((raw, i) => {
      const f = h.frameName(raw, q);
      const e = acc.get(f) || { function: f, dso: h.DSOS[raw] || null, self: 0, total: 0 };
      if (i === s.stack.length - 1) e.self += w;
      if (!seen.has(f)) { e.total += w; seen.add(f); }
      acc.set(f, e);
    });
  }
  return { acc, all };
}

/* /diff's ranked rows: shares of each side's total, worst first. */
function ranked(baseS, targetS, h, q) {
  const b = functionSums(baseS, h, q), t = functionSums(targetS, h, q);
  const share = (v, all) => (all ? (100 * v) / all : 0);
  const rows = [];
  for (const f of new Set([...b.acc.keys(), ...t.acc.keys()])) {
    const x = b.acc.get(f) || { self: 0, total: 0 }, y = t.acc.get(f) || { self: 0, total: 0 };
    const r = {
      function: f, dso: (y.dso || x.dso) || null,
      base_self_share: share(x.self, b.all), target_self_share: share(y.self, t.all),
      base_total_share: share(x.total, b.all), target_total_share: share(y.total, t.all),
    };
    r.delta_self = r.target_self_share - r.base_self_share;
    r.delta_total = r.target_total_share - r.base_total_share;
    r.significant = Math.max(Math.abs(r.delta_self), Math.abs(r.delta_total)) >= 1;
    r.p_value = r.significant ? 0.001 : 0.5;
    rows.push(r);
  }
  const up = (r) => Math.max(r.delta_self, r.delta_total), down = (r) => Math.min(r.delta_self, r.delta_total);
  return {
    regressions: rows.filter((r) => up(r) > 0).sort((x, y) => up(y) - up(x) || (x.function < y.function ? -1 : 1)),
    improvements: rows.filter((r) => down(r) < 0).sort((x, y) => down(x) - down(y) || (x.function < y.function ? -1 : 1)),
    baseAll: b.all, targetAll: t.all,
  };
}

/* /series: a point per profile, oldest first; grouped by a label. */
function series(state, q, h, res, json) {
  const list = pick(state.profiles.filter((p) => p.status === 'ready'), q, 'q', res, json);
  if (!list) return;
  const kind = ['function', 'dso', 'comm'].find((k) => q.get(k));
  const name = kind ? q.get(kind) : null;
  const metric = q.get('metric') || (kind ? 'self_share' : 'samples');
  const value = (p) => {
    const ss = p.samples.filter((s) => !s.off);
    let self = 0, total = 0, period = 0;
    for (const s of ss) {
      const frames = s.stack.map((raw) => ({ name: h.frameName(raw, null), dso: h.DSOS[raw] || '' }));
      const on = (f) => (kind === 'function' ? f.name === name : f.dso === name || f.dso.split('/').pop() === name);
      const inside = !kind || (kind === 'comm' ? s.comm === name : frames.some(on));
      if (!inside) continue;
      total++;
      period += s.period;
      if (!kind || kind === 'comm' || on(frames[frames.length - 1])) self++;
    }
    return { self_share: (100 * self) / ss.length, total_share: (100 * total) / ss.length, samples: total, period: period }[metric];
  };
  const point = (p) => ({ id: Number(p.id), name: p.name, uploaded_at: p.uploaded_at, tags: p.tags, value: value(p) });
  const out = { metric: metric, event: null, profiles: list.length, matched: list.length, capped: false };
  if (kind) out[kind] = name;
  const by = q.get('group_by');
  if (!by) return json(res, 200, Object.assign(out, { points: list.map(point) }));
  const groups = new Map();
  for (const p of list) {
    const l = p.tags[by] === undefined ? '' : String(p.tags[by]);
    if (!groups.has(l)) groups.set(l, []);
    groups.get(l).push(point(p));
  }
  return json(res, 200, Object.assign(out, { group_by: by, series: Array.from(groups, ([label, points]) => ({ label, points })) }));
}

/* /sandwich: callers (inverted, out to the comm) and callees of a
 * function, cut at its outermost frame. */
function sandwich(p, q, h, res, json) {
  const fn = q.get('function');
  const up = { name: fn, value: 0, children: [] }, down = { name: fn, value: 0, children: [] };
  const add = (node, names, w) => {
    node.value += w;
    for (const [nm, dso] of names) {
      let k = node.children.find((c) => c.name === nm);
      if (!k) { k = { name: nm, value: 0, children: [] }; if (dso) k.dso = dso; node.children.push(k); }
      k.value += w;
      node = k;
    }
  };
  let found = false;
  for (const s of h.filterSamples(p, q)) {
    const frames = s.stack.map((raw) => [h.frameName(raw, q), h.DSOS[raw]]);
    const i = frames.findIndex((f) => f[0] === fn);
    if (i < 0) continue;
    found = true;
    up.dso = down.dso = frames[i][1];
    const w = h.weightOf(s, q);
    add(up, frames.slice(0, i).reverse().concat([[s.comm, null]]), w);
    add(down, frames.slice(i + 1), w);
  }
  if (!found) return json(res, 404, { error: "no function '" + fn + "' in profile " + p.id });
  const sort = (n) => { n.children.sort((a, b) => (a.name < b.name ? -1 : 1)); n.children.forEach(sort); };
  sort(up);
  sort(down);
  return json(res, 200, { function: fn, weight: q.get('weight') || 'period', callers: up, callees: down });
}

/* /annotate: the function's self samples over four instructions of three
 * lines, the second-to-last taking two in three of them. */
const INSNS = [['push %rbp', 10], ['mov %rsp, %rbp', 10], ['add $1, %rax', 11], ['ret', 12]];
function annotate(p, q, h, res, json) {
  const fn = q.get('function');
  for (const k of ['comm', 'pid', 'tid', 'from_ns', 'to_ns']) {
    if (q.get(k)) return json(res, 400, { error: "'" + k + "' does not apply to /annotate" });
  }
  if (!q.get('weight')) q.set('weight', 'samples');
  const counts = [0, 0, 0, 0];
  let n = 0, dso = null;
  for (const s of h.filterSamples(p, q)) {
    const raw = s.stack[s.stack.length - 1];
    if (h.frameName(raw, null) !== fn) continue;
    dso = h.DSOS[raw] || null;
    counts[[2, 2, 1][n++ % 3]] += h.weightOf(s, q);
  }
  if (!n) return json(res, 404, { error: "no samples of '" + fn + "' in profile " + p.id });
  const file = '/src/' + fn + '.c';
  const lines = [10, 11, 12].map((l) => ({ line: l, samples: INSNS.reduce((a, x, i) => a + (x[1] === l ? counts[i] : 0), 0) }));
  return json(res, 200, {
    function: fn, weight: q.get('weight'), dso: dso, file: file, symbol: fn, self: counts.reduce((a, b) => a + b, 0),
    addresses: 'dso', disassembler: 'capstone x86-64', lines: lines,
    instructions: INSNS.map((x, i) => ({ address: '0x' + (0x1130 + 4 * i).toString(16), text: x[0], line: x[1], samples: counts[i] })),
    source: { file: file, first_line: 10, text: ['{', '\tcount++;', '}'] },
  });
}

/* The routes; h: the stub's own helpers (tree, top, merge, weightOf,
 * filterSamples, frameName, DSOS). true when the request was answered. */
function route(state, u, q, p, res, h) {
  const json = h.json;
  const merged = (list) => list.reduce((a, x) => a.concat(h.filterSamples(x, q)), []);
  if (u.pathname === '/api/v1/series') { series(state, q, h, res, json); return true; }
  if (u.pathname === '/api/v1/query/flamegraph' || u.pathname === '/api/v1/query/top') {
    const list = pick(state.profiles.filter((x) => x.status === 'ready'), q, 'q', res, json);
    if (!list) return true;
    const ss = merged(list);
    const info = { profiles: list.length, matched: list.length, capped: false };
    if (u.pathname.endsWith('flamegraph')) json(res, 200, Object.assign(h.tree(ss, q, 'value'), info));
    else json(res, 200, Object.assign({ functions: h.top(ss, q).slice(0, Number(q.get('rows') || 100)) }, info));
    return true;
  }
  if (u.pathname === '/api/v1/diff') {
    const b = side(state, q, 'base', res, json);
    if (!b) return true;
    const t = side(state, q, 'target', res, json);
    if (!t) return true;
    if (!b.length || !t.length) { json(res, 404, { error: 'no such profile' }); return true; }
    const bs = merged(b), ts = merged(t);
    const r = ranked(bs, ts, h, q);
    const body = h.merge(h.tree(bs, q, 'base'), h.tree(ts, q, 'target'));
    const rows = Number(q.get('rows') || 100);
    body.regressions = r.regressions.slice(0, rows);
    body.improvements = r.improvements.slice(0, rows);
    body.summary = { weight: q.get('weight') || 'period', test: b.length > 1 ? 'welch-t' : 'two-proportion-z', alpha: 0.01,
      base_profiles: b.length, target_profiles: t.length, base_matched: b.length, target_matched: t.length,
      base_capped: false, target_capped: false, base_total: r.baseAll, target_total: r.targetAll,
      total_change_pct: r.baseAll ? (100 * (r.targetAll / t.length - r.baseAll / b.length)) / (r.baseAll / b.length) : null };
    json(res, 200, body);
    return true;
  }
  if (p && p.view === 'sandwich') { sandwich(p.profile, q, h, res, json); return true; }
  if (p && p.view === 'annotate') { annotate(p.profile, q, h, res, json); return true; }
  return false;
}

module.exports = { route, pick };
