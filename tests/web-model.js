/* Tests of the page's model (web/flame.js) under node: trees built from
 * API-shaped JSON must give back the folded stacks they came from, the
 * layout must nest, search must count each sample once, the diff and
 * heat-map arithmetic must match hand-computed values, and every view's
 * URL must survive a round trip. With a folded file as argument (the
 * output of `perfhub collapse` on a real recording) it also checks the
 * tree built from that file. Exit 1 on the first failed check. */
'use strict';
const path = require('path');
const fs = require('fs');
const F = require(path.resolve(process.env.top_srcdir || path.join(__dirname, '..'), 'web', 'flame.js'));

let checks = 0;
function ok(cond, what) {
  checks++;
  if (!cond) {
    console.error('FAIL: ' + what);
    process.exit(1);
  }
}
/* JSON with sorted keys: objects compare by content, not key order */
function canon(v) {
  return JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
    ? Object.keys(x).sort().reduce((o, key) => { o[key] = x[key]; return o; }, {}) : x));
}
function eq(a, b, what) {
  const sa = canon(a), sb = canon(b);
  ok(sa === sb, what + ': got ' + sa + ', want ' + sb);
}

/* The API's construction, written independently of flame.js: folded
 * lines to {name, value, children}, first level the comm. */
function apiTree(lines) {
  const top = { name: 'all', value: 0, children: [] };
  for (const line of lines) {
    const sp = line.lastIndexOf(' ');
    const count = Number(line.slice(sp + 1));
    let n = top;
    n.value += count;
    for (const frame of line.slice(0, sp).split(';')) {
      let k = n.children.find((c) => c.name === frame);
      if (!k) { k = { name: frame, value: 0, children: [] }; n.children.push(k); }
      k.value += count;
      n = k;
    }
  }
  return top;
}

const sortLines = (l) => l.slice().sort();

/* ---- trees: folded -> API JSON -> tree -> folded ---- */
const folded = [
  'make;main;run;parse 30',
  'make;main;run;parse;lex 20',
  'make;main;run;emit 10',
  'make;main;[libc.so.6] 5',
  'cc1;main;parse;lex 7',
  'cc1;main;do_syscall_64_[k];vfs_read_[k] 3',
  'cc1;[unknown] 1',
];
const t = F.buildTree(apiTree(folded));
eq(t.value, 76, 'root value');
eq(t.count, 15, 'node count');
eq(t.maxDepth, 5, 'max depth');
eq(sortLines(F.toFolded(t)), sortLines(folded), 'folded round trip');
eq(t.children.map((c) => c.name), ['cc1', 'make'], 'children sorted by name');
const parse = F.findPath(t, ['make', 'main', 'run', 'parse']);
eq([parse.value, parse.self], [50, 30], 'value and self of make;main;run;parse');
eq(F.pathOf(parse), ['make', 'main', 'run', 'parse'], 'pathOf');
eq(F.findPath(t, ['make', 'nope']).name, 'make', 'findPath stops at the deepest existing frame');

/* a server that rounds children above their parent must not break nesting */
const bad = F.buildTree({ name: 'all', value: 1, children: [{ name: 'x', value: 5, children: [] }] });
eq(bad.value, 5, 'parent widened to its children');
/* hostile input: no children array, non-numeric values */
const odd = F.buildTree({ name: 'all', value: 'x', children: [null, 3, { name: 7, value: -2 }] });
eq([odd.value, odd.children.length, odd.children[0].name], [0, 1, '7'], 'odd input tolerated');

/* deep stacks: 20,000 frames must not overflow */
let deep = { name: 'f0', value: 1, children: [] };
const deepTop = { name: 'all', value: 1, children: [deep] };
for (let i = 1; i < 20000; i++) { const k = { name: 'f' + i, value: 1, children: [] }; deep.children.push(k); deep = k; }
eq(F.buildTree(deepTop).maxDepth, 20000, 'deep tree');

