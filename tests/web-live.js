/* The page against the real perfhubd with real recordings: the test
 * starts daemon/perfhubd (web root: web/ of the source tree), uploads
 * recordings of the shared corpus and a corrupt file through the API,
 * then drives the page in jsdom: the list shows what the API lists (the
 * failed upload with the parser's message); the flame graph's labels and
 * tooltip counts are the API's; a click zooms; search highlights and
 * reports the share computed here from the API's tree. Endpoints the
 * daemon does not answer yet (404) are reported and their parts skipped.
 * Usage: node tests/web-live.js PERFHUBD CORPUS_DIR */
'use strict';
const path = require('path');
const fs = require('fs');
const net = require('net');
const { spawn } = require('child_process');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const H = require(path.join(top, 'tests', 'web', 'harness.js'));
const F = require(path.join(top, 'web', 'flame.js'));
const { WIDTH, ROW_H, HIGHLIGHT, ok, until, api } = H;

const daemon = path.resolve(process.argv[2]);
const corpus = process.argv[3];
const tmp = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-live');
const RECORDINGS = ['perfparser-vector_static_clang-perf.data', 'mstange-sleep.data'];

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

async function exists(url) {
  const r = await fetch(url);
  return r.status !== 404;
}

async function main() {
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const port = await freePort();
  const base = 'http://127.0.0.1:' + port;
  const log = fs.openSync(path.join(tmp, 'perfhubd.log'), 'w');
  const proc = spawn(daemon, ['--listen', '127.0.0.1:' + port, '--db', path.join(tmp, 'perfhub.db'),
    '--spool', path.join(tmp, 'spool'), '--web-root', path.join(top, 'web'), '--workers', '2'],
  { stdio: ['ignore', log, log] });
  try {
    const end = Date.now() + 15000;
    for (;;) {
      try { if ((await fetch(base + '/healthz')).ok) break; } catch (e) { /* not yet */ }
      if (Date.now() > end) throw new Error('FAIL: perfhubd did not answer /healthz');
      await H.sleep(100);
    }
    /* uploads through the API, as the CLI would */
    const ids = {};
    for (const name of RECORDINGS) {
      const r = await fetch(base + '/api/v1/profiles?name=' + encodeURIComponent(name), {
        method: 'POST', headers: { 'Content-Type': 'application/octet-stream' },
        body: fs.readFileSync(path.join(corpus, name)),
      });
      ok(r.status === 202 || r.status === 200, 'upload ' + name + ': HTTP ' + r.status);
      ids[name] = String((await r.json()).id);
    }
    const junk = await fetch(base + '/api/v1/profiles?name=corrupt', {
      method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: Buffer.from('PERFILE2 this is not a recording'),
    });
    ok(junk.status === 202 || junk.status === 200, 'corrupt upload accepted for parsing');
    const junkId = String((await junk.json()).id);
    for (const id of Object.values(ids).concat([junkId])) {
      const t = Date.now() + 30000;
      for (;;) {
        const m = await api(base, 'profiles/' + id);
        if (m.status === 'ready' || m.status === 'failed') break;
        if (Date.now() > t) throw new Error('FAIL: profile ' + id + ' still ' + m.status);
        await H.sleep(100);
      }
    }
    const junkMeta = await api(base, 'profiles/' + junkId);
    ok(junkMeta.status === 'failed' && junkMeta.error, 'corrupt file failed with a message');

    const P = await H.openPage(base, tmp);
    const { w, d, $, ctxs, nav, texts, rects, mouse } = P;

    /* ---- the list ---- */
    const list = await api(base, 'profiles?limit=50');
    await until(() => d.querySelectorAll('#profiles tbody tr[data-id]').length === list.profiles.length, 'list rows');
    const shown = Array.from(d.querySelectorAll('#profiles tbody tr[data-id]')).map((tr) => tr.cells[0].textContent);
    ok(JSON.stringify(shown) === JSON.stringify(list.profiles.map((p) => p.name || String(p.id))), 'list = API list: ' + shown);
    const junkRow = d.querySelector('#profiles tr[data-id="' + junkId + '"]');
    ok(junkRow && junkRow.textContent.includes(junkMeta.error), 'failed upload shows the parser\'s message');
    P.snapshot('list');

    /* ---- a real recording's flame graph ---- */
    const id = ids[RECORDINGS[0]];
    const meta = await api(base, 'profiles/' + id);
    nav('#/profile/' + id);
    const tree = F.buildTree(await api(base, 'profiles/' + id + '/flamegraph?weight=period'));
    ok(tree.value > 0, 'the API gives a non-empty tree');
    await until(() => texts('fg').length > 0, 'flame graph drawn');
    if (meta.header && meta.header.hostname) ok($('#p-header').textContent.includes(meta.header.hostname), 'header host');
    const names = new Set();
    (function walk(n) { names.add(n.parent ? n.name : 'all'); n.children.forEach(walk); })(tree);
    for (const t of texts('fg')) {
      ok(names.has(t) || (t.endsWith('\u2026') && [...names].some((n) => n.startsWith(t.slice(0, -1)))), 'label "' + t + '" is a frame the API gave');
    }
    const rows = F.layout(tree, tree, WIDTH, 0.3);
    for (const r of rows.flat().filter((q) => q.w > 24 + 7 * ((q.node.parent ? q.node.name : 'all').length + 1))) {
      ok(texts('fg').includes(r.node.parent ? r.node.name : 'all'), 'wide frame labelled: ' + r.node.name);
    }
    const y = (depth) => (rows.length - 1 - depth) * ROW_H + 2 + ROW_H / 2;
    /* the widest frame two levels under a comm: tooltip and zoom */
    const cand = (rows[3] || rows[2]).slice().sort((a, b) => b.w - a.w)[0];
    mouse($('#fg'), 'mousemove', cand.x + cand.w / 2, y(cand.node.depth));
    ok($('#tooltip').textContent.includes(F.fmtCount(cand.node.value) + ' period'), 'tooltip count = API value ' +
      cand.node.value + ': ' + $('#tooltip').textContent);
    mouse($('#fg'), 'click', cand.x + cand.w / 2, y(cand.node.depth));
    const want = F.pathOf(cand.node).join(';');
    await until(() => F.parseHash(w.location.hash).params.zoom === want, 'zoom in the URL: ' + want);
    await until(() => $('#crumbs').textContent.endsWith(cand.node.name), 'breadcrumbs');
    P.snapshot('zoom');
    $('#fg-reset').click();

    /* search for a frame name of the API's tree */
    const term = cand.node.name;
    $('#fg-search').value = term;
    $('#fg-search').dispatchEvent(new w.Event('input', { bubbles: true }));
    let nodes = 0, value = 0;
    const lower = term.toLowerCase();
    (function walk(n, inside) {
      const hit = n.parent && n.name.toLowerCase().includes(lower);
      if (hit) { nodes++; if (!inside) value += n.value; }
      n.children.forEach((k) => walk(k, inside || hit));
    })(tree, false);
    const wantMatch = 'matched ' + nodes + ' frames, ' + F.fmtPct((100 * value) / tree.value) + ' of all';
    await until(() => $('#fg-match').textContent === wantMatch, 'match line "' + wantMatch + '", got "' + $('#fg-match').textContent + '"');
    const laidOut = F.layout(tree, tree, WIDTH, 0.3).flat().filter((r) => r.node.parent && r.node.name.toLowerCase().includes(lower)).length;
    await until(() => rects('fg').filter((r) => r.style === HIGHLIGHT).length === laidOut, 'matches highlighted');
    P.snapshot('search');

    /* the collapsed link answers */
    const href = $('#p-collapsed').getAttribute('href');
    const col = await fetch(new URL(href, base + '/'));
    ok(col.ok && (await col.text()).length > 0, 'collapsed link ' + href);

    /* endpoints the daemon may not have yet */
    const missing = [];
    for (const e of ['top', 'timeline', 'threads']) {
      if (!(await exists(base + '/api/v1/profiles/' + id + '/' + e))) missing.push(e);
    }
    if (!(await exists(base + '/api/v1/diff?base=' + id + '&target=' + id))) missing.push('diff');
    if (!missing.includes('top')) {
      const tj = await api(base, 'profiles/' + id + '/top?weight=period&limit=500');
      const fns = Array.isArray(tj) ? tj : tj.functions || tj.top || tj.rows || [];
      await until(() => d.querySelector('#top tbody tr') && d.querySelector('#top tbody tr').cells[0].textContent === fns[0].name, 'top table = API /top');
    }
    if (!missing.includes('threads')) {
      const th = await api(base, 'profiles/' + id + '/threads');
      const list2 = Array.isArray(th) ? th : th.threads || [];
      await until(() => d.querySelectorAll('#p-threads tbody tr').length === list2.length, 'threads table = API /threads');
    }
    if (!missing.includes('timeline')) {
      /* the heat map, then a drag over its first column's upper half */
      const tl = F.normalizeTimeline(await api(base, 'profiles/' + id + '/timeline?bucket_ms=20'), 20);
      const g = F.heatGrid(tl);
      await until(() => rects('heat').length === g.cols * g.rows, 'heat map: one cell per bucket (' + g.cols + 'x' + g.rows + ')');
      const cellH = Math.max(3, Math.floor(150 / g.rows));
      const last = Math.min(g.rows - 1, 24);
      mouse($('#heat'), 'mousedown', 1, 1);
      mouse($('#heat'), 'mousemove', 1, last * cellH + 1);
      mouse(w, 'mouseup', 1, last * cellH + 1);
      const r = F.bucketRange(tl, 0, last);
      await until(() => F.parseHash(w.location.hash).params.from_ns === String(r.fromNs), 'range in the URL');
      const rq = 'from_ns=' + r.fromNs + '&to_ns=' + F.parseHash(w.location.hash).params.to_ns;
      const rt = F.buildTree(await api(base, 'profiles/' + id + '/flamegraph?' + rq + '&weight=period'));
      const rn = new Set(['all']);
      (function walk(n) { if (n.parent) rn.add(n.name); n.children.forEach(walk); })(rt);
      await until(() => texts('fg').length > 0 && texts('fg').every((t) => rn.has(t) || t.endsWith('\u2026')), 'range graph labels are the API\'s for that range');
      P.snapshot('range');
    }
    if (!missing.includes('diff')) {
      const other = ids[RECORDINGS[1]];
      nav('#/compare?base=' + other + '&target=' + id);
      const reg = (await api(base, 'diff?base=' + other + '&target=' + id + '&weight=period&rows=30')).regressions;
      await until(() => d.querySelectorAll('#cmp-regressions tbody tr[data-function]').length === reg.length, 'regressions = API diff (' + reg.length + ')');
      if (reg.length) ok(d.querySelector('#cmp-regressions tbody tr').cells[0].textContent === reg[0].function, 'largest regression first');
      P.snapshot('compare');
    }
    /* a perf.data directory (perf record --threads) dropped on the page
     * goes up as a tar and parses; needs perf record to work here */
    const recDir = path.join(tmp, 'threads.data');
    const { spawnSync } = require('child_process');
    const rec = spawnSync('perf', ['record', '--threads', '-e', 'cpu-clock', '-o', recDir, '--', 'sleep', '0.2'], { stdio: 'ignore', timeout: 30000 });
    if (rec.status === 0 && fs.existsSync(path.join(recDir, 'data'))) {
      nav('#/');
      await until(() => !$('#view-list').hidden, 'list for the directory drop');
      $('#upload-name').value = '';
      const names = fs.readdirSync(recDir).sort();
      const dirEntry = {
        isFile: false, isDirectory: true, name: 'threads.data', fullPath: '/threads.data',
        createReader() {
          let given = false;
          return {
            readEntries(res) {
              res(given ? [] : names.map((n) => ({
                isFile: true, isDirectory: false, name: n, fullPath: '/threads.data/' + n,
                file: (cb) => cb(new w.File([fs.readFileSync(path.join(recDir, n))], n)),
              })));
              given = true;
            },
          };
        },
      };
      const before = (await api(base, 'profiles?limit=50')).total;
      const drop = new w.Event('drop', { bubbles: true, cancelable: true });
      drop.dataTransfer = { items: [{ webkitGetAsEntry: () => dirEntry }], files: [] };
      $('#drop').dispatchEvent(drop);
      await until(() => /^#\/profile\//.test(w.location.hash), 'page follows the uploaded directory', 15000);
      await until(() => $('#p-status').textContent.startsWith('ready') || $('#p-status').textContent.startsWith('failed'), 'directory parsed', 30000);
      const dm = await api(base, 'profiles/' + F.parseHash(w.location.hash).id);
      ok(dm.status === 'ready', 'perf.data directory ready: ' + JSON.stringify(dm).slice(0, 300));
      ok((await api(base, 'profiles?limit=50')).total === before + 1, 'one new profile');
      if (dm.kind) ok(dm.kind !== 'file', 'stored as a directory: ' + dm.kind);
      await until(() => texts('fg').length > 0, 'directory profile drawn');
      P.snapshot('directory');
    } else {
      console.log('note: perf record --threads unavailable; directory upload not checked');
    }
    ok(P.errors.length === 0, 'no script errors: ' + P.errors.join('\n'));
    console.log('ok: ' + H.stats.checks + ' checks against perfhubd' +
      (missing.length ? '; not answered by this perfhubd, not checked: ' + missing.join(', ') : '') +
      '; DOM snapshots in ' + tmp);
    ok(ctxs.fg, 'canvas');
  } finally {
    proc.kill('SIGTERM');
  }
}

main().then(() => process.exit(0), (e) => { console.error(e.message || e); process.exit(1); });
