/* The page in a real browser: Debian's chromium, driven by playwright-core,
 * against a perfhubd started here, with recordings made here by
 * `perf record -g` of tests/web/hotspot (a warm-up phase, then alpha_hot()
 * or beta_hot()). Every expected value comes from perfhubd's API, read
 * here independently of the page's own model; what the page shows comes
 * from the DOM and from the canvases' test hook, window.PerfhubPage
 * (docs/web.md). It checks: the list (name, host, status, samples); the
 * flame graph's frames, labels and kinds against /flamegraph; the hover
 * tooltip; click zoom, breadcrumbs and reset; the keyboard; search and its
 * share; flame/icicle; weight; event, comm and thread filters; a drag on
 * the heat map against /flamegraph?from_ns&to_ns; the top table; compare
 * against /diff (the changed function leads the regressions); upload by
 * file picker (progress, live status) and by drag and drop (a corrupt
 * file, shown failed with the parser's message), delete; and that each
 * view's URL, opened in a fresh browser context, draws the same view.
 * Screenshots of every view go to tests/web-e2e.out/ in the build dir.
 * Usage: node tests/web-e2e.js PERFHUBD HOTSPOT CHROMIUM */
'use strict';
const path = require('path');
const fs = require('fs');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const bld = path.resolve(process.env.top_builddir || '.');
const { chromium } = require(path.join(top, 'tests', 'web', 'node_modules', 'playwright-core'));
const C = require(path.join(top, 'tests', 'web', 'e2e-common.js'));
const { ok, near, log, pathValues, kernelPaths, countNear, checkFrames, stats } = C;
const { tipLines, frames, canvasOf, hashParams, pointOn, centre } = C;

const [daemon, hotspot, browserPath] = process.argv.slice(2).map((p) => path.resolve(p));
const tmp = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-e2e');
const shots = path.join(bld, 'tests', 'web-e2e.out');
const corpus = path.join(process.env.PERFHUB_SHARED || path.join(top, '..', 'shared'), 'corpus', 'external');
const VIEWPORT = { width: 1280, height: 1000 };
const HIGHLIGHT = 'rgb(220,40,220)';

/* ---- the page -------------------------------------------------------------- */

/* waits until the canvas shows the current URL's state */
async function drawn(page, sel) {
  await page.waitForFunction((s) => {
    const c = document.querySelector(s);
    return c && c.dataset.hash === location.hash && !c.closest('[hidden]');
  }, sel, { timeout: 20000 });
  stats.checks++;
}

let shotNo = 0;
async function shot(page, name) {
  const file = path.join(shots, String(++shotNo).padStart(2, '0') + '-' + name + '.png');
  await page.screenshot({ path: file, fullPage: true });
  ok(fs.statSync(file).size > 5000, 'screenshot ' + name);
}

let srv = null, browser = null; /* ended on every way out */
let base = null, api = null;