/* ---- layout ---- */
const W = 1000;
const rows = F.layout(t, t, W, 0);
ok(rows.length === t.maxDepth + 1, 'one row per depth');
for (let d = 1; d < rows.length; d++) {
  for (const r of rows[d]) {
    const p = rows[d - 1].find((q) => q.node === r.node.parent);
    ok(p && r.x >= p.x - 1e-9 && r.x + r.w <= p.x + p.w + 1e-9, 'child inside parent: ' + r.node.name);
  }
  for (let i = 1; i < rows[d].length; i++) ok(rows[d][i].x >= rows[d][i - 1].x + rows[d][i - 1].w - 1e-9, 'no overlap in row ' + d);
}
eq(rows[0][0].w, W, 'root spans the width');
const mk = rows[1].find((r) => r.node.name === 'make');
ok(Math.abs(mk.w - (W * 65) / 76) < 1e-9, 'width proportional to value');
/* zoom: the focus spans the width, ancestors are dimmed, others absent */
const run = F.findPath(t, ['make', 'main', 'run']);
const zr = F.layout(t, run, W, 0);
eq(zr[3].map((r) => [r.node.name, r.w, r.dim]), [['run', W, false]], 'zoomed focus');
eq(zr[1].map((r) => [r.node.name, r.dim]), [['make', true]], 'zoomed ancestors dimmed, siblings gone');
eq(zr[4].map((r) => r.node.name), ['emit', 'parse'], 'zoomed children');
ok(Math.abs(zr[4][1].w - (W * 50) / 60) < 1e-9, 'zoomed child width');
/* hit testing */
eq(F.hit(zr[4], zr[4][1].x + 1).node.name, 'parse', 'hit inside');
eq(F.hit(zr[4], W + 5), null, 'hit outside');
/* narrow frames are not laid out */
const wide = F.layout(t, t, 100, 5);
ok(!wide.some((r) => r && r.some((q) => q.node.name === '[unknown]')), 'frames under minPx skipped');

/* ---- search ---- */
let s = F.search(t, 'parse');
eq([s.nodes.size, s.value], [2, 57], 'search: make..parse (50) + cc1..parse (7)');
s = F.search(t, 'lex');
eq([s.nodes.size, s.value], [2, 27], 'search lex');
/* a match inside a match is counted once: "a" matches main, parse, ... */
s = F.search(t, 'ma');
eq(s.value, 75, 'nested matches counted once (make 65 + main under cc1 10)');
ok(Math.abs(s.pct - (100 * 75) / 76) < 1e-9, 'matched percent');
s = F.search(t, '/_\\[k\\]$/');
eq([s.nodes.size, s.value], [2, 3], 'regex search');
eq(F.search(t, '/[/').nodes.size, 0, 'bad regex matches nothing');
eq(F.search(t, '').value, 0, 'empty search');

/* ---- kinds ---- */
const kind = (p) => F.frameKind(F.findPath(t, p));
eq(kind(['cc1']), 'comm', 'comm kind');
eq(kind(['cc1', 'main', 'do_syscall_64_[k]']), 'kernel', 'kernel kind');
eq(kind(['cc1', '[unknown]']), 'unresolved', 'unknown kind');
eq(kind(['make', 'main', '[libc.so.6]']), 'unresolved', 'dso-only kind');
eq(kind(['make', 'main']), 'user', 'user kind');
eq(F.frameKind({ name: 'foo_[j]', depth: 3, parent: {} }), 'jit', 'jit kind');
ok(F.frameColor(parse) === F.frameColor(F.findPath(t, ['cc1', 'main', 'parse'])), 'same name, same colour');
/* kernel=1 trees: the "_[k]" mark becomes the kind, the name stays plain */
const km = F.buildTree({ name: 'all', value: 3, children: [{ name: 'cc1', value: 3, children: [
  { name: 'main', value: 3, children: [{ name: 'do_syscall_64_[k]', value: 2, children: [] }] }] }] }, { kernelMarks: true });
const kn = F.findPath(km, ['cc1', 'main', 'do_syscall_64']);
eq([kn.name, F.frameKind(kn), F.frameKind(F.findPath(km, ['cc1', 'main']))], ['do_syscall_64', 'kernel', 'user'], 'kernel marks to kinds');
/* DSOs: the API's "dso" (full path) gives the tooltip's file name and
 * path; without it an unresolved frame's bracketed name stands in; the
 * search's "dso:" prefix matches DSO paths, not names */
