/* Figures for the page's model on big trees: build, layout (full width
 * and zoomed), hit testing and search, in ms of CPU time, for trees of about 10,000,
 * 100,000 and 300,000 frames. Not a test: it prints numbers. */
'use strict';
const path = require('path');
const F = require(path.resolve(process.env.top_srcdir || path.join(__dirname, '..'), 'web', 'flame.js'));

/* A deterministic tree of n frames: comms, then call chains of varying
 * depth and fan-out, like a large C++ build's profile. */
function synth(n) {
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const top = { name: 'all', value: 0, children: [] };
  const all = [top];
  let made = 1;
  while (made < n) {
    const parent = all[Math.floor(Math.pow(rnd(), 0.5) * all.length)];
    const k = { name: 'fn_' + Math.floor(rnd() * n / 4) + (rnd() < 0.1 ? '_[k]' : ''), value: 0, children: [] };
    parent.children.push(k);
    all.push(k);
    made++;
  }
  /* leaf weights, then values up the tree */
  const post = (x) => {
    let s = x.children.length ? 0 : 1 + Math.floor(rnd() * 100);
    for (const c of x.children) s += post(c);
    x.value = s + (x.children.length ? Math.floor(rnd() * 10) : 0);
    return x.value;
  };
  /* iterative post-order would be needed for very deep trees; this
   * generator's depth stays small (parents are chosen near the root) */
  post(top);
  return top;
}

/* CPU time per call (ms): steadier than wall time on a loaded machine. */
function time(fn, reps) {
  const c0 = process.cpuUsage();
  let r;
  for (let i = 0; i < reps; i++) r = fn();
  const c = process.cpuUsage(c0);
  return [(c.user + c.system) / 1000 / reps, r];
}

for (const n of [10000, 100000, 300000]) {
  const json = synth(n);
  const [tBuild, tree] = time(() => F.buildTree(json), 3);
  const [tLayout, rows] = time(() => F.layout(tree, tree, 1600, 0.3), 10);
  const drawn = rows.reduce((a, r) => a + (r ? r.length : 0), 0);
  let deep = tree;
  while (deep.children.length && deep.depth < 3) deep = deep.children.reduce((a, b) => (a.value > b.value ? a : b));
  const [tZoom, zrows] = time(() => F.layout(tree, deep, 1600, 0.3), 10);
  const [tHit] = time(() => { let h = 0; for (let x = 0; x < 1600; x += 4) if (F.hit(rows[2], x)) h++; return h; }, 10);
  const [tSearch, m] = time(() => F.search(tree, 'fn_12'), 5);
  console.log(n + ' frames (depth ' + tree.maxDepth + '): build ' + tBuild.toFixed(1) + ' ms, layout ' +
    tLayout.toFixed(1) + ' ms (' + drawn + ' rects at 1600 px), zoomed layout ' + tZoom.toFixed(1) + ' ms (' +
    zrows.reduce((a, r) => a + (r ? r.length : 0), 0) + ' rects), 400 hit tests ' + tHit.toFixed(2) + ' ms, search ' +
    tSearch.toFixed(1) + ' ms (' + m.nodes.size + ' matches)');
}
