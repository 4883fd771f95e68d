/* The page in Firefox: Debian's firefox-esr, headless, driven by
 * puppeteer-core over WebDriver BiDi (stock Firefox; playwright needs a
 * patched build), against a perfhubd started here with the recordings
 * tests/web-e2e.js also uses (tests/web/e2e-common.js makes both). The
 * window has a device pixel ratio of 2, as on a HiDPI laptop. Every
 * expected value comes from perfhubd's API. It checks: the list; the
 * flame graph's frames against /flamegraph, the canvas's backing store
 * at the pixel ratio, every label inside its frame as Firefox measures
 * the text; the hover tooltip (with the DSO the API gives); a click
 * zooms; the keyboard (arrows, Enter, Escape, `/`, and a time range
 * picked on the heat map with the keys); search highlights; a drag on
 * the heat map gives /flamegraph for that range; compare = /diff with
 * the changed function first. Screenshots of each view go to
 * tests/web-e2e-firefox.out/ in the build directory.
 * Usage: node tests/web-e2e-firefox.js PERFHUBD HOTSPOT FIREFOX */
'use strict';
const path = require('path');
const fs = require('fs');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const bld = path.resolve(process.env.top_builddir || '.');
const puppeteer = require(path.join(top, 'tests', 'web', 'node_modules', 'puppeteer-core'));
const C = require(path.join(top, 'tests', 'web', 'e2e-common.js'));
const { ok, near, log, pathValues, countNear, checkFrames, stats, until } = C;
const { tipLines, frames, hashParams, pointOn, centre } = C;

const [daemon, hotspot, browserPath] = process.argv.slice(2).map((p) => path.resolve(p));
const tmp = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-e2e-firefox');
const shots = path.join(bld, 'tests', 'web-e2e-firefox.out');
const VIEWPORT = { width: 1280, height: 1000, deviceScaleFactor: 2 };
const HIGHLIGHT = 'rgb(220,40,220)';

/* waits until the canvas shows the current URL's state */
const drawn = (page, sel) => until(page, (s) => {
  const c = document.querySelector(s);
  return c && c.dataset.hash === location.hash && !c.closest('[hidden]');
}, sel, 'canvas ' + sel + ' drawn for ' + sel);
const untilParam = (page, k, want) => until(page, ([key, w]) => (new URLSearchParams(location.hash.split('?')[1] || '').get(key) || '') === w, [k, want], 'URL has ' + k + '=' + want);
const sigOf = (list) => JSON.stringify(list.map((f) => [f.path, f.x.toFixed(2), f.w.toFixed(2), f.y, f.label]));
/* in-page navigation: a new hash, as a click on a link gives */
const nav = (page, hash) => page.evaluate((h) => { location.hash = h; }, hash);

/* A shot of the window with the view's main element in it (a full page
 * at ratio 2 is a 2560 x 6000 px image that takes seconds on a loaded
 * machine) */
let shotNo = 0;
async function shot(page, name, sel) {
  const file = path.join(shots, String(++shotNo).padStart(2, '0') + '-' + name + '.png');
  if (sel) await page.evaluate((s) => document.querySelector(s).scrollIntoView({ block: 'center' }), sel);
  await page.screenshot({ path: file });
  ok(fs.statSync(file).size > 5000, 'screenshot ' + name);
}

let srv = null, browser = null; /* ended on every way out */