async function main() {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });

  /* ---- recordings (same program, the hot function differs), perfhubd ---- */
  srv = await C.startServer({ daemon, hotspot, tmp, webRoot: path.join(top, 'web') });
  ({ base, api } = srv);
  const { aId, bId, aMeta } = srv;
  const waitReady = srv.waitReady;
  try {
    /* a launch has been seen to stall for minutes on a loaded machine:
     * give it 40 s, then one more try */
    const launchT = Date.now();
    for (let attempt = 1; !browser; attempt++) {
      try {
        browser = await chromium.launch({
          executablePath: browserPath, headless: true, timeout: 40000,
          args: typeof process.getuid === 'function' && process.getuid() === 0 ? ['--no-sandbox'] : [],
        });
      } catch (e) {
        if (attempt >= 2) throw e;
        log('chromium did not start (' + String(e.message).split('\n')[0] + '); again');
      }
    }
    log('chromium ' + browser.version() + ' started in ' + ((Date.now() - launchT) / 1000).toFixed(1) + ' s');
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text() + ' ' + JSON.stringify(m.location())); });
    page.on('response', (r) => { if (r.status() >= 400) pageErrors.push('HTTP ' + r.status() + ' ' + r.url()); });
    page.on('dialog', (d) => d.accept());

    /* ---- upload by file picker: name, tags, progress and live status.
     * The file is the corpus's largest recording, whose parse takes long
     * enough (a few hundred ms) for the page to see it queued or parsing. ---- */
    log('upload by file picker');
    await page.goto(base + '/');
    await page.waitForSelector('#profiles tbody tr[data-id]');
    const big = path.join(corpus, 'perfdataconverter-with-callchain.perf.data');
    if (fs.existsSync(big)) {
      await page.evaluate(() => {
        /* what the page showed over time, kept across hash navigation */
        window.seen = { progress: [], status: [] };
        const bar = document.querySelector('#upload-progress');
        new MutationObserver(() => window.seen.progress.push(+bar.value)).observe(bar, { attributes: true });
        const st = document.querySelector('#p-status');
        new MutationObserver(() => window.seen.status.push(st.textContent))
          .observe(st, { childList: true, subtree: true, characterData: true });
      });
      /* the profile's status as the server answered the page, in order:
       * what the page must have shown */
      const answered = [];
      const onMeta = (r) => {
        const m = /\/api\/v1\/profiles\/(\d+)$/.exec(new URL(r.url()).pathname);
        if (m && r.request().method() === 'GET' && r.ok()) answered.push(r.json().then((j) => [m[1], j.status]).catch(() => null));
      };
      page.on('response', onMeta);
      await page.fill('#upload-name', 'picked-upload');
      await page.fill('#upload-tags', 'via=picker, build=2');
      await page.setInputFiles('#file', big);
      await page.waitForFunction(() => /queued as \d+/.test(document.querySelector('#upload-status').textContent));
      const pickedId = /as (\d+)/.exec(await page.textContent('#upload-status'))[1];
      const pm = await api('profiles/' + pickedId);
      ok(pm.name === 'picked-upload' && pm.tags.via === 'picker' && pm.tags.build === '2', 'picked file uploaded with name and tags: ' + JSON.stringify(pm.tags));
      ok(pm.size === fs.statSync(big).size, 'uploaded size = file size');
      await page.waitForFunction((id) => location.hash === '#/profile/' + id, pickedId);
      await drawn(page, '#fg');
      const seen = await page.evaluate(() => window.seen);
      ok(seen.progress.length > 1 && seen.progress[seen.progress.length - 1] === 100, 'progress bar went to 100%: ' + seen.progress.slice(-5));
      page.off('response', onMeta);
      const states = [...new Set(seen.status.map((x) => x.split(/[ :(\u2026]/)[0]))];
      /* under load the parse may be done before the page first asks: then
       * the page goes from loading straight to ready, and says so because
       * the server said so; a parse it saw under way it shows live */
      const told = [...new Set((await Promise.all(answered)).filter((x) => x && x[0] === pickedId).map((x) => x[1]))];
      const live = told.some((x) => x === 'queued' || x === 'parsing');
      ok(told.length > 0 && told[told.length - 1] === 'ready', 'the server answered the page ' + told.join(' -> '));
      ok(states.filter((x) => x && x !== 'loading').join() === told.join() && states[states.length - 1] === 'ready' &&
        (!live || seen.status.some((x) => /updating live/.test(x))),
      'live status: ' + states.join(' -> ') + ' (the server answered ' + told.join(' -> ') + ')');
      log('upload by file picker: the page showed ' + states.join(' -> ') + ' (parse_ms ' + (await api('profiles/' + pickedId)).parse_ms + ')');
      await shot(page, 'profile-after-upload');
    } else {
      log('no ' + big + ': upload by file picker not tested');
    }

    /* ---- drag and drop: a corrupt file ---- */
    log('drag and drop: a corrupt file');
    await page.goto(base + '/#/');
    await page.waitForSelector('#profiles tbody tr[data-id]');
    const dt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File([new TextEncoder().encode('PERFILE2 this is not a recording')], 'corrupt.data', { type: 'application/octet-stream' }));
      return d;
    });
    await page.fill('#upload-name', '');
    await page.fill('#upload-tags', '');
    await page.dispatchEvent('#drop', 'dragover', { dataTransfer: dt });
    ok(await page.evaluate(() => document.querySelector('#drop').classList.contains('over')), 'drop zone marked while dragging over');
    await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
    await page.waitForFunction(() => /^#\/profile\/\d+$/.test(location.hash));
    const junkId = /(\d+)$/.exec(await page.evaluate(() => location.hash))[1];
    const junkMeta = await waitReady(junkId);
    ok(junkMeta.name === 'corrupt.data' && junkMeta.status === 'failed' && junkMeta.error, 'dropped file stored and failed: ' + junkMeta.error);
    await page.waitForFunction((e) => document.querySelector('#p-status').textContent.includes(e), junkMeta.error);
    stats.checks++;

    /* ---- the list ---- */
    log('the list');
    await page.goto(base + '/#/');
    const list = await api('profiles?limit=50');
    await page.waitForFunction((n) => document.querySelectorAll('#profiles tbody tr[data-id]').length === n, list.profiles.length);
    const rows = await page.$$eval('#profiles tbody tr[data-id]', (trs) => trs.map((tr) => ({
      id: tr.dataset.id, cells: Array.from(tr.cells).map((c) => c.textContent.trim()),
    })));
    ok(rows.map((r) => r.id).join() === list.profiles.map((p) => String(p.id)).join(), 'list rows in the API\'s order');
    for (let i = 0; i < rows.length; i++) {
      const p = list.profiles[i], c = rows[i].cells;
      ok(c[0] === (p.name || String(p.id)), 'list name ' + c[0]);
      ok(c[1] === ((p.header && p.header.hostname) || p.hostname || ''), 'list host of ' + p.name + ': ' + c[1]);
      ok(c[3].startsWith(p.status) && (p.status !== 'failed' || c[3].includes(p.error)), 'list status of ' + p.name + ': ' + c[3]);
      if (typeof p.samples === 'number') ok(countNear(c[4], p.samples), 'list samples of ' + p.name + ': ' + c[4] + ' vs ' + p.samples);
      for (const [k, v] of Object.entries(p.tags || {})) ok(c[6].includes(k + '=' + v), 'list tag ' + k + '=' + v);
    }
    await shot(page, 'list');
    /* delete the corrupt one */
    log('delete the corrupt one');
    await page.click('#profiles tr[data-id="' + junkId + '"] button[aria-label^="delete"]');
    await page.waitForFunction((id) => !document.querySelector('#profiles tr[data-id="' + id + '"]'), junkId);
    ok((await fetch(base + '/api/v1/profiles/' + junkId)).status === 404, 'deleted profile gone from the API');
    /* the list's search filter, and its URL */
    log('the list\'s search filter, and its URL');
    await page.fill('#list-filter input[name=q]', 'hot-');
    await page.click('#list-filter button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#profiles tbody tr[data-id]').length === 2);
    const listUrl = await page.evaluate(() => location.hash);
    ok(/q=hot-/.test(listUrl), 'list filter in the URL');
    const listRows = await page.$$eval('#profiles tbody tr[data-id]', (trs) => trs.map((tr) => tr.dataset.id).join());
    ok(listRows === [bId, aId].join(), 'filtered list: the two recordings');

    /* ---- a profile: frames = the API's tree ---- */
    log('a profile: frames = the API\'s tree');
    const restore = []; /* [hash, which, frames] to open fresh at the end */
    await page.goto(base + '/#/profile/' + aId);
    await drawn(page, '#fg');
    const whole = await api('profiles/' + aId + '/flamegraph?weight=period');
    let fr = await frames(page);
    const wide = checkFrames(fr, whole, 'profile');
    ok(fr.find((f) => f.path === '').w > 1000, 'root frame spans the canvas');
    ok((await page.textContent('#p-header')).includes(aMeta.header.hostname), 'header shows the host');
    /* kinds and colours: kernel frames as the API's kernel=1 marks say */
    log('kinds and colours: kernel frames as the API\'s ker');
    const kset = kernelPaths(await api('profiles/' + aId + '/flamegraph?weight=samples&kernel=1'));
    const hue = (c) => { const m = /^hsl\((-?\d+),(\d+)%/.exec(c); return m ? [+m[1], +m[2]] : null; };
    let nk = 0, nu = 0;
    for (const f of fr) {
      if (f.depth < 2) { ok(f.kind === (f.depth ? 'comm' : 'root'), 'kind of ' + f.path); continue; }
      const h = hue(f.color);
      if (kset.has(f.path)) {
        nk++;
        ok(f.kind === 'kernel' && h[0] >= 175 && h[0] <= 200, 'kernel frame ' + f.path + ' aqua: ' + f.color);
      } else if (/^\[.*\]$/.test(f.name)) {
        ok(f.kind === 'unresolved' && h[1] === 0, 'unresolved frame ' + f.path + ' grey: ' + f.color);
      } else {
        nu++;
        ok(f.kind === 'user' && h[0] >= 0 && h[0] <= 50, 'user frame ' + f.path + ' red to yellow: ' + f.color);
      }
    }
    ok(nu > 3, 'user frames seen (' + nu + '), kernel frames ' + nk);
    log('profile: ' + fr.length + ' frames drawn, ' + wide + ' API nodes >= 1 px, all equal; ' + nk + ' kernel, ' + nu + ' user');
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);
    await shot(page, 'profile');

    /* the top table = /top */
    log('the top table = /top');
    const topApi = (await api('profiles/' + aId + '/top?weight=period&limit=500')).functions;
    const topRows = await page.$$eval('#top tbody tr', (trs) => trs.slice(0, 5).map((tr) => Array.from(tr.cells).map((c) => c.textContent)));
    for (let i = 0; i < Math.min(5, topApi.length); i++) {
      ok(topRows[i][0] === topApi[i].name && countNear(topRows[i][1], topApi[i].self) && countNear(topRows[i][3], topApi[i].total),
        'top row ' + i + ': ' + topRows[i].join(' | ') + ' = API ' + JSON.stringify(topApi[i]));
    }

    /* hover: name, kind, samples, self, share of all and of the parent */
    log('hover: name, kind, samples, self, share of all and');
    const vals = pathValues(whole);
    /* the widest frame at depth >= 3, one with a few frames above it first, so that a
     * zoom into it has something to show */
    const above = (f) => fr.filter((g) => g.path.startsWith(f.path + ';')).length;
    const hot = fr.filter((f) => f.depth >= 3 && f.w > 60)
      .sort((a, b) => (above(b) >= 3) - (above(a) >= 3) || b.w - a.w)[0];
    ok(hot, 'a wide frame at depth >= 3');
    let pt = await centre(page, 'profile', hot);
    await page.mouse.move(pt.x, pt.y);
    await page.waitForSelector('#tooltip:not([hidden])');
    const parentPath = hot.path.split(';').slice(0, -1).join(';');
    /* more frames, kernel and user: each tooltip names the DSO the API
     * gives that node */
    const hovered = C.framesToHover(fr, 3, [hot.name]);
    let withDso = C.checkTip(await tipLines(page), hot, vals, 'period', 'tooltip') ? 1 : 0;
    for (const f of hovered) {
      const q = await centre(page, 'profile', f);
      await page.mouse.move(q.x, q.y);
      await page.waitForFunction((n) => { const e = document.querySelector('#tooltip .fn'); return e && e.textContent === n; }, f.name);
      if (C.checkTip(await tipLines(page), f, vals, 'period', 'tooltip of ' + f.path)) withDso++;
    }
    log('hover: ' + (hovered.length + 1) + ' tooltips = the API, ' + withDso + ' with the DSO the API gives');
    /* perfhubd names the DSO of every resolved frame of this recording */
    ok(withDso >= 3, 'tooltips with the DSO /flamegraph gives: ' + withDso + ' of ' + (hovered.length + 1));
    pt = await centre(page, 'profile', hot);
    await page.mouse.move(pt.x, pt.y);
    await page.waitForFunction((n) => document.querySelector('#tooltip .fn').textContent === n, hot.name);

    /* click zooms: the frame fills the width, breadcrumbs name the path */
    log('click zooms: the frame fills the width, breadcrumb');
    await page.mouse.click(pt.x, pt.y);
    await page.waitForFunction((p) => new URLSearchParams(location.hash.split('?')[1]).get('zoom') === p, hot.path);
    await drawn(page, '#fg');
    fr = await frames(page);
    const z = fr.find((f) => f.path === hot.path);
    ok(z && z.x === 0 && near(z.w, fr.find((f) => f.path === '').w, 0.01) && !z.dim, 'zoomed frame fills the width');
    ok(fr.filter((f) => f.depth < hot.depth).every((f) => f.dim && f.w === z.w), 'its ancestors span the width, dimmed');
    /* the frame and what it calls: as many as the API's subtree has, up
     * to the usual four, at least 1 px wide (a short recording may have fewer) */
    const below = C.wideUnder(whole, hot.path, fr.find((f) => f.path === '').w);
    checkFrames(fr.filter((f) => !f.dim), whole, 'zoomed', { focus: hot.path, minFrames: Math.min(4, below) });
    const crumbs = await page.$$eval('#crumbs a, #crumbs strong', (es) => es.map((e) => e.textContent));
    ok(crumbs.join(';') === 'all;' + hot.path, 'breadcrumbs ' + crumbs.join(' > '));
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);
    await shot(page, 'profile-zoom');
    /* a breadcrumb zooms out one level; reset goes back to the whole */
    log('a breadcrumb zooms out one level; reset goes back ');
    await page.click('#crumbs a:last-of-type');
    await page.waitForFunction((p) => new URLSearchParams(location.hash.split('?')[1]).get('zoom') === p, parentPath);
    await page.click('#fg-reset');
    await page.waitForFunction(() => !new URLSearchParams(location.hash.split('?')[1]).get('zoom'));
    await drawn(page, '#fg');
    fr = await frames(page);
    ok(fr.every((f) => !f.dim) && near(fr.find((f) => f.path === hot.path).w, hot.w, 0.01), 'reset: whole graph again');

    /* keyboard: arrows select (tooltip follows), Enter zooms, Escape resets, / searches */
    log('keyboard: arrows select (tooltip follows), Enter z');
    await page.focus('#fg');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    fr = await frames(page);
    const sel = fr.find((f) => f.selected);
    const rootKids = whole.children.slice().sort((a, b) => b.value - a.value);
    const kid2 = rootKids[0].children.slice().sort((a, b) => b.value - a.value)[0];
    ok(sel && sel.path === rootKids[0].name + ';' + kid2.name, 'ArrowUp twice selects the largest callee path: ' + (sel && sel.path));
    ok(!(await page.$('#tooltip[hidden]')) && (await page.textContent('#tooltip')).startsWith(sel.name), 'tooltip follows the selection');
    await page.keyboard.press('Enter');
    await page.waitForFunction((p) => new URLSearchParams(location.hash.split('?')[1]).get('zoom') === p, sel.path);
    await drawn(page, '#fg');
    await page.focus('#fg');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !new URLSearchParams(location.hash.split('?')[1]).get('zoom'));
    await page.keyboard.press('/');
    ok(await page.evaluate(() => document.activeElement.id === 'fg-search'), '/ focuses the search box');

    /* search: matching frames magenta, share = the API tree's */
    log('search: matching frames magenta, share = the API t');
    const term = '_HOT'; /* case-insensitive substring: alpha_hot */
    await page.keyboard.type(term);
    await page.waitForFunction((t) => new URLSearchParams(location.hash.split('?')[1]).get('q') === t, term);
    await drawn(page, '#fg');
    fr = await frames(page);
    for (const f of fr) {
      const want = f.depth >= 1 && f.name.toLowerCase().includes(term.toLowerCase());
      ok(f.match === want && (f.color === HIGHLIGHT) === want, 'search marks ' + f.path + ': ' + f.match);
    }
    /* the share: each sample once, the outermost matches */
    log('the share: each sample once, the outermost matches');
    let matched = 0;
    for (const [p, v] of vals) {
      if (!p) continue;
      const parts = p.split(';');
      const i = parts.findIndex((n) => n.toLowerCase().includes(term.toLowerCase()));
      if (i === parts.length - 1) matched += v.value;
    }
    const share = (100 * matched) / vals.get('').value;
    const mt = await page.textContent('#fg-match');
    const ms = /matched (\d+) frames, ([\d.]+)% of all/.exec(mt);
    ok(ms && near(+ms[2], share, 0.051), 'search share ' + mt + ' = ' + share.toFixed(2) + '%');
    ok(share > 20, 'hot frames are a large share');
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);
    await shot(page, 'profile-search');
    await page.fill('#fg-search', '');
    await page.waitForFunction(() => !new URLSearchParams(location.hash.split('?')[1]).get('q'));

    /* a top-table row highlights its function */
    log('a top-table row highlights its function');
    const topName = topApi[0].name;
    await page.click('#top tbody tr:first-child');
    await page.waitForFunction(() => /^\/\^/.test(new URLSearchParams(location.hash.split('?')[1]).get('q') || ''));
    await drawn(page, '#fg');
    fr = await frames(page);
    ok(fr.some((f) => f.match) && fr.every((f) => f.match === (f.depth >= 1 && f.name === topName)), 'top row highlights exactly ' + topName);
    await page.click('#fg-reset');
    await page.waitForFunction(() => !new URLSearchParams(location.hash.split('?')[1]).get('q'));

    /* icicle: the root on top; flame: at the bottom */
    log('icicle: the root on top; flame: at the bottom');
    await drawn(page, '#fg');
    fr = await frames(page);
    const maxY = Math.max(...fr.map((f) => f.y));
    ok(fr.find((f) => f.path === '').y === maxY, 'flame: root at the bottom');
    await page.selectOption('#fg-filter select[name=layout]', 'icicle');
    await page.waitForFunction(() => /layout=icicle/.test(location.hash));
    await drawn(page, '#fg');
    fr = await frames(page);
    ok(fr.find((f) => f.path === '').y === Math.min(...fr.map((f) => f.y)) && fr.every((f) => f.y === 2 + 17 * f.depth), 'icicle: root on top, depth downwards');
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);
    await shot(page, 'profile-icicle');
    await page.selectOption('#fg-filter select[name=layout]', 'flame');

    /* weight by samples (the default is the period) */
    log('weight by samples');
    await page.selectOption('#fg-filter select[name=weight]', 'samples');
    await page.waitForFunction(() => /weight=samples/.test(location.hash));
    await drawn(page, '#fg');
    fr = await frames(page);
    checkFrames(fr, await api('profiles/' + aId + '/flamegraph?weight=samples'), 'samples');
    pt = await centre(page, 'profile', fr.find((f) => f.path === hot.path));
    await page.mouse.move(pt.x, pt.y);
    ok(/ samples, self /.test(await page.textContent('#tooltip')), 'tooltip says samples');
    await page.selectOption('#fg-filter select[name=weight]', 'period');
    await page.waitForFunction(() => /weight=period/.test(location.hash));

    /* event filter: the second event */
    log('event filter: the second event');
    const evs = aMeta.events.filter((e) => aMeta.samples_per_event[e.name] > 0).map((e) => e.name);
    ok(evs.length === 2, 'two events with samples: ' + evs);
    const evOpts = await page.$$eval('#fg-filter select[name=event] option', (os) => os.map((o) => o.value));
    ok(evOpts.join() === [''].concat(evs).join(), 'event choices = the server\'s default and the API\'s events: ' + evOpts);
    await page.selectOption('#fg-filter select[name=event]', evs[1]);
    await page.waitForFunction((e) => new URLSearchParams(location.hash.split('?')[1]).get('event') === e, evs[1]);
    await drawn(page, '#fg');
    const evTree = await api('profiles/' + aId + '/flamegraph?weight=period&event=' + encodeURIComponent(evs[1]));
    checkFrames(await frames(page), evTree, 'event ' + evs[1]);
    const evSamples = await api('profiles/' + aId + '/flamegraph?weight=samples&event=' + encodeURIComponent(evs[1]));
    ok(evSamples.value === aMeta.samples_per_event[evs[1]], 'second event tree holds its samples');

    /* comm filter through the form */
    log('comm filter through the form');
    await page.goto(base + '/#/profile/' + aId);
    await drawn(page, '#fg');
    await page.fill('#fg-filter input[name=comm]', 'hotspot');
    await page.click('#fg-filter button[type=submit]');
    await page.waitForFunction(() => /comm=hotspot/.test(location.hash));
    await drawn(page, '#fg');
    fr = await frames(page);
    const cq = await hashParams(page);
    ok(cq.comm === 'hotspot' && !cq.event && cq.weight === 'period' && !cq.pid && !cq.tid,
      'the form asks for comm=hotspot and nothing else: ' + JSON.stringify(cq));
    checkFrames(fr, await api('profiles/' + aId + '/flamegraph?weight=period&comm=hotspot'), 'comm filter');
    ok(fr.filter((f) => f.depth === 1).every((f) => f.name === 'hotspot'), 'comm filter: only hotspot');

    /* a thread row filters by pid and tid */
    log('a thread row filters by pid and tid');
    await page.goto(base + '/#/profile/' + aId);
    await drawn(page, '#fg');
    const threads = (await api('profiles/' + aId + '/threads')).threads;
    const th = threads.slice().sort((a, b) => b.samples - a.samples)[0];
    await page.click('#p-threads-box summary');
    await page.click('#p-threads tbody tr:first-child');
    await page.waitForFunction((t) => {
      const q = new URLSearchParams(location.hash.split('?')[1]);
      return q.get('pid') === String(t.pid) && q.get('tid') === String(t.tid);
    }, th);
    await drawn(page, '#fg');
    fr = await frames(page);
    const thTree = await api('profiles/' + aId + '/flamegraph?weight=period&pid=' + th.pid + '&tid=' + th.tid);
    checkFrames(fr, thTree, 'thread filter');
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);

    /* ---- the heat map: drag over the first 0.3 s ---- */
    log('the heat map: drag over the first 0.3 s');
    await page.goto(base + '/#/profile/' + aId);
    await drawn(page, '#fg');
    await drawn(page, '#heat');
    const heat = await page.evaluate(() => window.PerfhubPage.heat());
    const tl = await api('profiles/' + aId + '/timeline?bucket_ms=20');
    ok(heat.startNs === tl.start_ns && heat.bucketNs === tl.bucket_ns && heat.rows === 1e9 / tl.bucket_ns, 'heat map grid from /timeline');
    for (const b of tl.buckets) ok(heat.counts[Math.round((b.t_ns - tl.start_ns) / tl.bucket_ns)] === b.value, 'heat cell at ' + b.t_ns);
    const cell = (i) => [Math.floor(i / heat.rows) * heat.cellW + heat.cellW / 2, (i % heat.rows) * heat.cellH + heat.cellH / 2];
    const a = 2, b = 14; /* 40..300 ms: the warm-up phase */
    const p1 = await pointOn(page, '#heat', ...cell(a));
    const p2 = await pointOn(page, '#heat', ...cell(b));
    await page.mouse.move(p1.x, p1.y);
    await page.mouse.down();
    await page.mouse.move((p1.x + p2.x) / 2, (p1.y + p2.y) / 2, { steps: 3 });
    await page.mouse.move(p2.x, p2.y, { steps: 3 });
    await page.mouse.up();
    const from = tl.start_ns + a * tl.bucket_ns, to = tl.start_ns + (b + 1) * tl.bucket_ns;
    await page.waitForFunction(() => /from_ns=/.test(location.hash));
    const hp = await hashParams(page);
    ok(+hp.from_ns === from && +hp.to_ns === to, 'drag selects ' + from + '..' + to + ': ' + hp.from_ns + '..' + hp.to_ns);
    await drawn(page, '#fg');
    fr = await frames(page);
    const rangeTree = await api('profiles/' + aId + '/flamegraph?weight=period&from_ns=' + from + '&to_ns=' + to);
    checkFrames(fr, rangeTree, 'time range');
    const inRange = tl.buckets.filter((x) => x.t_ns >= from && x.t_ns < to).reduce((s, x) => s + x.value, 0);
    ok(rangeTree.value === inRange && rangeTree.value < whole.value, 'range tree holds the range\'s samples: ' + rangeTree.value + ' of ' + whole.value);
    ok((await page.textContent('#tl-info')).includes('selected'), 'the range is named above the heat map');
    restore.push([await page.evaluate(() => location.hash), 'profile', fr]);
    await shot(page, 'profile-range');
    await page.click('#tl-clear');
    await page.waitForFunction(() => !/from_ns=/.test(location.hash));

    /* ---- compare: pick B and T in the list ---- */
    log('compare: pick B and T in the list');
    await page.goto(base + '/#/');
    await page.waitForSelector('#profiles tr[data-id="' + bId + '"]');
    await page.check('#profiles tr[data-id="' + aId + '"] input[name=cmp-base]');
    await page.check('#profiles tr[data-id="' + bId + '"] input[name=cmp-target]');
    await page.waitForFunction(() => location.hash.startsWith('#/compare'));
    const cp = await hashParams(page);
    ok(cp.base === aId && cp.target === bId, 'compare URL names base and target');
    await drawn(page, '#cmp-fg');
    const diffTree = await api('diff?base=' + aId + '&target=' + bId + '&weight=period');
    fr = await frames(page, 'compare');
    checkFrames(fr, diffTree, 'compare', { diff: true });
    const beta = fr.find((f) => f.name === 'beta_hot'), alpha = fr.find((f) => f.name === 'alpha_hot');
    ok(beta && beta.base === 0 && /^hsl\(0,/.test(beta.color), 'beta_hot (new in the target) drawn red: ' + (beta && beta.color));
    ok(!alpha || (alpha.target === 0 && /^hsl\(220,/.test(alpha.color)), 'alpha_hot (gone in the target) blue');
    const reg = await page.$$eval('#cmp-regressions tbody tr', (trs) => trs.map((tr) => Array.from(tr.cells).map((c) => c.textContent)));
    ok(reg.length && reg[0][0] === 'beta_hot' && parseFloat(reg[0][3]) > 20, 'largest regression: beta_hot: ' + (reg[0] || []).join(' | '));
    const alphaRow = reg.find((r) => r[0] === 'alpha_hot');
    ok(!alphaRow || parseFloat(alphaRow[3]) < 0, 'alpha_hot shrank');
    /* hover in the diff: base and target counts, the DSO /diff gives */
    const dvals = pathValues(diffTree);
    let diffDso = 0;
    for (const f of C.framesToHover(fr, 2)) {
      const q = await centre(page, 'compare', f);
      await page.mouse.move(q.x, q.y);
      await page.waitForFunction((n) => { const e = document.querySelector('#tooltip .fn'); return e && e.textContent === n; }, f.name);
      if (C.checkDiffTip(await tipLines(page), f, dvals, 'diff tooltip of ' + f.path)) diffDso++;
    }
    log('compare: diff tooltips = /diff, ' + diffDso + ' with the DSO');
    ok(diffDso >= 1, 'diff tooltips with the DSO /diff gives: ' + diffDso);
    /* its share in the target, from /diff */
    log('its share in the target, from /diff');
    let betaSelf = 0;
    (function walk(n) { for (const k of n.children || []) { if (k.name === 'beta_hot') betaSelf += k.target - (k.children || []).reduce((s, c) => s + c.target, 0); walk(k); } })(diffTree);
    ok(near(parseFloat(reg[0][2]), (100 * betaSelf) / diffTree.target, 0.051), 'beta_hot target self % = /diff: ' + reg[0][2]);
    restore.push([await page.evaluate(() => location.hash), 'compare', fr]);
    await shot(page, 'compare');
    /* a regression row searches its function; zoom in the diff */
    log('a regression row searches its function; zoom in th');
    await page.click('#cmp-regressions tbody tr:first-child');
    await page.waitForFunction(() => /q=/.test(location.hash));
    await drawn(page, '#cmp-fg');
    fr = await frames(page, 'compare');
    ok(fr.filter((f) => f.match).every((f) => f.name === 'beta_hot') && fr.some((f) => f.match), 'regression row highlights beta_hot');
    pt = await centre(page, 'compare', fr.find((f) => f.name === 'main'));
    await page.mouse.click(pt.x, pt.y);
    await page.waitForFunction(() => /zoom=/.test(location.hash));
    await drawn(page, '#cmp-fg');
    fr = await frames(page, 'compare');
    const zm = fr.find((f) => f.name === 'main' && !f.dim);
    ok(zm && zm.x === 0 && near(zm.w, fr.find((f) => f.path === '').w, 0.01), 'diff zoom: main fills the width');
    restore.push([await page.evaluate(() => location.hash), 'compare', fr]);
    await shot(page, 'compare-zoom');

    /* ---- deep stacks: a 128-frame chain is a graph taller than the
     * page; its box scrolls and opens at the root, where the samples are ---- */
    log('deep stacks');
    const deepFile = path.join(tmp, 'deep.data');
    require('child_process').execFileSync('perf', ['record', '-q', '-g', '-o', deepFile, '--', hotspot, 'deep', '400'],
      { stdio: 'ignore', timeout: 120000 });
    const deepId = await srv.post(deepFile, '?name=deep-stacks');
    await waitReady(deepId);
    await page.goto(base + '/#/profile/' + deepId);
    await drawn(page, '#fg');
    const deep = await page.evaluate(() => {
      const c = document.querySelector('#fg'), box = c.parentElement;
      const fr = window.PerfhubPage.frames(), root = fr.find((f) => f.path === '');
      return { canvasH: c.getBoundingClientRect().height, boxH: box.clientHeight, top: box.scrollTop,
        rootY: root.y, rootH: root.h, depth: Math.max(...fr.map((f) => f.depth)), vh: window.innerHeight };
    });
    ok(deep.depth >= 128, 'a deep stack: ' + deep.depth + ' frames');
    ok(deep.canvasH > 2000 && deep.boxH < deep.canvasH && deep.boxH <= 0.75 * deep.vh,
      'the graph box is capped: ' + deep.boxH + ' px of a ' + deep.canvasH + ' px graph');
    ok(deep.rootY >= deep.top && deep.rootY + deep.rootH <= deep.top + deep.boxH,
      'it opens at the root: root at ' + deep.rootY + ', box shows ' + deep.top + '..' + (deep.top + deep.boxH));
    await shot(page, 'deep-stacks');

    ok(pageErrors.length === 0, 'no script errors in the page: ' + pageErrors.join('; '));

    /* ---- every URL, opened fresh, draws the same view ---- */
    log('every URL, opened fresh, draws the same view');
    const sig = (list) => JSON.stringify(list.map((f) => [f.path, f.value, f.base, f.target, f.x.toFixed(2), f.w.toFixed(2), f.y, f.dim, f.match, f.label, f.color]));
    /* a new page (a new document, nothing of the old one's state) in
     * a context of its own, apart from the one that made the URLs */
    const fresh = await browser.newContext({ viewport: VIEWPORT });
    const freshPage = async () => {
      const pg = await fresh.newPage();
      pg.on('pageerror', (e) => pageErrors.push(String(e)));
      return pg;
    };
    const p2page = await freshPage();
    await p2page.goto(base + '/' + listUrl);
    await p2page.waitForFunction((n) => document.querySelectorAll('#profiles tbody tr[data-id]').length === n, 2);
    ok((await p2page.$$eval('#profiles tbody tr[data-id]', (trs) => trs.map((tr) => tr.dataset.id).join())) === listRows &&
      (await p2page.inputValue('#list-filter input[name=q]')) === 'hot-', 'list URL restores the filtered list');
    await shot(p2page, 'restored-list');
    /* all at once: each on its own page */
    await Promise.all(restore.map(async ([hash, which, want]) => {
      const pg = await freshPage();
      await pg.goto(base + '/' + hash);
      await drawn(pg, canvasOf(which));
      const got = await frames(pg, which);
      ok(sig(got) === sig(want), 'URL ' + hash + ' restores the same ' + which + ' view (' + got.length + ' frames)');
      const q = new URLSearchParams(hash.split('?')[1] || '');
      if (which === 'profile') {
        ok((await pg.inputValue('#fg-search')) === (q.get('q') || ''), 'search box restored');
        ok((await pg.inputValue('#fg-filter select[name=layout]')) === (q.get('layout') || 'flame'), 'layout restored');
        if (q.get('zoom')) ok((await pg.$$eval('#crumbs a, #crumbs strong', (es) => es.map((e) => e.textContent).join(';'))) === 'all;' + q.get('zoom'), 'breadcrumbs restored');
        if (q.get('from_ns')) {
          const h2 = await pg.evaluate(() => window.PerfhubPage.heat());
          ok(h2.selected[0] === a && h2.selected[1] === b, 'heat-map selection restored: ' + h2.selected);
        }
      } else {
        ok((await pg.inputValue('#cmp-form select[name=base]')) === aId && (await pg.inputValue('#cmp-form select[name=target]')) === bId, 'compare choices restored');
        await shot(pg, 'restored-compare' + (q.get('zoom') ? '-zoom' : ''));
      }
      await pg.close();
    }));
    ok(pageErrors.length === 0, 'no script errors in the fresh pages: ' + pageErrors.join('; '));
    await fresh.close();
    await ctx.close();
    log('ok: ' + stats.checks + ' checks in chromium ' + browser.version() + '; ' + shotNo + ' screenshots in ' + shots);
  } finally {
    if (browser) await browser.close().catch(() => {});
    srv.stop();
  }
}

C.runMain(main, 150, () => srv, () => browser);
