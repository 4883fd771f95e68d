/* What the browser tests (tests/web-e2e.js in Chromium, tests/web-e2e-
 * firefox.js in Firefox) share: checks that count, the recordings and the
 * perfhubd they run against, the API read without the page's model, and
 * the comparison of the drawn frames with an API tree. Nothing here
 * depends on the browser driver. */
'use strict';
const path = require('path');
const fs = require('fs');
const net = require('net');
const { spawn, execFileSync } = require('child_process');

const stats = { checks: 0 };
function ok(cond, what) {
  stats.checks++;
  if (!cond) throw new Error('FAIL: ' + what);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const near = (a, b, tol) => Math.abs(a - b) <= tol;
const t0 = Date.now();
function log(msg) { console.log('[' + ((Date.now() - t0) / 1000).toFixed(1) + ' s] ' + msg); }

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/* {path ("comm;f1;f2"): {value, base, target, dso}} of an API tree; '' is the root */
function pathValues(tree) {
  const m = new Map();
  const stack = [[tree, null]];
  while (stack.length) {
    const [n, p] = stack.pop();
    const key = p === null ? '' : p ? p + ';' + n.name : n.name;
    m.set(key, { value: n.value || 0, base: n.base || 0, target: n.target || 0, dso: n.dso });
    for (const k of n.children || []) stack.push([k, p === null ? '' : key]);
  }
  return m;
}

/* the paths (plain names) of kernel frames in a kernel=1 tree */
function kernelPaths(tree) {
  const s = new Set();
  const stack = [[tree, null]];
  while (stack.length) {
    const [n, p] = stack.pop();
    const plain = n.name.replace(/_\[k\]$/, '');
    const key = p === null ? '' : p ? p + ';' + plain : plain;
    if (p !== null && plain !== n.name) s.add(key);
    for (const k of n.children || []) stack.push([k, p === null ? '' : key]);
  }
  return s;
}

/* "12.3 k" -> 12300 (the page abbreviates large counts) */
function parseCount(s) {
  const m = /^([\d.]+)\s*([kMG]?)$/.exec(s.trim());
  if (!m) return NaN;
  return +m[1] * ({ '': 1, k: 1e3, M: 1e6, G: 1e9 })[m[2]];
}
const countNear = (shown, v) => near(parseCount(shown), v, Math.max(0.5, v * 0.006));

/* The drawn frames (window.PerfhubPage.frames()) against an API tree:
 * every frame is a node of the tree with its value (or base and target);
 * every node at least 1 px wide is drawn with its width; labels are the
 * name or its start with an ellipsis, and fit their frames; at least
 * opts.minFrames (4) drawn. Returns the number of wide nodes. */
function checkFrames(fr, apiTree, what, opts) {
  const o = opts || {};
  const vals = pathValues(apiTree);
  const field = o.diff ? 'target' : 'value';
  ok(fr.length >= (o.minFrames || 4), what + ': frames drawn (' + fr.length + ')');
  for (const f of fr) {
    const v = vals.get(f.path);
    ok(v !== undefined, what + ': frame ' + f.path + ' is a node the API gave');
    if (o.diff) ok(v.base === f.base && v.target === f.target, what + ': ' + f.path + ' base/target ' + f.base + '/' + f.target + ' = API ' + v.base + '/' + v.target);
    else ok(v.value === f.value, what + ': ' + f.path + ' value ' + f.value + ' = API ' + v.value);
    ok(f.label === '' || f.label === f.name || (f.label.endsWith('\u2026') && f.name.startsWith(f.label.slice(0, -1))),
      what + ': label "' + f.label + '" of ' + f.name);
    /* the label inside its frame, as the browser measures the text */
    ok(f.label === '' || (f.labelW > 0 && f.labelW <= f.w - 4), what + ': label "' + f.label + '" (' + f.labelW + ' px) inside ' + f.w.toFixed(1) + ' px');
  }
  const rootF = fr.find((f) => f.path === (o.focus || ''));
  ok(rootF, what + ': focus frame drawn');
  const width = rootF.w, fv = vals.get(o.focus || '')[field];
  const drawnPaths = new Set(fr.map((f) => f.path));
  const prefix = o.focus ? o.focus + ';' : '';
  let wide = 0;
  for (const [p, v] of vals) {
    if (p === '' || (o.focus && !p.startsWith(prefix))) continue;
    const w = (v[field] / fv) * width;
    if (w < 1) continue;
    wide++;
    ok(drawnPaths.has(p), what + ': node ' + p + ' (' + w.toFixed(1) + ' px) drawn');
  }
  for (const f of fr) {
    if (f.dim || f.path === (o.focus || '')) continue;
    ok(near(f.w, (vals.get(f.path)[field] / fv) * width, 0.01), what + ': width of ' + f.path);
  }
  return wide;
}

/* How many nodes of an API tree a zoom into path draws at least 1 px
 * wide in width px: the frame and what it calls (a short recording may
 * have fewer than the usual four, or callees too narrow to draw). */
function wideUnder(tree, focus, width) {
  const vals = pathValues(tree);
  const fv = vals.get(focus).value;
  let n = 0;
  for (const [p, v] of vals)
    if ((p === focus || p.startsWith(focus + ';')) && (v.value / fv) * width >= 1) n++;
  return n;
}

/* Starts perfhubd on a free port with one worker (state under tmp, the
 * page from webRoot, more options in args) and waits for /healthz.
 * Returns {base, api(p), post(file, query), waitReady(id), stop(), kill(),
 * daemonLog()}. */
async function startDaemon(o) {
  const { daemon, tmp, webRoot } = o;
  const port = await freePort();
  const base = 'http://127.0.0.1:' + port;
  const logFile = path.join(tmp, 'perfhubd.log');
  const dlog = fs.openSync(logFile, 'w');
  /* one worker, as on a busy server: uploads are parsed one at a time */
  /* the recordings are this machine's: their libraries and kernel are
   * named from its files as perf would (--local-uploads) */
  const proc = spawn(daemon, ['--listen', '127.0.0.1:' + port, '--db', path.join(tmp, 'perfhub.db'),
    '--spool', path.join(tmp, 'spool'), '--web-root', webRoot, '--workers', '1', '--local-uploads'].concat(o.args || []),
  { stdio: ['ignore', dlog, dlog] });
  const s = {
    base, proc,
    stop() { proc.kill('SIGTERM'); },
    kill() { proc.kill('SIGKILL'); },
    daemonLog() { try { return fs.readFileSync(logFile, 'utf8').slice(-3000); } catch (e) { return ''; } },
    async api(p) {
      const r = await fetch(base + '/api/v1/' + p);
      if (!r.ok) throw new Error('FAIL: GET ' + p + ': HTTP ' + r.status);
      return r.json();
    },
    async post(file, q) {
      const r = await fetch(base + '/api/v1/profiles' + q, {
        method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: fs.readFileSync(file),
      });
      ok(r.status === 202 || r.status === 200, 'upload ' + file + ': HTTP ' + r.status);
      return String((await r.json()).id);
    },
    async waitReady(id) {
      const t = Date.now() + 60000;
      for (;;) {
        const m = await s.api('profiles/' + id);
        if (m.status === 'ready' || m.status === 'failed') return m;
        if (Date.now() > t) throw new Error('FAIL: profile ' + id + ' still ' + m.status);
        await sleep(100);
      }
    },
  };
  try {
    const end = Date.now() + 15000;
    for (;;) {
      try { if ((await fetch(base + '/healthz')).ok) break; } catch (e) { /* not yet */ }
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error('FAIL: perfhubd exited (' + (proc.exitCode !== null ? 'status ' + proc.exitCode : proc.signalCode) + ')');
      if (Date.now() > end) throw new Error('FAIL: perfhubd did not answer /healthz');
      await sleep(100);
    }
  } catch (e) {
    console.error('---- perfhubd log ----\n' + s.daemonLog());
    s.kill();
    throw e;
  }
  return s;
}

/* perf record -q ARGS -o tmp/NAME -- CMD...: the file's path */
function record(tmp, name, args, cmd) {
  const out = path.join(tmp, name);
  execFileSync('perf', ['record', '-q', '-o', out].concat(args, ['--'], cmd), { stdio: 'ignore', timeout: 120000 });
  return out;
}

/* Records tests/web/hotspot twice with `perf record -g` (alpha.data: two
 * events, hot function alpha_hot; beta.data: beta_hot), starts perfhubd
 * (startDaemon), uploads both and waits until they are parsed. Returns
 * what the tests need; stop() ends the daemon. */
async function startServer(o) {
  const { hotspot, tmp } = o;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const aFile = record(tmp, 'alpha.data', ['-g', '-e', 'cpu-clock', '-e', 'task-clock'], [hotspot, 'alpha', '1200']);
  const bFile = record(tmp, 'beta.data', ['-g', '-e', 'cpu-clock'], [hotspot, 'beta', '1200']);
  log('recorded alpha.data and beta.data');
  const s = await startDaemon(o);
  Object.assign(s, { aFile, bFile });
  try {
    s.aId = await s.post(aFile, '?name=hot-alpha&tag=run=alpha');
    s.bId = await s.post(bFile, '?name=hot-beta&tag=run=beta');
    s.aMeta = await s.waitReady(s.aId);
    ok(s.aMeta.status === 'ready', 'alpha.data parsed: ' + (s.aMeta.error || ''));
    ok((await s.waitReady(s.bId)).status === 'ready', 'beta.data parsed');
  } catch (e) {
    console.error('---- perfhubd log ----\n' + s.daemonLog());
    s.kill();
    throw e;
  }
  return s;
}

/* Polls fn(arg) in the page until it returns a truthy value (any driver
 * with page.evaluate(fn, arg)); the value, or a FAIL after ms. */
async function until(page, fn, arg, what, ms) {
  const end = Date.now() + (ms || 20000);
  for (;;) {
    let v = null;
    try { v = await page.evaluate(fn, arg); } catch (e) { v = null; }
    if (v) { stats.checks++; return v; }
    if (Date.now() > end) throw new Error('FAIL (timeout): ' + what);
    await sleep(50);
  }
}

/* ---- the page, through page.evaluate(fn, arg) and page.$$eval(sel, fn),
 * which playwright and puppeteer both have ---- */

/* the tooltip's lines by class: fn, kind, dso (when the path differs
 * from the file name), value, share */
const tipLines = (page) => page.$$eval('#tooltip > div', (ds) => Object.fromEntries(ds.map((d) => [d.classList[d.classList.length - 1], d.textContent])));

/* the test hook: what the flame graph's canvas shows (docs/web.md) */
const frames = (page, which) => page.evaluate((w) => window.PerfhubPage.frames(w), which || 'profile');
const CANVASES = { profile: '#fg', compare: '#cmp-fg', trend: '#tr-fg', callers: '#sw-callers', callees: '#sw-callees' };
const canvasOf = (which) => CANVASES[which] || '#fg';

const hashParams = (page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] || '')));