async function main() {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  srv = await C.startServer({ daemon, hotspot, tmp, webRoot: path.join(top, 'web') });
  const { base, api, aId, bId } = srv;

  /* a launch can stall on a loaded machine: 60 s, then one more try */
  const launchT = Date.now();
  for (let attempt = 1; !browser; attempt++) {
    try {
      browser = await puppeteer.launch({
        browser: 'firefox', executablePath: browserPath, headless: true, timeout: 60000,
        defaultViewport: VIEWPORT, userDataDir: path.join(tmp, 'profile-' + attempt),
      });
    } catch (e) {
      if (attempt >= 2) throw e;
      log('firefox did not start (' + String(e.message).split('\n')[0] + '); again');
    }
  }
  const version = await browser.version();
  log(version + ' started in ' + ((Date.now() - launchT) / 1000).toFixed(1) + ' s');
  const page = await browser.newPage();
  await page.setViewport(VIEWPORT);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  page.on('dialog', (d) => d.accept());

  /* ---- the list ---- */
  log('the list');
  await page.goto(base + '/#/');
  const list = await api('profiles?limit=50');
  await until(page, (n) => document.querySelectorAll('#profiles tbody tr[data-id]').length === n, list.profiles.length, 'list rows');
  const rows = await page.$$eval('#profiles tbody tr[data-id]', (trs) => trs.map((tr) => ({
    id: tr.dataset.id, cells: Array.from(tr.cells).map((c) => c.textContent.trim()),
  })));
  ok(rows.map((r) => r.id).join() === list.profiles.map((p) => String(p.id)).join(), 'list rows in the API\'s order');
  for (let i = 0; i < rows.length; i++) {
    const p = list.profiles[i], c = rows[i].cells;
    ok(c[0] === p.name && c[3].startsWith(p.status) && countNear(c[4], p.samples), 'list row ' + c.join(' | ') + ' = API ' + p.name);
  }
  await shot(page, 'list', '#profiles');

  /* ---- a profile: frames = the API's tree, drawn at the pixel ratio ---- */
  log('a profile: frames = the API\'s tree');
  await page.click('#profiles tr[data-id="' + aId + '"] a');
  await until(page, (id) => location.hash === '#/profile/' + id, aId, 'the name links to the profile');
  await drawn(page, '#fg');
  /* drawn for the width the canvas has once the page's scrollbar is there */
  await until(page, () => {
    const c = document.querySelector('#fg');
    const root = window.PerfhubPage.frames().find((f) => f.path === '');
    return root && Math.abs(root.w - c.getBoundingClientRect().width) < 1;
  }, null, 'the graph is drawn for the canvas\'s width');
  const whole = await api('profiles/' + aId + '/flamegraph?weight=period');
  const vals = pathValues(whole);
  let fr = await frames(page);
  const wide = checkFrames(fr, whole, 'profile');
  const cv = await page.evaluate(() => {
    const c = document.querySelector('#fg'), b = c.getBoundingClientRect();
    return { dpr: window.devicePixelRatio, w: c.width, h: c.height, cssW: b.width, cssH: b.height };
  });
  ok(cv.dpr === 2, 'device pixel ratio 2: ' + cv.dpr);
  ok(Math.abs(cv.w - cv.cssW * cv.dpr) <= 2 && Math.abs(cv.h - cv.cssH * cv.dpr) <= 2,
    'canvas backing store = CSS size x ratio: ' + JSON.stringify(cv));
  ok(near(fr.find((f) => f.path === '').w, cv.cssW, 1), 'root frame spans the canvas');
  /* labels as Firefox measures them: inside their frames */
  let labelled = 0;
  for (const f of fr) {
    if (!f.label) continue;
    labelled++;
    ok(f.labelW > 0 && f.labelW <= f.w - 4, 'label "' + f.label + '" (' + f.labelW + ' px) inside its frame (' + f.w.toFixed(1) + ' px)');
  }
  ok(labelled > 5, 'labels drawn: ' + labelled);
  log('profile: ' + fr.length + ' frames, ' + wide + ' API nodes >= 1 px, ' + labelled + ' labels inside their frames');
  await shot(page, 'profile', '#fg');
  /* a new pixel ratio, the window's size the same: the backing stores follow */
  await page.setViewport(Object.assign({}, VIEWPORT, { deviceScaleFactor: 1 }));
  const store = () => page.evaluate(() => ['#fg', '#heat'].map((s) => {
    const c = document.querySelector(s), b = c.getBoundingClientRect();
    return [window.devicePixelRatio, c.width, Math.round(b.width), c.height, Math.round(b.height)];
  }));
  await until(page, () => ['#fg', '#heat'].every((s) => {
    const c = document.querySelector(s);
    return window.devicePixelRatio === 1 && Math.abs(c.width - c.getBoundingClientRect().width) <= 1;
  }), null, 'canvases redrawn at ratio 1: ' + JSON.stringify(await store()));
  await page.setViewport(VIEWPORT);
  await until(page, () => ['#fg', '#heat'].every((s) => {
    const c = document.querySelector(s);
    return window.devicePixelRatio === 2 && Math.abs(c.width - 2 * c.getBoundingClientRect().width) <= 2;
  }), null, 'canvases redrawn at ratio 2 again');
  ok(sigOf(await frames(page)) === sigOf(fr), 'the same frames at either ratio');

  /* hover: the tooltips of a few frames = the API (DSO when it gives one) */
  log('hover: tooltips');
  /* the widest frame at depth >= 3, one with a few frames above it first, so that a
   * zoom into it has something to show */
  const above = (f) => fr.filter((g) => g.path.startsWith(f.path + ';')).length;
  const hot = fr.filter((f) => f.depth >= 3 && f.w > 60)
    .sort((a, b) => (above(b) >= 3) - (above(a) >= 3) || b.w - a.w)[0];
  ok(hot, 'a wide frame at depth >= 3');
  const hovered = C.framesToHover(fr, 2, [hot.name]).concat([hot]);
  let withDso = 0;
  for (const f of hovered) {
    const q = await centre(page, 'profile', f);
    await page.mouse.move(q.x, q.y);
    await until(page, (n) => { const e = document.querySelector('#tooltip:not([hidden]) .fn'); return e && e.textContent === n; }, f.name, 'tooltip of ' + f.name);
    if (C.checkTip(await tipLines(page), f, vals, 'period', 'tooltip of ' + f.path)) withDso++;
  }
  log('hover: ' + hovered.length + ' tooltips = the API, ' + withDso + ' with the DSO the API gives');
  ok(withDso >= 2, 'tooltips with the DSO /flamegraph gives: ' + withDso + ' of ' + hovered.length);
  await shot(page, 'profile-tooltip');

  /* a click zooms: the frame fills the width, breadcrumbs name its path */
  log('a click zooms');
  let pt = await centre(page, 'profile', hot);
  await page.mouse.click(pt.x, pt.y);
  await untilParam(page, 'zoom', hot.path);
  await drawn(page, '#fg');
  fr = await frames(page);
  const z = fr.find((f) => f.path === hot.path);
  ok(z && z.x === 0 && near(z.w, fr.find((f) => f.path === '').w, 0.01) && !z.dim, 'zoomed frame fills the width');
  /* the frame and what it calls: as many as the API's subtree has, up to
   * the usual four, at least 1 px wide (a short recording may have fewer) */
  const below = C.wideUnder(whole, hot.path, fr.find((f) => f.path === '').w);
  checkFrames(fr.filter((f) => !f.dim), whole, 'zoomed', { focus: hot.path, minFrames: Math.min(4, below) });
  const crumbs = await page.$$eval('#crumbs a, #crumbs strong', (es) => es.map((e) => e.textContent));
  ok(crumbs.join(';') === 'all;' + hot.path, 'breadcrumbs ' + crumbs.join(' > '));
  await shot(page, 'profile-zoom', '#fg');

  /* ---- the keyboard ---- */
  log('keyboard: Escape, arrows, Enter, /');
  await page.focus('#fg');
  await page.keyboard.press('Escape');
  await untilParam(page, 'zoom', '');
  await drawn(page, '#fg');
  await page.focus('#fg');
  const scrollY = await page.evaluate(() => window.scrollY);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  /* a key press can return before the page has handled it (WebDriver
   * BiDi): read the selection once both presses have moved it */
  await until(page, () => { const f = window.PerfhubPage.frames().find((x) => x.selected); return f && f.depth >= 2; }, null, 'ArrowUp twice selects a frame two levels up');
  ok(await page.evaluate(() => window.scrollY) === scrollY, 'arrows on the graph do not scroll the page');
  fr = await frames(page);
  const sel = fr.find((f) => f.selected);
  const rootKids = whole.children.slice().sort((a, b) => b.value - a.value);
  const kid2 = rootKids[0].children.slice().sort((a, b) => b.value - a.value)[0];
  ok(sel && sel.path === rootKids[0].name + ';' + kid2.name, 'ArrowUp twice selects the largest callee path: ' + (sel && sel.path));
  ok((await page.$eval('#tooltip', (t) => !t.hidden && t.textContent)).startsWith(sel.name), 'the tooltip follows the selection');
  await page.keyboard.press('Tab');
  ok(await page.$eval('#tooltip', (t) => t.hidden), 'Tab away: the tooltip goes');
  await page.focus('#fg');
  /* Left and right walk the frames at the selection's depth; the selection
   * may be the last of its row (the recording decides), so go towards the
   * side that has a neighbour and come back. */
  const selectedPath = async () => ((await frames(page)).find((f) => f.selected) || { path: null }).path;
  /* the selection after a key press: polled until it is what `done` says
   * (the press may return before the page has handled it), or as it is
   * after ms */
  const selectionAfter = async (key, done, ms) => {
    await page.keyboard.press(key);
    const end = Date.now() + ms;
    for (;;) {
      const p = await selectedPath();
      if (done(p) || Date.now() > end) return p;
      await C.sleep(50);
    }
  };
  /* the frames drawn in the selection's row: its possible neighbours (a
   * row of one frame - the recording and the window's width decide - has
   * none, and the arrows must leave the selection where it is) */
  const row = (await frames(page)).filter((f) => f.depth === sel.depth);
  let [away, back] = ['ArrowRight', 'ArrowLeft'];
  let moved = await selectionAfter(away, (p) => p !== sel.path, row.length > 1 ? 2000 : 500);
  if (moved === sel.path) {
    [away, back] = ['ArrowLeft', 'ArrowRight'];
    moved = await selectionAfter(away, (p) => p !== sel.path, row.length > 1 ? 5000 : 500);
  }
  if (row.length > 1) {
    ok(moved !== sel.path, away + ' moves the selection to a neighbour (' + row.length + ' frames in its row)');
    ok(await selectionAfter(back, (p) => p === sel.path, 5000) === sel.path, away + ' then ' + back + ' comes back');
  } else {
    ok(row.length === 1 && moved === sel.path, 'a row of one frame: left and right keep the selection');
  }
  await page.keyboard.press('Enter');
  await untilParam(page, 'zoom', sel.path);
  await drawn(page, '#fg');
  await page.focus('#fg');
  await page.keyboard.press('Escape');
  await untilParam(page, 'zoom', '');
  await page.keyboard.press('/');
  ok(await page.evaluate(() => document.activeElement.id === 'fg-search'), '/ focuses the search box');

  /* ---- search: matching frames magenta, the share as the API's tree says ---- */
  log('search');
  const term = '_HOT';
  await page.keyboard.type(term);
  await untilParam(page, 'q', term);
  await drawn(page, '#fg');
  fr = await frames(page);
  for (const f of fr) {
    const want = f.depth >= 1 && f.name.toLowerCase().includes(term.toLowerCase());
    ok(f.match === want && (f.color === HIGHLIGHT) === want, 'search marks ' + f.path + ': ' + f.match);
  }
  let matched = 0;
  for (const [p, v] of vals) {
    if (!p) continue;
    const parts = p.split(';');
    if (parts.findIndex((n) => n.toLowerCase().includes(term.toLowerCase())) === parts.length - 1) matched += v.value;
  }
  const share = (100 * matched) / vals.get('').value;
  const mt = await page.$eval('#fg-match', (e) => e.textContent);
  const ms = /matched (\d+) frames, ([\d.]+)% of all/.exec(mt);
  ok(ms && near(+ms[2], share, 0.051) && share > 20, 'search share ' + mt + ' = ' + share.toFixed(2) + '%');
  await shot(page, 'profile-search', '#fg');
  /* dso:TERM marks the frames whose DSO (as the API gives it) matches */
  const dterm = 'dso:tests/web/hotspot';
  await page.focus('#fg-search');
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.type(dterm);
  await untilParam(page, 'q', dterm);
  await drawn(page, '#fg');
  fr = await frames(page);
  let dsoMatched = 0;
  for (const f of fr) {
    const d = vals.get(f.path).dso;
    const want = f.depth >= 2 && typeof d === 'string' && d.toLowerCase().includes(dterm.slice(4));
    if (want) dsoMatched++;
    ok(f.match === want, 'dso search marks ' + f.path + ' (' + d + '): ' + f.match);
  }
  ok(dsoMatched >= 3, 'frames of the test program matched by its DSO: ' + dsoMatched);
  /* Escape in the box clears the search; a second one goes back to the graph */
  await page.keyboard.press('Escape');
  await untilParam(page, 'q', '');
  ok(await page.$eval('#fg-search', (e) => e.value === '' && document.activeElement === e), 'Escape clears the search box');
  await page.keyboard.press('Escape');
  ok(await page.evaluate(() => document.activeElement.id === 'fg'), 'a second Escape goes back to the graph');
  await drawn(page, '#fg');
  ok((await frames(page)).every((f) => !f.match), 'no frame marked after Escape');

  /* ---- the heat map: a drag over 40..300 ms ---- */
  log('the heat map: a drag');
  await drawn(page, '#heat');
  const heat = await page.evaluate(() => window.PerfhubPage.heat());
  const tl = await api('profiles/' + aId + '/timeline?bucket_ms=20');
  ok(heat.startNs === tl.start_ns && heat.bucketNs === tl.bucket_ns && heat.rows === 1e9 / tl.bucket_ns, 'heat map grid from /timeline');
  for (const b of tl.buckets) ok(heat.counts[Math.round((b.t_ns - tl.start_ns) / tl.bucket_ns)] === b.value, 'heat cell at ' + b.t_ns);
  const cell = (i) => [Math.floor(i / heat.rows) * heat.cellW + heat.cellW / 2, (i % heat.rows) * heat.cellH + heat.cellH / 2];
  const a = 2, b = 14;
  const p1 = await pointOn(page, '#heat', ...cell(a));
  const p2 = await pointOn(page, '#heat', ...cell(b));
  await page.mouse.move(p1.x, p1.y);
  await page.mouse.down();
  await page.mouse.move((p1.x + p2.x) / 2, (p1.y + p2.y) / 2, { steps: 3 });
  await page.mouse.move(p2.x, p2.y, { steps: 3 });
  await page.mouse.up();
  const from = tl.start_ns + a * tl.bucket_ns, to = tl.start_ns + (b + 1) * tl.bucket_ns;
  await until(page, () => /from_ns=/.test(location.hash), null, 'drag sets a range');
  const hp = await hashParams(page);
  ok(+hp.from_ns === from && +hp.to_ns === to, 'drag selects ' + from + '..' + to + ': ' + hp.from_ns + '..' + hp.to_ns);
  ok(await page.evaluate(() => String(window.getSelection())) === '', 'the drag selected no text');
  await drawn(page, '#fg');
  const rangeTree = await api('profiles/' + aId + '/flamegraph?weight=period&from_ns=' + from + '&to_ns=' + to);
  checkFrames(await frames(page), rangeTree, 'time range');
  const inRange = tl.buckets.filter((x) => x.t_ns >= from && x.t_ns < to).reduce((s, x) => s + x.value, 0);
  ok(rangeTree.value === inRange && rangeTree.value < whole.value, 'range tree holds the range\'s samples: ' + rangeTree.value + ' of ' + whole.value);
  await shot(page, 'profile-range', '#heat');
  await page.click('#tl-clear');
  await untilParam(page, 'from_ns', '');

  /* the same range with the keyboard: arrows move the cell, Shift+arrows
   * extend, Enter selects */
  log('the heat map: keyboard');
  await drawn(page, '#fg');
  await page.focus('#heat');
  /* the first press shows the cursor on the first bucket, the next move it */
  for (let i = 0; i <= a; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.down('Shift');
  for (let i = a; i < b; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.up('Shift');
  await page.keyboard.press('Enter');
  await until(page, () => /from_ns=/.test(location.hash), null, 'Enter on the heat map sets a range');
  const kp = await hashParams(page);
  ok(+kp.from_ns === from && +kp.to_ns === to, 'keys select ' + from + '..' + to + ': ' + kp.from_ns + '..' + kp.to_ns);
  await drawn(page, '#fg');
  checkFrames(await frames(page), rangeTree, 'time range by keys');
  await page.keyboard.press('Escape');
  await untilParam(page, 'from_ns', '');

  /* ---- compare: pick B and T in the list ---- */
  log('compare');
  await nav(page, '#/');
  await until(page, (id) => !!document.querySelector('#profiles tr[data-id="' + id + '"]'), bId, 'list again');
  await page.click('#profiles tr[data-id="' + aId + '"] input[name=cmp-base]');
  await page.click('#profiles tr[data-id="' + bId + '"] input[name=cmp-target]');
  await until(page, () => location.hash.startsWith('#/compare'), null, 'picking B and T opens the comparison');
  const cp = await hashParams(page);
  ok(cp.base === aId && cp.target === bId, 'compare URL names base and target');
  await drawn(page, '#cmp-fg');
  const diffTree = await api('diff?base=' + aId + '&target=' + bId + '&weight=period');
  fr = await frames(page, 'compare');
  checkFrames(fr, diffTree, 'compare', { diff: true });
  const beta = fr.find((f) => f.name === 'beta_hot');
  ok(beta && beta.base === 0 && /^hsl\(0,/.test(beta.color), 'beta_hot (new in the target) drawn red: ' + (beta && beta.color));
  const reg = await page.$$eval('#cmp-regressions tbody tr', (trs) => trs.map((tr) => Array.from(tr.cells).map((c) => c.textContent)));
  ok(reg.length && reg[0][0] === 'beta_hot' && parseFloat(reg[0][3]) > 20, 'largest regression: beta_hot: ' + (reg[0] || []).join(' | '));
  const dvals = pathValues(diffTree);
  let diffDso = 0;
  for (const f of C.framesToHover(fr, 2)) {
    const q = await centre(page, 'compare', f);
    await page.mouse.move(q.x, q.y);
    await until(page, (n) => { const e = document.querySelector('#tooltip:not([hidden]) .fn'); return e && e.textContent === n; }, f.name, 'diff tooltip of ' + f.name);
    if (C.checkDiffTip(await tipLines(page), f, dvals, 'diff tooltip of ' + f.path)) diffDso++;
  }
  log('compare: diff tooltips = /diff, ' + diffDso + ' with the DSO');
  ok(diffDso >= 1, 'diff tooltips with the DSO /diff gives: ' + diffDso);
  await shot(page, 'compare', '#cmp-fg');
  /* a regression row, by keyboard: Tab to it, Enter searches its function */
  await page.focus('#cmp-regressions tbody tr:first-child');
  await page.keyboard.press('Enter');
  await untilParam(page, 'q', '/^beta_hot$/');
  await drawn(page, '#cmp-fg');
  fr = await frames(page, 'compare');
  ok(fr.some((f) => f.match) && fr.filter((f) => f.match).every((f) => f.name === 'beta_hot'), 'regression row highlights beta_hot');
  pt = await centre(page, 'compare', fr.find((f) => f.name === 'main'));
  await page.mouse.click(pt.x, pt.y);
  await until(page, () => /zoom=/.test(location.hash), null, 'a click zooms the diff');
  await drawn(page, '#cmp-fg');
  fr = await frames(page, 'compare');
  const zm = fr.find((f) => f.name === 'main' && !f.dim);
  ok(zm && zm.x === 0 && near(zm.w, fr.find((f) => f.path === '').w, 0.01), 'diff zoom: main fills the width');
  await shot(page, 'compare-zoom', '#cmp-fg');

  /* ---- a view's URL, opened in a new page, draws the same view ---- */
  log('a URL opened fresh');
  const hash = await page.evaluate(() => location.hash);
  const sig = (list) => JSON.stringify(list.map((f) => [f.path, f.base, f.target, f.x.toFixed(2), f.w.toFixed(2), f.y, f.dim, f.match, f.label]));
  const fresh = await browser.newPage();
  await fresh.setViewport(VIEWPORT);
  fresh.on('pageerror', (e) => pageErrors.push(String(e)));
  await fresh.goto(base + '/' + hash);
  await drawn(fresh, '#cmp-fg');
  ok(sig(await frames(fresh, 'compare')) === sig(fr), 'URL ' + hash + ' restores the same view');
  await fresh.close();

  ok(pageErrors.length === 0, 'no script errors in the page: ' + pageErrors.join('; '));
  log('ok: ' + stats.checks + ' checks in ' + version + '; ' + shotNo + ' screenshots in ' + shots);
}

C.runMain(main, 170, () => srv, () => browser);