const dt = F.buildTree({ name: 'all', value: 6, children: [{ name: 'cc1', value: 6, children: [
  { name: 'main', value: 6, dso: '/usr/lib/gcc/x86_64-linux-gnu/12/cc1', children: [
    { name: 'memcpy', value: 3, dso: '/usr/lib/x86_64-linux-gnu/libc.so.6', children: [] },
    { name: 'vfs_read_[k]', value: 1, dso: '[kernel.kallsyms]', children: [] },
    { name: '[libz.so.1]', value: 1, children: [] },
    { name: 'nodso', value: 1, children: [] }] }] }] }, { kernelMarks: true });
const dso = (p) => F.frameDso(F.findPath(dt, p));
eq(dso(['cc1', 'main', 'memcpy']), { base: 'libc.so.6', full: '/usr/lib/x86_64-linux-gnu/libc.so.6' }, 'dso: file name and path');
eq(dso(['cc1', 'main', 'vfs_read']), { base: '[kernel.kallsyms]', full: '[kernel.kallsyms]' }, 'dso without a directory');
eq(dso(['cc1', 'main', '[libz.so.1]']), { base: 'libz.so.1', full: 'libz.so.1' }, 'dso of an unresolved frame without "dso"');
eq([dso(['cc1', 'main', 'nodso']), dso(['cc1']), F.frameDso(dt)], [null, null, null], 'no dso: none shown');
eq(F.frameKind(F.findPath(dt, ['cc1', 'main', 'vfs_read'])), 'kernel', 'kernel kind with a dso');
s = F.search(dt, 'dso:libc');
eq([Array.from(s.nodes).map((n) => n.name), s.value], [['memcpy'], 3], 'dso: search matches the DSO path');
s = F.search(dt, 'dso:/[/]cc1$/');
eq([Array.from(s.nodes).map((n) => n.name), s.value], [['main'], 6], 'dso: search with a regex');
eq(F.search(dt, 'libc').nodes.size, 0, 'a plain search matches names only');