/* viewport coordinates of a point on a canvas, scrolled into view: in the
 * box that scrolls it (a flame graph taller than its .fg-wrap), then in
 * the window, as a reader would */
function pointOn(page, sel, x, y) {
  return page.evaluate(([s, px, py]) => {
    const c = document.querySelector(s);
    for (let box = c.parentElement; box && box !== document.body; box = box.parentElement) {
      const oy = window.getComputedStyle(box).overflowY;
      if ((oy !== 'auto' && oy !== 'scroll') || box.scrollHeight <= box.clientHeight) continue;
      const at = c.getBoundingClientRect().top + py - box.getBoundingClientRect().top - box.clientTop;
      if (at < 20 || at > box.clientHeight - 20) box.scrollTop += at - box.clientHeight / 2;
    }
    let b = c.getBoundingClientRect();
    if (b.top + py < 40 || b.top + py > window.innerHeight - 40) {
      window.scrollBy(0, b.top + py - window.innerHeight / 2);
      b = c.getBoundingClientRect();
    }
    return { x: b.left + px, y: b.top + py };
  }, [sel, x, y]);
}
const centre = (page, which, f) => pointOn(page, canvasOf(which), f.x + Math.min(f.w / 2, 200), f.y + f.h / 2);

/* The tooltip of a frame against the API's node: name, kind, the DSO the
 * API gives (file name on the kind line, the full path below it), value,
 * self and shares. Returns whether a DSO was checked. */
