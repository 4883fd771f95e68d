/* The page's views of many recordings and the deeper views of one, in a
 * real browser - Debian's chromium driven by playwright-core, or
 * firefox-esr driven by puppeteer-core over WebDriver BiDi - against a
 * perfhubd started here with recordings made here: tests/progs/regress
 * six times (three runs of a build, three of one whose hash_rows does
 * four times the work: a known regression) and tests/web/hotspot napping in
 * nap_here() under `perf record -e cpu-clock -e sched:sched_switch -g
 * --switch-events` (known off-CPU time). The checks are the same in
 * both browsers (tests/web/e2e-views.js); every expected value comes
 * from perfhubd's API. Screenshots go to tests/web-e2e-views-BROWSER.out/
 * in the build directory.
 * Usage: node tests/web-e2e-views.js chromium|firefox PERFHUBD HOTSPOT REGRESS BROWSER */
'use strict';
const path = require('path');
const fs = require('fs');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const bld = path.resolve(process.env.top_builddir || '.');
const C = require(path.join(top, 'tests', 'web', 'e2e-common.js'));
const V = require(path.join(top, 'tests', 'web', 'e2e-views.js'));
const { ok, log, stats } = C;

const [kind, ...paths] = process.argv.slice(2);
const [daemon, hotspot, regress, browserPath] = paths.map((p) => path.resolve(p));
const tmp = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-e2e-views-' + kind);
const shots = path.join(bld, 'tests', 'web-e2e-views-' + kind + '.out');
const VIEWPORT = { width: 1280, height: 1000 };

let srv = null, browser = null; /* ended on every way out */

/* three runs a side: with two, Welch's test has one degree of freedom
 * when one side varies more, and a busy machine's spread of a few points
 * in one run made a +30-point change not significant */
const RUNS = [['fast1', [], 'fast'], ['fast2', [], 'fast'], ['fast3', [], 'fast'],
  ['slow1', ['--slow'], 'slow'], ['slow2', ['--slow'], 'slow'], ['slow3', ['--slow'], 'slow']];

/* the recordings: {name: file}; exits 77 where perf cannot record the
 * scheduler's tracepoint */
function recordAll() {
  const files = {};
  for (const [name, args] of RUNS) files[name] = C.record(tmp, name + '.data', ['-g'], [regress].concat(args));
  try {
    files.nap = C.record(tmp, 'nap.data', ['-e', 'cpu-clock', '-e', 'sched:sched_switch', '-g', '--switch-events'], [hotspot, 'nap', '1000']);
  } catch (e) {
    console.log('SKIP: perf record cannot record sched:sched_switch here (tracefs?): ' + String(e.message).split('\n')[0]);
    process.exit(77);
  }
  log('recorded ' + RUNS.length + ' runs of regress and one of hotspot nap');
  return files;
}

/* uploaded with labels, in this order; {name: id} once all are parsed */
async function upload(files) {
  const ids = {};
  for (const [name, , build] of RUNS) {
    ids[name] = await srv.post(files[name], '?name=' + name + '&tag=build=' + build + '&tag=branch=' + (build === 'fast' ? 'main' : 'pr-9'));
  }
  ids.nap = await srv.post(files.nap, '?name=nap&tag=kind=offcpu');
  for (const [name, id] of Object.entries(ids)) {
    const m = await srv.waitReady(id);
    ok(m.status === 'ready', name + ' parsed: ' + (m.error || ''));
  }
  return ids;
}

/* the browser: playwright-core's chromium or puppeteer-core's firefox;
 * a launch can stall on a loaded machine: a long timeout, one more try */
async function launch() {
  const launchT = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      if (kind === 'chromium') {
        const { chromium } = require(path.join(top, 'tests', 'web', 'node_modules', 'playwright-core'));
        browser = await chromium.launch({ executablePath: browserPath, headless: true, timeout: 40000,
          args: typeof process.getuid === 'function' && process.getuid() === 0 ? ['--no-sandbox'] : [] });
      } else {
        const puppeteer = require(path.join(top, 'tests', 'web', 'node_modules', 'puppeteer-core'));
        browser = await puppeteer.launch({ browser: 'firefox', executablePath: browserPath, headless: true, timeout: 60000,
          defaultViewport: VIEWPORT, userDataDir: path.join(tmp, 'profile-' + attempt) });
      }
      break;
    } catch (e) {
      if (attempt >= 2) throw e;
      log(kind + ' did not start (' + String(e.message).split('\n')[0] + '); again');
    }
  }
  const version = await browser.version();
  log(version + ' started in ' + ((Date.now() - launchT) / 1000).toFixed(1) + ' s');
  return version;
}

/* a new page with its errors collected */
async function newPage(errors) {
  let page;
  if (kind === 'chromium') {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    page = await ctx.newPage();
  } else {
    page = await browser.newPage();
    await page.setViewport(VIEWPORT);
  }
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => d.accept());
  return page;
}

async function main() {
  if (!['chromium', 'firefox'].includes(kind)) throw new Error('usage: web-e2e-views.js chromium|firefox PERFHUBD HOTSPOT REGRESS BROWSER');
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const files = recordAll();
  /* the annotate view shows hotspot.c's lines from here */
  srv = await C.startDaemon({ daemon, tmp, webRoot: path.join(top, 'web'), args: ['--source-root', fs.realpathSync(path.join(top, 'tests', 'web'))] });
  const ids = await upload(files);
  const version = await launch();
  const errors = [];
  let shotNo = 0;
  const shot = async (page, name) => {
    const file = path.join(shots, String(++shotNo).padStart(2, '0') + '-' + name + '.png');
    await page.screenshot({ path: file });
    ok(fs.statSync(file).size > 5000, 'screenshot ' + name);
  };
  await V.run({ srv, ids, shot, errors, newPage: () => newPage(errors) });
  ok(errors.length === 0, 'no script errors in the page: ' + errors.join('; '));
  log('ok: ' + stats.checks + ' checks in ' + version + '; ' + shotNo + ' screenshots in ' + shots);
}

C.runMain(main, 240, () => srv, () => browser);
