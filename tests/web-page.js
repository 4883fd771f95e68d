/* The page, run in a DOM (jsdom) against a server that answers the API of
 * perfhubd (tests/web/stub-server.js): the list shows the profiles;
 * the flame graph's frames carry the names and counts the API gives; a
 * click zooms; search highlights and reports the matched share; a drag on
 * the heat map asks the API for that time range and draws its answer;
 * the top table and the compare view show what the API says; an upload
 * sends the bytes and the page follows the profile to "ready". Every
 * expected value is computed here from the API's own JSON.
 *
 * jsdom has no canvas: a recording 2D context stands in, so the test
 * sees every rectangle and label the page draws. DOM snapshots of each
 * view are written under $PERFHUB_TEST_TMP/web-page/. */
'use strict';
const path = require('path');
const fs = require('fs');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const H = require(path.join(top, 'tests', 'web', 'harness.js'));
const stub = require(path.join(top, 'tests', 'web', 'stub-server.js'));
const F = require(path.join(top, 'web', 'flame.js'));
const { WIDTH, ROW_H, HIGHLIGHT, ok, until, api } = H;

const outDir = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-page');

async function main() {
  const server = await stub.start(path.join(top, 'web'));
  const base = server.url;
  const P = await H.openPage(base, outDir);
  const { w, d, $, ctxs, nav, texts, rects, mouse, errors } = P;
  const snapshot = (name) => P.snapshot(name);

  try {
    /* ---- the list ---- */
    const list = await api(base, 'profiles?limit=50');
    await until(() => d.querySelectorAll('#profiles tbody tr[data-id]').length === list.profiles.length, 'list rows');
    const shown = Array.from(d.querySelectorAll('#profiles tbody tr[data-id]')).map((tr) => tr.cells[0].textContent);
    ok(JSON.stringify(shown) === JSON.stringify(list.profiles.map((p) => p.name)), 'list shows the API\'s profiles in order: ' + shown);
    const failed = list.profiles.find((p) => p.status === 'failed');
    ok(d.querySelector('#profiles tr[data-id="' + failed.id + '"]').textContent.includes(failed.error), 'failed profile shows its error');
    ok($('#health').className.includes('ok'), 'health indicator');
    snapshot('list');

    /* ---- a profile: facts and flame graph ---- */
    const id = list.profiles.find((p) => p.name === 'build-base').id;
    nav('#/profile/' + id);
    const meta = await api(base, 'profiles/' + id);
    const fgJson = await api(base, 'profiles/' + id + '/flamegraph?weight=period');
    const tree = F.buildTree(fgJson);
    await until(() => texts('fg').length > 0, 'flame graph drawn');
    ok($('#p-header').textContent.includes(meta.header.hostname), 'header shows the host');
    ok($('#p-header').textContent.includes(meta.header.cmdline), 'header shows the command line');
    ok($('#p-events').textContent.includes(meta.events[0].name), 'events table');
    ok($('#p-records').textContent.includes('SAMPLE'), 'records table');
    await until(() => d.querySelectorAll('#p-threads tbody tr').length > 0, 'threads table');

    /* every label drawn is a frame of the API's tree (or its truncation),
     * and every frame wide enough for a label got one */
    const names = new Set();
    (function walk(n) { names.add(n.parent ? n.name : 'all'); n.children.forEach(walk); })(tree);
    for (const t of texts('fg')) {
      ok(names.has(t) || (t.endsWith('\u2026') && [...names].some((n) => n.startsWith(t.slice(0, -1)))), 'label "' + t + '" is a frame the API gave');
    }
    const layoutRows = F.layout(tree, tree, WIDTH, 0.3);
    const wide = layoutRows.flat().filter((r) => r.w > 24 + 7 * ((r.node.parent ? r.node.name : 'all').length + 1));
    for (const r of wide) ok(texts('fg').includes(r.node.parent ? r.node.name : 'all'), 'wide frame labelled: ' + r.node.name);
    const nrows = layoutRows.length;
    const yOf = (depth, icicle) => (icicle ? depth * ROW_H + 2 : (nrows - 1 - depth) * ROW_H + 2) + ROW_H / 2;

    /* hover: the tooltip gives the API's count and shares */
    const parse = F.findPath(tree, ['make', 'main', 'run', 'parse']);
    const pr = layoutRows[parse.depth].find((r) => r.node === parse);
    mouse($('#fg'), 'mousemove', pr.x + pr.w / 2, yOf(parse.depth));
    const tip = $('#tooltip');
    ok(!tip.hidden && tip.textContent.includes('parse'), 'tooltip names the frame');
    ok(tip.textContent.includes(F.fmtCount(parse.value) + ' period'), 'tooltip count = API value ' + parse.value + ': ' + tip.textContent);
    ok(tip.textContent.includes(F.fmtPct((100 * parse.value) / tree.value) + ' of all'), 'tooltip share of all');
    ok(tip.textContent.includes(F.fmtPct((100 * parse.value) / parse.parent.value) + ' of parent'), 'tooltip share of parent');
    /* the DSO the API gives: file name on the kind line, full path below;
     * a frame without one shows none */
    const fgDso = (p) => {
      let n = fgJson;
      for (const name of p) n = n.children.find((c) => c.name === name);
      return n.dso;
    };
    const tipLines = () => Object.fromEntries(Array.from(tip.children).map((c) => [c.className, c.textContent]));
    const parseDso = fgDso(['make', 'main', 'run', 'parse']);
    ok(parseDso && parseDso.includes('/'), 'the stand-in gives a DSO path: ' + parseDso);
    let tips = tipLines();
    ok(tips['muted kind'] === 'user \u00b7 ' + parseDso.split('/').pop() && tips['muted dso'] === parseDso,
      'tooltip DSO = API: ' + JSON.stringify(tips));
    const emit = F.findPath(tree, ['make', 'main', 'run', 'emit']);
    ok(emit.name === 'emit' && fgDso(['make', 'main', 'run', 'emit']) === undefined, 'emit has no DSO in the API');
    const er = layoutRows[emit.depth].find((r) => r.node === emit);
    mouse($('#fg'), 'mousemove', er.x + er.w / 2, yOf(emit.depth));
    tips = tipLines();
    ok(tips.fn === 'emit' && tips['muted kind'] === 'user' && !('muted dso' in tips), 'tooltip without a DSO: ' + JSON.stringify(tips));
    snapshot('profile');

    /* ---- click zooms ---- */
    const run = parse.parent;
    const rr = layoutRows[run.depth].find((r) => r.node === run);
    mouse($('#fg'), 'click', rr.x + rr.w / 2, yOf(run.depth));
    await until(() => F.parseHash(w.location.hash).params.zoom === 'make;main;run', 'zoom in the URL');
    await until(() => $('#crumbs').textContent.endsWith('run'), 'breadcrumbs end at the zoomed frame');
    const runRect = () => {
      const ops = ctxs.fg.ops;
      const i = ops.findIndex((o) => o.op === 'text' && o.text === 'run');
      return i > 0 ? ops[i - 1] : null;
    };
    await until(() => runRect() && runRect().x === 0 && runRect().w >= WIDTH - 1, 'zoomed frame spans the width');
    ok(!texts('fg').includes('cc1'), 'frames outside the zoom are gone');
    snapshot('zoom');
    $('#fg-reset').click();
    await until(() => !F.parseHash(w.location.hash).params.zoom && texts('fg').includes('cc1'), 'reset zoom');

    /* ---- search: highlight and matched share ---- */
    const term = 'lex';
    $('#fg-search').value = term;
    $('#fg-search').dispatchEvent(new w.Event('input', { bubbles: true }));
    let matchedNodes = 0, matchedValue = 0;
    (function walk(n, inside) {
      const hit = n.parent && n.name.includes(term);
      if (hit) { matchedNodes++; if (!inside) matchedValue += n.value; }
      n.children.forEach((k) => walk(k, inside || hit));
    })(tree, false);
    ok(matchedNodes > 0, 'search term occurs in the API tree');
    const wantMatch = 'matched ' + matchedNodes + ' frames, ' + F.fmtPct((100 * matchedValue) / tree.value) + ' of all';
    await until(() => $('#fg-match').textContent === wantMatch, 'match line "' + wantMatch + '"');
    await until(() => rects('fg').filter((r) => r.style === HIGHLIGHT).length === matchedNodes, 'matched frames highlighted');
    ok(F.parseHash(w.location.hash).params.q === term, 'search in the URL');
    snapshot('search');

    /* ---- top table ---- */
    const topJson = await api(base, 'profiles/' + id + '/top?weight=period&limit=500');
    await until(() => d.querySelectorAll('#top tbody tr').length === topJson.functions.length, 'top rows');
    const firstTop = d.querySelector('#top tbody tr');
    ok(firstTop.cells[0].textContent === topJson.functions[0].name, 'top table: largest self first');
    ok(firstTop.cells[1].textContent === F.fmtCount(topJson.functions[0].self), 'top table: self as the API gives it');
    /* sortable: by total */
    d.querySelector('#top th[data-key="total"]').click();
    const byTotal = topJson.functions.slice().sort((a, b) => b.total - a.total)[0];
    ok(d.querySelector('#top tbody tr').cells[3].textContent === F.fmtCount(byTotal.total), 'sorted by total');
    /* a click on a row highlights that function */
    const row = Array.from(d.querySelectorAll('#top tbody tr')).find((tr) => tr.cells[0].textContent === 'emit');
    row.click();
    await until(() => F.parseHash(w.location.hash).params.q === '/^emit$/', 'top row click sets the highlight');
    const emitNodes = F.search(tree, '/^emit$/');
    await until(() => rects('fg').filter((r) => r.style === HIGHLIGHT).length === emitNodes.nodes.size, 'top row highlighted in the graph');
    nav('#/profile/' + id);
    await until(() => rects('fg').filter((r) => r.style === HIGHLIGHT).length === 0, 'highlight cleared');

    /* ---- heat map: drag a range, the flame graph follows ---- */
    await until(() => rects('heat').length > 0, 'heat map drawn');
    const tl = F.normalizeTimeline(await api(base, 'profiles/' + id + '/timeline?bucket_ms=20'), 20);
    const g = F.heatGrid(tl);
    const cellW = Math.max(3, Math.min(40, Math.floor(800 / g.cols)));
    const cellH = Math.max(3, Math.floor(150 / g.rows));
    ok(rects('heat').length === g.cols * g.rows, 'one cell per bucket (' + g.cols + 'x' + g.rows + ')');
    /* the first 20 buckets of the first second: 0-400 ms */
    mouse($('#heat'), 'mousedown', 1, 1);
    mouse($('#heat'), 'mousemove', 1, 19 * cellH + 1);
    mouse(w, 'mouseup', 1, 19 * cellH + 1);
    const r = F.bucketRange(tl, 0, 19);
    await until(() => F.parseHash(w.location.hash).params.from_ns === String(r.fromNs), 'range start in the URL');
    ok(F.parseHash(w.location.hash).params.to_ns === String(r.toNs), 'range end in the URL');
    const wantReq = 'from_ns=' + r.fromNs + '&to_ns=' + r.toNs;
    await until(() => server.state.requests.some((q) => q.includes('/flamegraph') && q.includes(wantReq)), 'flame graph asked for the range');
    const rangeTree = F.buildTree(await api(base, 'profiles/' + id + '/flamegraph?' + wantReq + '&weight=period'));
    await until(() => texts('fg').includes('emit') && !texts('fg').includes('parse'), 'flame graph shows the range\'s frames');
    const drawnNames = new Set(texts('fg'));
    const rangeNames = [];
    (function walk(n) { if (n.parent) rangeNames.push(n.name); n.children.forEach(walk); })(rangeTree);
    ok(rangeNames.every((n) => drawnNames.has(n)) && drawnNames.size === rangeNames.length + 1, 'range graph = API answer: ' + [...drawnNames]);
    ok(cellW > 0, 'cell width');
    snapshot('range');

    /* the same grid by keyboard: Escape clears, arrows move a cursor
     * (the first press shows it on bucket 0), Shift extends, Enter selects
     * buckets 3..7 of the first second */
    const key = (k, shift) => $('#heat').dispatchEvent(new w.KeyboardEvent('keydown', { key: k, shiftKey: !!shift, bubbles: true }));
    $('#heat').focus();
    key('Escape');
    await until(() => !F.parseHash(w.location.hash).params.from_ns, 'Escape clears the range');
    for (let i = 0; i <= 3; i++) key('ArrowDown');
    for (let i = 3; i < 7; i++) key('ArrowDown', true);
    key('Enter');
    const kr = F.bucketRange(tl, 3, 7);
    await until(() => F.parseHash(w.location.hash).params.from_ns === String(kr.fromNs) &&
      F.parseHash(w.location.hash).params.to_ns === String(kr.toNs), 'keys select buckets 3..7: ' + w.location.hash);
    key('ArrowRight');
    key('Enter');
    const kr2 = F.bucketRange(tl, 7 + g.rows, 7 + g.rows);
    await until(() => F.parseHash(w.location.hash).params.from_ns === String(kr2.fromNs), 'ArrowRight moves a second on; Enter selects one bucket');
    ok(F.parseHash(w.location.hash).params.to_ns === String(kr2.toNs), 'one bucket: ' + w.location.hash);
    key('Escape');
    await until(() => !F.parseHash(w.location.hash).params.from_ns, 'Escape clears the range again');

    /* icicle layout puts the root on top */
    nav('#/profile/' + id + '?layout=icicle');
    await until(() => { const o = ctxs.fg.ops.find((x) => x.op === 'text' && x.text === 'all'); return o && o.y === ROW_H / 2 + 2; }, 'icicle: root on top');

    /* ---- the parser's warnings, and a profile parsed again ---- */
    const sp = server.state.profiles.find((p) => p.id === id);
    sp.warnings = ['offset 48: the header\'s data size is 0: perf record did not end this recording (killed?)'];
    sp.status = 'parsing';
    sp.resymbolizing = true;
    nav('#/');
    await until(() => !$('#view-list').hidden, 'list before the re-symbolizing profile');
    nav('#/profile/' + id);
    await until(() => /re-symbolizing/.test($('#p-status').textContent), 'status says re-symbolizing');
    await until(() => !$('#p-warnings').hidden && $('#p-warnings').textContent.includes('perf record did not end'), 'warnings shown');
    await until(() => texts('fg').includes('lex'), 'the earlier parse is drawn while it is parsed again');
    snapshot('resymbolizing');
    /* the new parse done: status ready, drawn again */
    sp.status = 'ready';
    sp.resymbolizing = false;
    await until(() => $('#p-status').textContent.startsWith('ready') && !/re-symbolizing/.test($('#p-status').textContent), 'ready again', 10000);
    delete sp.warnings;

    /* ---- compare ---- */
    const tgt = list.profiles.find((p) => p.name === 'build-target').id;
    nav('#/compare?base=' + id + '&target=' + tgt);
    const reg = (await api(base, 'diff?base=' + id + '&target=' + tgt + '&weight=period&rows=30')).regressions;
    await until(() => d.querySelectorAll('#cmp-regressions tbody tr[data-function]').length === reg.length, 'regressions listed');
    const firstReg = d.querySelector('#cmp-regressions tbody tr').cells[0].textContent;
    ok(firstReg === reg[0].function && reg[0].delta_self > 0, 'largest regression first: ' + firstReg);
    ok(firstReg === 'lex', 'the changed function (lex) tops the regressions');
    const lexRects = ctxs['cmp-fg'].ops.filter((o, i, a) => o.op === 'rect' && a[i + 1] && a[i + 1].op === 'text' && a[i + 1].text === 'lex');
    ok(lexRects.length > 0 && lexRects.every((o) => /^hsl\(0,/.test(o.style)), 'grown frame drawn red');
    snapshot('compare');

    /* ---- upload with progress and live status ---- */
    nav('#/');
    await until(() => !$('#view-list').hidden, 'back to the list');
    $('#upload-name').value = 'dropped';
    $('#upload-tags').value = 'ci=1';
    const bytes = new Uint8Array(300000).fill(7);
    const file = new w.File([bytes], 'perf.data');
    const drop = new w.Event('drop', { bubbles: true, cancelable: true });
    drop.dataTransfer = { files: [file] };
    $('#drop').dispatchEvent(drop);
    await until(() => server.state.uploads.length === 1, 'upload reached the server');
    const up = server.state.uploads[0];
    ok(up.bytes === bytes.length && up.name === 'dropped' && up.tags[0] === 'ci=1', 'upload body, name and tag: ' + JSON.stringify(up));
    ok(up.type === 'application/octet-stream', 'upload content type');
    await until(() => /^#\/profile\//.test(w.location.hash), 'page follows the new profile');
    await until(() => /queued|parsing/.test($('#p-status').textContent), 'live status while parsing');
    /* leaving and coming back while it parses must resume the live status */
    const newHash = w.location.hash;
    nav('#/');
    await until(() => !$('#view-list').hidden, 'left the parsing profile');
    await H.sleep(1700); /* longer than the page's poll interval */
    nav(newHash);
    await until(() => $('#p-status').textContent.startsWith('ready') && texts('fg').length > 0, 'ready and drawn', 10000);
    snapshot('upload');

    /* ---- a dropped perf.data directory goes up as one tar ---- */
    nav('#/');
    await until(() => !$('#view-list').hidden, 'list for the directory drop');
    $('#upload-name').value = '';
    const fileEntry = (full, content) => ({
      isFile: true, isDirectory: false, name: full.split('/').pop(), fullPath: full,
      file: (res) => res(new w.File([content], full.split('/').pop())),
    });
    const dirEntry = {
      isFile: false, isDirectory: true, name: 'threads.data', fullPath: '/threads.data',
      createReader() {
        let given = false;
        return { readEntries(res) { res(given ? [] : [fileEntry('/threads.data/data.0', 'second file'), fileEntry('/threads.data/data', 'PERFILE2 first')]); given = true; } };
      },
    };
    const dirDrop = new w.Event('drop', { bubbles: true, cancelable: true });
    dirDrop.dataTransfer = { items: [{ webkitGetAsEntry: () => dirEntry }], files: [] };
    $('#drop').dispatchEvent(dirDrop);
    await until(() => server.state.uploads.length === 2, 'directory upload reached the server');
    const tarUp = server.state.uploads[1];
    ok(tarUp.type === 'application/x-tar' && tarUp.name === 'threads.data', 'directory sent as application/x-tar named after it: ' + tarUp.type + ' ' + tarUp.name);
    {
      const { execFileSync } = require('child_process');
      const dir = fs.mkdtempSync(path.join(outDir, 'tar-'));
      fs.writeFileSync(path.join(dir, 'up.tar'), tarUp.body);
      const listing = execFileSync('tar', ['-tf', path.join(dir, 'up.tar')], { encoding: 'utf8' }).trim().split('\n');
      ok(JSON.stringify(listing) === JSON.stringify(['threads.data/', 'threads.data/data', 'threads.data/data.0']), 'tar entries: ' + listing);
      execFileSync('tar', ['-xf', path.join(dir, 'up.tar'), '-C', dir]);
      ok(fs.readFileSync(path.join(dir, 'threads.data', 'data'), 'utf8') === 'PERFILE2 first', 'tar content of data');
      ok(fs.readFileSync(path.join(dir, 'threads.data', 'data.0'), 'utf8') === 'second file', 'tar content of data.0');
    }
    await until(() => /^#\/profile\//.test(w.location.hash), 'page follows the directory\'s profile');

    /* ---- a server that wants a token (require-read-token): the page
     * loads, says where the token goes, and asks again with it ---- */
    server.state.token = 'page-token';
    nav('#/?status=ready');
    await until(() => !$('#message').hidden && /token/i.test($('#message').textContent), 'a 401 asks for a token');
    ok(d.activeElement === $('#token') && $('#token').classList.contains('wanted'), 'the token box takes focus');
    /* an answer a newer one overtook changes nothing: the list asked
     * again without the token is answered (401) only after the token
     * loaded it */
    server.state.holdNext = true;
    nav('#/');
    await until(() => server.state.held.length === 1, 'the list asked again, its answer held');
    $('#token').value = 'page-token';
    $('#token').dispatchEvent(new w.Event('change'));
    await until(() => $('#message').hidden && d.querySelectorAll('#profiles tbody tr[data-id]').length > 0, 'the list loads with the token');
    server.state.held.splice(0).forEach((answer) => answer());
    await H.sleep(500);
    ok($('#message').hidden && d.querySelectorAll('#profiles tbody tr[data-id]').length > 0 && !$('#token').classList.contains('wanted'),
      'the late 401 of the earlier question leaves the list and the token box as they are: ' + ($('#message').hidden ? '' : $('#message').textContent));
    ok(w.localStorage.getItem('perfhub.token') === 'page-token', 'the token is kept for the next visit');
    server.state.token = null;

    /* ---- a busy server (503 Retry-After) is asked again ---- */
    server.state.busy = 1;
    const asked = server.state.requests.length;
    nav('#/?status=failed');
    await until(() => d.querySelectorAll('#profiles tbody tr[data-id]').length === 1, 'the list loads after a 503', 5000);
    ok(server.state.requests.slice(asked).filter((r) => r.startsWith('GET /api/v1/profiles?')).length >= 2, 'the page asked again after the 503');
    nav('#/');

    /* ---- delete ---- */
    nav('#/');
    const before = server.state.profiles.length;
    await until(() => d.querySelectorAll('#profiles tbody tr[data-id] button').length === before, 'delete buttons');
    d.querySelector('#profiles tbody tr[data-id] button').click();
    await until(() => server.state.profiles.length === before - 1, 'delete sent');

    ok(errors.length === 0, 'no script errors: ' + errors.join('\n'));
  } finally {
    if (errors.length) console.error('page errors:\n' + errors.join('\n'));
    if (!$('#message').hidden) console.error('page message: ' + $('#message').textContent);
    /* No w.close(): requests the page still has in flight would then
     * land in a closed window. The process exits right after this. */
  }
  console.log('ok: ' + H.stats.checks + ' checks; DOM snapshots in ' + outDir);
}

main().then(() => process.exit(0), (e) => { console.error(e.message || e); process.exit(1); });
