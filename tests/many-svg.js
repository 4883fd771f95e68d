/* The SVG of perfhub flamegraph --svg in Chromium: it draws every frame of
 * the file with its tooltip; clicking a frame zooms into it (full width,
 * its siblings hidden, its callers kept below), hovering shows its tooltip
 * in the details line, Search (a prompt) colours the matching frames and
 * prints their share, which must be the share `perfhub top` gives the
 * function, Reset Zoom and Escape undo both.
 * Usage: node tests/many-svg.js FLAME.svg TOP.json CHROMIUM */
'use strict';
/* global document */ // in the functions page.evaluate runs in the browser
const path = require('path');
const fs = require('fs');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const { chromium } = require(path.join(top, 'tests', 'web', 'node_modules', 'playwright-core'));

let checks = 0;
function ok(cond, what) {
  checks++;
  if (!cond) throw new Error('FAIL: ' + what);
}

const frames = (page) => page.evaluate(() => [...document.querySelectorAll('g.f')].map((g) => {
  const r = g.querySelector('rect');
  return {
    n: g.getAttribute('data-n'), tip: g.querySelector('title').textContent,
    x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),
    fill: r.getAttribute('fill'), shown: g.style.display !== 'none', text: g.querySelector('text').textContent,
  };
}));

async function main() {
  const [svg, topJson, browserPath] = process.argv.slice(2);
  const fns = JSON.parse(fs.readFileSync(topJson, 'utf8')).functions;
  const hash = fns.find((f) => f.name === 'hash_rows');
  ok(hash, 'perfhub top knows hash_rows');
  const browser = await chromium.launch({
    executablePath: browserPath, headless: true, timeout: 40000,
    args: typeof process.getuid === 'function' && process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto('file://' + path.resolve(svg));
    ok(await page.title() !== null, 'the SVG opens');
    let fs0 = await frames(page);
    const W = +(await page.evaluate(() => document.documentElement.getAttribute('width')));
    const root = fs0.find((f) => f.n === 'all');
    const h = fs0.find((f) => f.n === 'hash_rows');
    const p = fs0.find((f) => f.n === 'parse_rows');
    ok(root && h && p, 'frames all, hash_rows, parse_rows drawn: ' + fs0.map((f) => f.n).slice(0, 12));
    ok(Math.abs(root.w - (W - 20)) < 0.01, 'the root spans the width');
    ok(h.y < root.y, 'the root at the bottom, callees above');
    ok(/regress <slow>/.test(await page.textContent('#title')), 'the title');
    /* hash_rows' width is its share of the root, as perfhub top says */
    const tipShare = +/([\d.]+)%$/.exec(h.tip)[1];
    ok(Math.abs(h.w / root.w * 100 - tipShare) < 0.05, 'width = tooltip share');
    ok(Math.abs(tipShare - hash.total_share) < 0.01, 'tooltip share ' + tipShare + ' = top ' + hash.total_share);
    /* hover: the details line */
    await page.hover('g.f[data-n="hash_rows"] rect');
    ok((await page.textContent('#details')) === h.tip, 'details on hover');
    /* click: zoom into hash_rows */
    await page.click('g.f[data-n="hash_rows"] rect');
    let fz = await frames(page);
    const hz = fz.find((f) => f.n === 'hash_rows');
    ok(Math.abs(hz.x - 10) < 0.01 && Math.abs(hz.w - (W - 20)) < 0.01, 'zoomed: full width');
    ok(!fz.find((f) => f.n === 'parse_rows').shown, 'zoomed: the sibling hidden');
    ok(fz.find((f) => f.n === 'all').shown, 'zoomed: the callers kept');
    ok(hz.text === 'hash_rows', 'zoomed: the name fits now');
    /* reset */
    await page.click('#unzoom');
    fz = await frames(page);
    ok(fz.every((f, i) => f.shown && Math.abs(f.w - fs0[i].w) < 0.01 && Math.abs(f.x - fs0[i].x) < 0.01),
      'Reset Zoom: every frame back');
    /* search: a prompt, the matches coloured, their share printed */
    page.once('dialog', (d) => d.accept('^hash_'));
    await page.click('#search');
    const matched = await page.textContent('#matched');
    const m = /Matched: ([\d.]+)%/.exec(matched);
    ok(m && Math.abs(+m[1] - hash.total_share) < 0.06, 'matched ' + matched + ', top ' + hash.total_share);
    fz = await frames(page);
    ok(fz.filter((f) => f.n === 'hash_rows').every((f) => f.fill === 'rgb(230,0,230)'), 'matches coloured');
    ok(fz.find((f) => f.n === 'parse_rows').fill === p.fill, 'others keep their colour');
    /* Ctrl-F asks again; Escape clears */
    page.once('dialog', (d) => d.accept('rows'));
    await page.keyboard.press('Control+f');
    ok(/Matched: /.test(await page.textContent('#matched')), 'Ctrl-F searches');
    await page.keyboard.press('Escape');
    fz = await frames(page);
    ok(fz.every((f, i) => f.fill === fs0[i].fill), 'Escape clears the search');
    ok(errors.length === 0, 'no script errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
  console.log('many-svg: ' + checks + ' checks passed');
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