function checkTip(tip, f, vals, unit, what) {
  const v = vals.get(f.path);
  const parentPath = f.path.split(';').slice(0, -1).join(';');
  const pctAll = (100 * f.value) / vals.get('').value, pctPar = (100 * f.value) / vals.get(parentPath).value;
  const m2 = new RegExp('^([\\d.]+(?: [kMG])?) ' + unit + ', self ([\\d.]+(?: [kMG])?)$').exec(tip.value || '');
  const m3 = /^([\d.]+)% of all, ([\d.]+)% of parent$/.exec(tip.share || '');
  ok(tip.fn && tip.kind && m2 && m3, what + ': name, kind, value, shares: ' + JSON.stringify(tip));
  ok(tip.fn === f.name && tip.kind.split(' \u00b7 ')[0] === f.kind && countNear(m2[1], f.value) && countNear(m2[2], f.self),
    what + ': name, kind, ' + unit + ', self: ' + JSON.stringify(tip) + ' (API: ' + f.value + ')');
  ok(near(+m3[1], pctAll, 0.051) && near(+m3[2], pctPar, 0.051), what + ': shares ' + m3[1] + '/' + m3[2] + ' = ' + pctAll.toFixed(2) + '/' + pctPar.toFixed(2));
  if (typeof v.dso === 'string' && v.dso) {
    const baseName = v.dso.slice(v.dso.lastIndexOf('/') + 1) || v.dso;
    ok(tip.kind === f.kind + ' \u00b7 ' + baseName, what + ': DSO file name ' + baseName + ' on the kind line: ' + tip.kind);
    ok(baseName === v.dso ? tip.dso === undefined : tip.dso === v.dso, what + ': DSO path ' + v.dso + ' below: ' + tip.dso);
    return true;
  }
  ok(tip.dso === undefined && (f.kind === 'unresolved' || tip.kind === f.kind), what + ': no DSO from the API, none shown: ' + JSON.stringify(tip));
  return false;
}

