/* The browser checks of the page's views of many recordings and the
 * deeper views of one, the same in Chromium and Firefox (run by
 * tests/web-e2e-views.js, through what playwright and puppeteer pages
 * both have: goto, evaluate, $$eval, click, mouse). Every expected value
 * comes from perfhubd's API: a selector in the list box lists what
 * /profiles?q= lists; the trend chart's points are /series' and a click
 * on one opens that run; a frame of the merged graph picks its function;
 * the compare view with selectors shows /diff's ranked rows and its tree;
 * the off-CPU toggle's flame graphs are /flamegraph?weight=offcpu and
 * wall; the callers and callees from a frame click and from a /top row
 * are /sandwich's trees; the annotate view's lines and instructions are
 * /annotate's; the trend and sandwich URLs opened in a new page draw the
 * same. It waits for states (the URL, a canvas's data-hash), never for
 * a fixed time. */
'use strict';
const C = require('./e2e-common.js');
const { ok, log, until, checkFrames, frames, hashParams, centre } = C;

const enc = encodeURIComponent;

/* the canvas (or chart) shows the current URL's state */
const drawn = (page, sel) => until(page, (s) => {
  const c = document.querySelector(s);
  return c && c.dataset.hash === location.hash && !c.closest('[hidden]');
}, sel, sel + ' drawn for the URL');
/* the trend chart once the merged graph below it is drawn (the page's
 * height, so its scrollbar, settled) and the chart fills its box */
const settledTrend = async (page) => {
  await drawn(page, '#tr-chart');
  await until(page, () => window.PerfhubPage.frames('trend').length > 0, null, 'the merged graph drawn');
  return until(page, () => {
    const svg = document.querySelector('#tr-chart');
    const g = window.PerfhubPage.trend();
    return g && Number(svg.getAttribute('width')) === svg.parentElement.clientWidth ? g : null;
  }, null, 'the chart at its box\'s width');
};
const untilParam = (page, k, want) => until(page, ([key, w]) => (new URLSearchParams(location.hash.split('?')[1] || '').get(key) || '') === w,
  [k, want], 'URL has ' + k + '=' + want);
const untilHash = (page, re) => until(page, (s) => new RegExp(s).test(location.hash), re.source, 'URL matches ' + re);
/* in-page navigation, as a click on a link gives */
const nav = (page, hash) => page.evaluate((h) => { location.hash = h; }, hash);
/* a text box's value, as typing leaves it */
const fill = (page, sel, v) => page.evaluate(([s, x]) => {
  const e = document.querySelector(s);
  e.value = x;
  e.dispatchEvent(new Event('input', { bubbles: true }));
}, [sel, v]);
const cells = (page, sel) => page.$$eval(sel, (trs) => trs.map((tr) => Array.from(tr.cells).map((c) => c.textContent)));
const listIds = (page) => page.$$eval('#profiles tbody tr[data-id]', (trs) => trs.map((tr) => tr.dataset.id).join());
/* a click on an element's middle, scrolled into view, with the mouse */
async function clickOn(page, sel) {
  const p = await page.evaluate((s) => {
    const e = document.querySelector(s);
    e.scrollIntoView({ block: 'center' });
    const b = e.getBoundingClientRect();
    return { x: b.left + b.width / 2, y: b.top + b.height / 2 };
  }, sel);
  await page.mouse.click(p.x, p.y);
}
/* a /top row's link (to-sandwich, to-annotate) of one function */
const topLink = (page, fn, cls) => page.evaluate(([f, c]) => {
  const tr = Array.from(document.querySelectorAll('#top tbody tr')).find((r) => r.cells[0].textContent === f);
  return tr ? tr.querySelector('a.' + c).getAttribute('href') : null;
}, [fn, cls]);

const pct = (v) => v.toFixed(2) + '%';
const pts = (v) => (v >= 0 ? '+' : '') + v.toFixed(2) + ' pts';