const hue = (c) => +/^hsl\((\d+)/.exec(c)[1];
ok(hue(F.frameColor(kn)) >= 175 && hue(F.frameColor(kn)) <= 200, 'kernel frames aqua: ' + F.frameColor(kn));
ok(hue(F.frameColor(parse)) <= 50, 'user frames red to yellow: ' + F.frameColor(parse));

/* ---- diff ---- */
const d = F.buildTree({
  name: 'all', base: 100, target: 200, children: [
    { name: 'app', base: 100, target: 200, children: [
      { name: 'slow', base: 10, target: 100, children: [] },
      { name: 'fast', base: 90, target: 100, children: [] }] }] }, { diff: true });
eq([d.value, d.base, d.target], [200, 100, 200], 'diff root');
ok(/^hsl\(0,/.test(F.diffColor(F.findPath(d, ['app', 'slow']), 100, 200)), 'growth is red');
ok(/^hsl\(220,/.test(F.diffColor(F.findPath(d, ['app', 'fast']), 100, 200)), 'shrink is blue');

/* ---- a /sandwich tree: the function at the root, the comm at the callers' leaves ---- */
const sw = F.buildTree({ name: 'lex', dso: '/usr/lib/libparse.so', value: 5, children: [
  { name: 'parse', dso: '/usr/lib/libparse.so', value: 5, children: [
    { name: 'cc1', value: 3, children: [] },
    { name: 'do_syscall_64', dso: '[kernel.kallsyms]', value: 2, children: [{ name: 'make', value: 2, children: [] }] }] }] }, { sandwich: 'callers' });
eq([F.nodeLabel(sw), F.frameKind(sw)], ['lex', 'root'], 'sandwich root: the function');
const swKinds = (n) => [F.nodeLabel(n), F.frameKind(n)].concat(n.children.map(swKinds));
eq(swKinds(sw), ['lex', 'root', ['parse', 'user', ['cc1', 'comm'], ['do_syscall_64', 'kernel', ['make', 'comm']]]],
  'sandwich kinds: frames from the first level, comms at the callers\' leaves');
const swDown = F.buildTree({ name: 'lex', value: 2, children: [{ name: 'getc', value: 2, children: [] }] }, { sandwich: 'callees' });
eq(F.frameKind(swDown.children[0]), 'user', 'a callee leaf is a frame, not a comm');
eq(F.nodeLabel(t), 'all', 'a flame graph\'s root is all');

/* ---- the trend chart's geometry ---- */
{
  const pts = (l) => l.map(([id, at, v]) => ({ id: id, name: 'r' + id, uploaded_at: at, value: v }));
  const g = F.trendLayout([{ label: 'a', points: pts([[1, 't1', 10], [3, 't2', 40]]) }, { label: 'b', points: pts([[2, 't1', 25]]) }], 400, 300);
  eq(g.runs.map((r) => r.id), ['1', '2', '3'], 'runs in upload order, ids breaking ties');
  const xs = g.runs.map((r) => r.x);
  ok(xs[0] === g.plot.left && xs[2] === g.plot.right && Math.abs(xs[1] - (xs[0] + xs[2]) / 2) < 1e-9, 'runs evenly spaced over the plot');
  eq(g.series[1].points[0].x, xs[1], 'a series\' point sits at its run');
  eq(g.ticks.map((k) => k.value), [0, 10, 20, 30, 40], 'nice ticks up to the largest value');
  ok(g.series[0].points[1].y === g.plot.top && g.ticks[0].y === g.plot.bottom, 'the largest value at the top, 0 at the bottom');
  ok(Math.abs(g.series[0].points[0].y - (g.plot.bottom - (g.plot.bottom - g.plot.top) / 4)) < 1e-9, 'y in proportion to the value');
  eq(F.trendLayout([{ label: '', points: pts([[5, 't', 0.3]]) }], 400, 300).ticks.map((k) => +k.value.toFixed(3)), [0, 0.1, 0.2, 0.3], 'ticks of small shares');
  eq(F.trendLayout([{ label: '', points: [] }], 400, 300).runs, [], 'no recordings');
}

/* ---- durations ---- */
eq([F.fmtNs(324651095), F.fmtNs(2.5e9), F.fmtNs(1500), F.fmtNs(80)], ['324.7 ms', '2.50 s', '1.5 \u00b5s', '80 ns'], 'durations');
eq([F.fmtWeight(12345, 'samples', true), F.fmtWeight(5e6, 'offcpu', true), F.fmtWeight(5e6, 'wall'), F.fmtWeight(7, 'period')],
  ['12.3 k samples', '5.0 ms off-CPU', '5.0 ms', '7'], 'values of each weight');

/* ---- top functions from a tree (recursion counted once in total) ---- */
const rec = F.buildTree(apiTree(['p;f;g;f 4', 'p;f 1']));
const top = F.topFunctions(rec);
eq(top.map((r) => [r.name, r.self, r.total]), [['f', 5, 5], ['g', 0, 4]], 'top self/total');

/* ---- timeline ---- */
let tl = F.normalizeTimeline({ bucket_ms: 20, start_ns: 1000, buckets: [1, 2, 0, 4] });
eq([tl.bucketNs, tl.startNs, tl.counts], [20e6, 1000, [1, 2, 0, 4]], 'timeline as numbers');
tl = F.normalizeTimeline({ bucket_ms: 10, buckets: [{ start_ns: 5e9, samples: 3 }, { start_ns: 5.03e9, samples: 1 }] });
eq([tl.startNs, tl.counts], [5e9, [3, 0, 0, 1]], 'timeline as objects, gaps filled');
tl = F.normalizeTimeline({ start_ns: 7e9, bucket_ns: 20e6, buckets: [{ t_ns: 7e9, samples: 2, period: 9 }, { t_ns: 7.04e9, samples: 5, period: 9 }] });
eq([tl.bucketNs, tl.startNs, tl.counts], [20e6, 7e9, [2, 0, 5]], 'timeline with bucket_ns and t_ns');
tl = F.normalizeTimeline({ bucket_ms: 20, start_ns: 0, buckets: new Array(120).fill(1) });
eq(F.heatGrid(tl), { cols: 3, rows: 50, max: 1 }, 'heat grid: 50 rows of 20 ms per second');
{
  const off = { start_ns: 0, bucket_ns: 10, buckets: [{ t_ns: 0, samples: 3, period: 7, offcpu: 20 }, { t_ns: 20, samples: 1, period: 0, offcpu: 5 }] };
  eq(F.normalizeTimeline(off, 0, 'offcpu').counts, [20, 0, 5], 'off-CPU time per bucket');
  eq(F.normalizeTimeline(off, 0, 'wall').counts, [27, 0, 5], 'on+off-CPU: period plus off-CPU time');
  eq(F.normalizeTimeline(off, 0).counts, [3, 0, 1], 'samples otherwise');
}
eq(F.bucketRange(tl, 7, 3), { fromNs: 60e6, toNs: 160e6 }, 'range of a backwards drag');

/* ---- URLs ---- */
const st = { view: 'profile', id: '42', params: { event: 'cpu-clock:ppp', zoom: 'a b;c;d=e&f', q: '/^x$/', from_ns: '1', to_ns: '2' } };
eq(F.parseHash(F.formatHash(st)), st, 'profile URL round trip');
eq(F.parseHash('#/compare?base=1&target=2'), { view: 'compare', id: null, params: { base: '1', target: '2' } }, 'compare URL');
eq(F.parseHash('').view, 'list', 'empty URL is the list');
for (const s of [{ view: 'sandwich', id: '7', params: { function: 'a::b<c>', weight: 'offcpu' } },
  { view: 'annotate', id: '7', params: { function: 'f', dso: '/usr/lib/x.so' } },
  { view: 'trend', id: null, params: { sel: '{build="fast", name=~"a.*"}', function: 'hash_rows', group_by: 'build' } },
  { view: 'compare', id: null, params: { base_q: '{a="1"}', target_q: '{a!="1"}' } }]) {
  eq(F.parseHash(F.formatHash(s)), s, s.view + ' URL round trip');
}
eq(F.formatHash({ view: 'sandwich', id: '3', params: {} }), '#/sandwich/3', 'sandwich URL');
eq(F.parseHash('#/sandwich').view, 'list', 'a view of one profile without its id is the list');
eq(F.formatHash({ view: 'list', params: { q: '', status: 'ready' } }), '#/?status=ready', 'empty params dropped');

/* ---- tar of a perf.data directory, read back by tar(1) ---- */
{
  const { execFileSync } = require('child_process');
  const os = require('os');
  const long = 'd/' + 'x'.repeat(120) + '/data.1';
  const files = [
    { name: 'rec.data', size: -1, mtime: 1700000000 },
    { name: 'rec.data/data', data: Buffer.from('PERFILE2 header bytes'), mtime: 1700000000 },
    { name: 'rec.data/data.0', data: Buffer.alloc(1000, 65), mtime: 1700000001 },
    { name: 'rec.data/' + long, data: Buffer.alloc(512, 66), mtime: 1700000002 },
  ];
  for (const f of files) if (f.data) f.size = f.data.length;
  const tar = Buffer.concat(F.tarParts(files).map((p) => Buffer.from(p)));
  ok(tar.length % 512 === 0, 'tar is whole blocks');
  const dir = fs.mkdtempSync(path.join(process.env.PERFHUB_TEST_TMP || os.tmpdir(), 'web-tar-'));
  fs.writeFileSync(path.join(dir, 't.tar'), tar);
  let listing = null;
  try { listing = execFileSync('tar', ['-tf', path.join(dir, 't.tar')], { encoding: 'utf8' }); } catch (e) { listing = null; }
  if (listing !== null) {
    eq(listing.trim().split('\n'), ['rec.data/', 'rec.data/data', 'rec.data/data.0', 'rec.data/' + long], 'tar -tf lists the entries');
    execFileSync('tar', ['-xf', path.join(dir, 't.tar'), '-C', dir]);
    for (const f of files.filter((x) => x.data)) {
      ok(fs.readFileSync(path.join(dir, f.name)).equals(f.data), 'tar -x gives back ' + f.name);
    }
  } else {
    console.log('note: no tar(1); tar output not read back');
  }
  fs.rmSync(dir, { recursive: true, force: true });
  eq(F.tarHeader('a/' + 'y'.repeat(200), 1), null, 'a name no ustar can hold');
}

/* ---- a real recording's folded stacks, when given ---- */
const file = process.argv[2];
if (file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const real = F.buildTree(apiTree(lines));
  const merged = new Map();
  for (const l of lines) {
    const sp = l.lastIndexOf(' ');
    merged.set(l.slice(0, sp), (merged.get(l.slice(0, sp)) || 0) + Number(l.slice(sp + 1)));
  }
  const want = Array.from(merged, ([k, v]) => k + ' ' + v).sort();
  eq(F.toFolded(real).sort(), want, 'real folded round trip (' + lines.length + ' lines)');
  const total = lines.reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  eq(real.value, total, 'real total');
  console.log('real recording: ' + lines.length + ' stacks, ' + real.count + ' frames, total ' + total);
}

console.log('ok: ' + checks + ' checks');