/* The compare view's tooltip of a frame against the /diff node: name,
 * the DSO when /diff gives one, base and target counts. */
function checkDiffTip(tip, f, vals, what) {
  const v = vals.get(f.path);
  const m = /^base ([\d.]+(?: [kMG])?) \([\d.]+%\), target ([\d.]+(?: [kMG])?) \([\d.]+%\)$/.exec(tip.value || '');
  ok(tip.fn === f.name && m && countNear(m[1], v.base) && countNear(m[2], v.target), what + ': name, base, target: ' + JSON.stringify(tip) + ' (API ' + v.base + '/' + v.target + ')');
  if (typeof v.dso === 'string' && v.dso) {
    const baseName = v.dso.slice(v.dso.lastIndexOf('/') + 1) || v.dso;
    ok(tip.kind === f.kind + ' \u00b7 ' + baseName && (baseName === v.dso ? tip.dso === undefined : tip.dso === v.dso),
      what + ': the DSO /diff gives, ' + v.dso + ': ' + JSON.stringify(tip));
    return true;
  }
  return false;
}

/* Up to n frames of each kind (widest first, names not repeated) to
 * hover: kernel, user and unresolved frames. */
function framesToHover(fr, n, skip) {
  const names = new Set(skip || []);
  const out = [];
  const wide = fr.filter((f) => f.depth >= 2 && f.w > 8 && !f.dim).sort((p, q) => q.w - p.w);
  for (const kind of ['kernel', 'user', 'unresolved']) {
    out.push(...wide.filter((f) => f.kind === kind && !names.has(f.name) && names.add(f.name)).slice(0, n));
  }
  return out;
}

/* Runs main() under a watchdog of `seconds`; exits 1 on a failure or a
 * timeout, with the daemon's log. The daemon and the browser (getters:
 * main starts them) are ended on every way out. */
function runMain(main, seconds, daemon, browser) {
  const finish = async () => {
    if (browser()) await browser().close().catch(() => {});
    if (daemon()) daemon().stop();
  };
  const watchdog = setTimeout(() => {
    console.error('FAIL: timed out after ' + seconds + ' s');
    if (daemon()) daemon().kill();
    /* puppeteer's browser process; playwright ends its own when node exits */
    const b = browser();
    if (b && typeof b.process === 'function' && b.process()) b.process().kill('SIGKILL');
    process.exit(1);
  }, seconds * 1000);
  main().then(async () => { clearTimeout(watchdog); await finish(); }, async (e) => {
    clearTimeout(watchdog);
    console.error(e && e.message ? e.message : e);
    if (e && e.stack) console.error(e.stack.split('\n').slice(1, 4).join('\n'));
    if (daemon()) console.error('---- perfhubd log ----\n' + daemon().daemonLog());
    await finish();
    process.exit(1);
  });
}

module.exports = {
  checkDiffTip, framesToHover,
  tipLines, frames, canvasOf, hashParams, pointOn, centre, checkTip,
  stats, ok, sleep, near, log, freePort, pathValues, kernelPaths, parseCount, countNear,
  checkFrames, wideUnder, startServer, startDaemon, record, until, runMain,
};