async function listAndTrend(page, srv, ids, shot) {
  /* ---- a selector in the list box ---- */
  log('the list: a selector filters it as /profiles?q= does');
  await page.goto(srv.base + '/#/');
  await until(page, (n) => document.querySelectorAll('#profiles tbody tr[data-id]').length === n, Object.keys(ids).length, 'the list');
  for (const sel of ['{build="slow"}', '{build=~"fast|slow", name!="fast2"}']) {
    await fill(page, '#list-filter input[name=sel]', sel);
    await page.click('#list-filter button[type=submit]');
    const want = (await srv.api('profiles?limit=50&q=' + enc(sel))).profiles.map((p) => String(p.id)).join();
    await until(page, (w) => Array.from(document.querySelectorAll('#profiles tbody tr[data-id]')).map((tr) => tr.dataset.id).join() === w,
      want, 'the list for ' + sel + ' = /profiles?q=: ' + want);
    ok((await hashParams(page)).sel === sel, 'the selector in the URL');
  }
  ok((await listIds(page)).split(',').length === 5, 'five runs picked');
  await shot(page, 'list-selector');
  const sel = '{build=~"fast|slow"}';
  await fill(page, '#list-filter input[name=sel]', sel);
  await page.click('#list-filter button[type=submit]');
  await until(page, () => document.querySelectorAll('#profiles tbody tr[data-id]').length === 6, null, 'the six runs');

  /* ---- its trend: a function typed, the chart = /series ---- */
  log('trend: the chart = /series, a point opens its run');
  await page.click('#list-sel-links a[href^="#/trend"]');
  await untilHash(page, /^#\/trend\?/);
  ok((await hashParams(page)).sel === sel, 'the trend link keeps the selector');
  await fill(page, '#tr-form input[name=name]', 'hash_rows');
  await page.click('#tr-form button[type=submit]');
  await untilParam(page, 'function', 'hash_rows');
  await drawn(page, '#tr-chart');
  const series = await srv.api('series?function=hash_rows&metric=self_share&q=' + enc(sel));
  const g = await page.evaluate(() => window.PerfhubPage.trend());
  ok(g.series.length === 1 && g.series[0].points.length === 6 && series.points.length === 6, 'a point per run');
  g.series[0].points.forEach((p, i) => {
    const a = series.points[i];
    ok(p.id === String(a.id) && p.value === a.value, 'point ' + i + ' = /series: ' + p.id + ' ' + p.value + ' vs ' + a.id + ' ' + a.value);
  });
  /* the circles where the chart says, as the browser lays them out */
  const placed = await page.evaluate(() => {
    const svg = document.querySelector('#tr-chart').getBoundingClientRect();
    return Array.from(document.querySelectorAll('#tr-chart circle.pt')).map((c) => {
      const b = c.getBoundingClientRect();
      return { id: c.dataset.id, x: b.left + b.width / 2 - svg.left, y: b.top + b.height / 2 - svg.top };
    });
  });
  g.series[0].points.forEach((p, i) => ok(placed[i].id === p.id && C.near(placed[i].x, p.x, 1) && C.near(placed[i].y, p.y, 1),
    'circle ' + p.id + ' drawn at ' + p.x.toFixed(1) + ',' + p.y.toFixed(1)));
  const val = (name) => series.points.find((p) => p.name === name).value;
  ok(Math.min(val('slow1'), val('slow2'), val('slow3')) > Math.max(val('fast1'), val('fast2'), val('fast3')) + 15, 'the regression shows: slow runs higher');
  await shot(page, 'trend');
  /* a click on the point of slow2 opens that run, hash_rows marked */
  await clickOn(page, '#tr-chart circle.pt[data-id="' + ids.slow2 + '"]');
  await untilHash(page, new RegExp('^#/profile/' + ids.slow2 + '\\?'));
  ok((await hashParams(page)).q === '/^hash_rows$/', 'the run opens with the function marked');
  await drawn(page, '#fg');
  const fr = await frames(page);
  ok(fr.some((f) => f.match) && fr.filter((f) => f.match).every((f) => f.name === 'hash_rows'), 'hash_rows marked in the run\'s flame graph');
  const trendHash = '#/trend?function=hash_rows&sel=' + enc(sel);

  /* ---- a frame of the selection's merged graph picks its function ---- */
  log('trend: a frame of the merged graph picks its function');
  await nav(page, trendHash);
  await drawn(page, '#tr-chart');
  await until(page, () => window.PerfhubPage.frames('trend').some((f) => f.name === 'parse_rows'), null, 'the merged graph drawn');
  const pr = (await frames(page, 'trend')).find((f) => f.name === 'parse_rows');
  const pt = await centre(page, 'trend', pr);
  await page.mouse.click(pt.x, pt.y);
  await untilParam(page, 'function', 'parse_rows');
  await drawn(page, '#tr-chart');
  const s2 = await srv.api('series?function=parse_rows&metric=self_share&q=' + enc(sel));
  const g2 = await page.evaluate(() => window.PerfhubPage.trend());
  ok(JSON.stringify(g2.series[0].points.map((p) => [p.id, p.value])) === JSON.stringify(s2.points.map((p) => [String(p.id), p.value])),
    'the chart of the frame\'s function = /series?function=parse_rows');
  ok((await hashParams(page)).sel === sel, 'the selector stays');
  return trendHash;
}

async function compareSelectors(page, srv) {
  log('compare with selectors: /diff\'s ranked rows');
  const bq = '{build="fast"}', tq = '{build="slow"}';
  await nav(page, '#/compare');
  await until(page, () => document.querySelector('#cmp-form select[name=base]').options.length > 1, null, 'the compare form');
  await fill(page, '#cmp-form input[name=base_q]', bq);
  await fill(page, '#cmp-form input[name=target_q]', tq);
  await page.click('#cmp-form button[type=submit]');
  await untilParam(page, 'target_q', tq);
  await drawn(page, '#cmp-fg');
  /* the weight the page asked for: the form's default */
  const q = '&weight=' + (await hashParams(page)).weight + '&base_q=' + enc(bq) + '&target_q=' + enc(tq);
  const df = await srv.api('diff?kernel=1&rows=30' + q);
  for (const [sel, list] of [['#cmp-regressions', df.regressions], ['#cmp-improvements', df.improvements]]) {
    const shown = await cells(page, sel + ' tbody tr[data-function]');
    ok(shown.length === list.length && list.length > 0, sel + ': the rows /diff ranks (' + list.length + ')');
    list.forEach((r, i) => {
      const c = shown[i];
      ok(c[0] === r.function.replace(/_\[k\]$/, '') && c[1] === pct(r.base_self_share) && c[2] === pct(r.target_self_share) &&
        c[3] === pts(r.delta_self) && c[4] === pct(r.base_total_share) && c[5] === pct(r.target_total_share) &&
        c[6] === pts(r.delta_total) && c[7] === (r.significant ? 'yes' : 'no'), sel + ' row ' + i + ' = /diff: ' + c.join(' | '));
    });
  }
  const first = (await cells(page, '#cmp-regressions tbody tr[data-function]'))[0];
  ok(first[0] === 'hash_rows' && first[7] === 'yes' && parseFloat(first[3]) > 15, 'hash_rows leads the regressions, significant: ' + first.join(' | '));
  ok(/Base: 3 recordings; target: 3 recordings/.test(await page.$eval('#cmp-summary', (e) => e.textContent)), 'three runs on each side');
  checkFrames(await frames(page, 'compare'), await srv.api('diff?rows=30' + q), 'the selections\' differential graph', { diff: true });
}

async function offcpu(page, srv, id) {
  log('off-CPU: the toggle\'s flame graphs = /flamegraph?weight=offcpu and wall');
  await nav(page, '#/profile/' + id);
  await drawn(page, '#fg');
  await until(page, () => !document.querySelector('#p-cpu').hidden, null, 'the toggle shown for a recording with switch events');
  ok(await page.$eval('#p-cpu input[value=""]', (e) => e.checked), 'on-CPU to begin with');
  for (const [w, unit] of [['wall', 'on+off-CPU'], ['offcpu', 'off-CPU']]) {
    await page.click('#p-cpu input[value="' + w + '"]');
    await untilParam(page, 'weight', w);
    await drawn(page, '#fg');
    const tree = await srv.api('profiles/' + id + '/flamegraph?weight=' + w);
    const fr = await frames(page);
    checkFrames(fr, tree, 'weight=' + w);
    ok(fr.some((f) => f.name === 'nap_here'), w + ': nap_here drawn');
    await until(page, (u) => document.querySelector('#tl-info').textContent.includes(u + ' per bucket'), unit, 'the heat map in ' + unit + ' time');
    const nap = fr.find((f) => f.name === 'nap_here');
    const pt = await centre(page, 'profile', nap);
    await page.mouse.move(pt.x, pt.y);
    await until(page, (u) => {
      const v = document.querySelector('#tooltip:not([hidden]) .value');
      return v && v.textContent.includes(' ' + u + ', self ');
    }, unit, 'the tooltip in ' + unit + ' time');
  }
  /* nap_here's off-CPU time: most of what the recording spent off the CPU */
  const fr = await frames(page);
  const nap = fr.find((f) => f.name === 'nap_here');
  ok(nap.value > 0.8 * fr.find((f) => f.path === '').value, 'off-CPU: nap_here holds most of it');
  return nap;
}

async function sandwichFromFrame(page, srv, id, nap, shot) {
  log('callers and callees from a frame click = /sandwich');
  const pt = await centre(page, 'profile', nap);
  await page.mouse.click(pt.x, pt.y);
  await untilParam(page, 'zoom', nap.path);
  await until(page, () => !!document.querySelector('#fg-actions a.to-sandwich'), null, 'the zoomed frame\'s links');
  await page.click('#fg-actions a.to-sandwich');
  await untilHash(page, new RegExp('^#/sandwich/' + id + '\\?'));
  const p = await hashParams(page);
  ok(p.function === 'nap_here' && p.weight === 'offcpu', 'the sandwich of nap_here, off-CPU: ' + JSON.stringify(p));
  const hash = await checkSandwich(page, srv, id, 'nap_here', 'offcpu');
  await shot(page, 'sandwich-frame');
  return hash;
}

/* both trees of the sandwich view = /sandwich's; the URL */
async function checkSandwich(page, srv, id, fn, weight) {
  await drawn(page, '#sw-callers');
  await drawn(page, '#sw-callees');
  const sj = await srv.api('profiles/' + id + '/sandwich?function=' + enc(fn) + '&weight=' + weight);
  for (const which of ['callers', 'callees']) {
    const fr = await frames(page, which);
    checkFrames(fr, sj[which], which + ' of ' + fn, { minFrames: 2 });
    ok(fr.find((f) => f.path === '').name === fn, which + ': the function at the root');
  }
  return page.evaluate(() => location.hash);
}

/* In profile id's top table, the link of class cls (to-sandwich,
 * to-annotate) of function fn, clicked; its view, view, shown. */
async function fromTopRow(page, id, fn, cls, view) {
  await nav(page, '#/profile/' + id + '?weight=samples');
  await drawn(page, '#fg');
  await until(page, (c) => document.querySelectorAll('#top tbody tr a.' + c).length > 0, cls, 'the top table');
  const href = await topLink(page, fn, cls);
  ok(href, fn + ' has a /top row with its links');
  await clickOn(page, '#top tbody tr a.' + cls + '[href="' + href + '"]');
  await untilHash(page, new RegExp('^#/' + view + '/' + id + '\\?'));
}

async function fromTopRows(page, srv, ids, shot) {
  log('callers and callees from a /top row = /sandwich');
  await fromTopRow(page, ids.slow1, 'run_batch', 'to-sandwich', 'sandwich');
  await checkSandwich(page, srv, ids.slow1, 'run_batch', 'samples');
  const callees = (await frames(page, 'callees')).map((f) => f.name);
  ok(callees.includes('hash_rows') && callees.includes('parse_rows'), 'run_batch calls hash_rows and parse_rows');

  log('annotation from a /top row = /annotate');
  await fromTopRow(page, ids.nap, 'between_naps', 'to-annotate', 'annotate');
  const j = await srv.api('profiles/' + ids.nap + '/annotate?function=between_naps&weight=samples');
  await until(page, (n) => document.querySelectorAll('#an-insns tbody tr').length === n, j.instructions.length, 'the instructions listed');
  const lines = await cells(page, '#an-lines tbody tr'), insns = await cells(page, '#an-insns tbody tr');
  const src = j.source;
  ok(src && Array.isArray(src.text), 'the server has hotspot.c (--source-root)');
  ok(lines.length === j.lines.length && j.lines.some((l) => l.samples > 0), 'a row per source line (' + j.lines.length + ')');
  j.lines.forEach((l, i) => {
    const text = !l.file && l.line >= src.first_line && l.line < src.first_line + src.text.length ? src.text[l.line - src.first_line] : '';
    const where = (l.file ? l.file.slice(l.file.lastIndexOf('/') + 1) + ':' : '') + l.line;
    ok(lines[i][0] === where && C.countNear(lines[i][1], l.samples) && lines[i][3] === text, 'line ' + where + ' = /annotate: ' + lines[i].join(' | '));
  });
  const withSamples = j.instructions.filter((x) => x.samples > 0);
  ok(withSamples.length > 0 && j.instructions.every((x) => typeof x.text === 'string'), 'sampled instructions, disassembled');
  j.instructions.forEach((x, i) => {
    const where = x.line === null ? '' : (x.file ? x.file.slice(x.file.lastIndexOf('/') + 1) + ':' : '') + x.line;
    ok(insns[i][0] === x.address && C.countNear(insns[i][1], x.samples) && insns[i][3] === x.text && insns[i][4] === where,
      'instruction ' + x.address + ' = /annotate: ' + insns[i].join(' | '));
  });
  await shot(page, 'annotate');
}

/* a view's URL in a new page: the same drawing */
async function freshUrls(newPage, base, hashes) {
  log('the trend and sandwich URLs opened in a new page');
  const sig = (l) => JSON.stringify(l.map((f) => [f.path, f.value, f.x.toFixed(2), f.w.toFixed(2), f.y, f.label]));
  for (const [hash, which, want] of hashes) {
    const pg = await newPage();
    await pg.goto(base + '/' + hash);
    if (which === 'trend') {
      const got = JSON.stringify(await settledTrend(pg));
      ok(got === JSON.stringify(want), 'URL ' + hash + ' draws the same chart' + (got === JSON.stringify(want) ? '' : ':\n  got  ' + got + '\n  want ' + JSON.stringify(want)));
    } else {
      await drawn(pg, '#sw-callers');
      await drawn(pg, '#sw-callees');
      for (const w of ['callers', 'callees']) ok(sig(await frames(pg, w)) === sig(want[w]), 'URL ' + hash + ' draws the same ' + w);
    }
    await pg.close();
  }
}

async function run(ctx) {
  const { srv, ids, shot, newPage } = ctx;
  const page = await newPage();
  const trendHash = await listAndTrend(page, srv, ids, shot);
  await nav(page, trendHash);
  const trend = await settledTrend(page);
  /* its box narrower without a window resize (as a scrollbar makes it):
   * the chart follows, then comes back */
  const w0 = await page.evaluate(() => document.querySelector('#tr-chart').parentElement.clientWidth);
  await page.evaluate(() => { document.body.style.paddingRight = '37px'; });
  ok(await until(page, (w) => {
    const svg = document.querySelector('#tr-chart');
    const n = Number(svg.getAttribute('width'));
    return n < w && n === svg.parentElement.clientWidth;
  }, w0, 'the chart redrawn narrower', 5000), 'the chart follows its box\'s width (' + w0 + ' px, then narrower)');
  await page.evaluate(() => { document.body.style.paddingRight = ''; });
  ok(JSON.stringify(await settledTrend(page)) === JSON.stringify(trend), 'and draws the same chart at its width again');
  await compareSelectors(page, srv);
  await shot(page, 'compare-selectors');
  const nap = await offcpu(page, srv, ids.nap);
  await shot(page, 'offcpu');
  const swHash = await sandwichFromFrame(page, srv, ids.nap, nap, shot);
  const sw = { callers: await frames(page, 'callers'), callees: await frames(page, 'callees') };
  await fromTopRows(page, srv, ids, shot);
  await freshUrls(newPage, srv.base, [[trendHash, 'trend', trend], [swHash, 'sandwich', sw]]);
}

module.exports = { run };
