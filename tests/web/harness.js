/* What the page tests share: checks that count, waiting for the page, a
 * recording canvas context (jsdom has no canvas) and opening the page in
 * jsdom from a server's URL. */
'use strict';
const path = require('path');
const fs = require('fs');
const { JSDOM, VirtualConsole } = require(path.join(__dirname, 'node_modules', 'jsdom'));

const WIDTH = 800; /* jsdom lays nothing out; the page falls back to 800 px */
const ROW_H = 17;
const HIGHLIGHT = 'rgb(220,40,220)';

const stats = { checks: 0 };
function ok(cond, what) {
  stats.checks++;
  if (!cond) throw new Error('FAIL: ' + what);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(cond, what, ms) {
  const end = Date.now() + (ms || 5000);
  for (;;) {
    let v = false;
    try { v = cond(); } catch (e) { v = false; }
    if (v) { stats.checks++; return v; }
    if (Date.now() > end) throw new Error('FAIL (timeout): ' + what);
    await sleep(20);
  }
}

/* A 2D context that records what is drawn; cleared with clearRect. */
function recorder() {
  return {
    ops: [], fillStyle: '#000', strokeStyle: '#000', globalAlpha: 1, font: '', lineWidth: 1, textBaseline: '',
    setTransform() {}, clearRect() { this.ops = []; },
    fillRect(x, y, w, h) { this.ops.push({ op: 'rect', x, y, w, h, style: this.fillStyle }); },
    strokeRect() {},
    fillText(text, x, y) { this.ops.push({ op: 'text', text, x, y }); },
    measureText(s) { return { width: s.length * 7 }; },
  };
}

async function api(base, p) {
  const r = await fetch(base + '/api/v1/' + p);
  if (!r.ok) throw new Error(p + ': HTTP ' + r.status);
  return r.json();
}

/* Opens base/ in jsdom with the page's scripts running; returns helpers
 * to drive it and to read what it drew. */
async function openPage(base, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const errors = [];
  const vc = new VirtualConsole();
  vc.on('jsdomError', (e) => errors.push('jsdom: ' + (e.stack || e.message)));
  vc.on('error', (...a) => errors.push('console.error: ' + a.join(' ')));
  const ctxs = {};
  const dom = await JSDOM.fromURL(base + '/', {
    runScripts: 'dangerously', resources: 'usable', pretendToBeVisual: true, virtualConsole: vc,
    beforeParse(window) {
      window.fetch = (u, o) => fetch(new URL(u, window.location.href), o);
      window.HTMLCanvasElement.prototype.getContext = function () {
        return ctxs[this.id] || (ctxs[this.id] = recorder());
      };
      window.confirm = () => true;
    },
  });
  const w = dom.window;
  const p = {
    dom, w, d: w.document, ctxs, errors,
    $: (s) => w.document.querySelector(s),
    nav: (h) => { w.location.hash = h; },
    texts: (id) => (ctxs[id] ? ctxs[id].ops.filter((o) => o.op === 'text').map((o) => o.text) : []),
    rects: (id) => (ctxs[id] ? ctxs[id].ops.filter((o) => o.op === 'rect') : []),
    mouse: (target, type, x, y) => target.dispatchEvent(new w.MouseEvent(type, { bubbles: true, clientX: x, clientY: y })),
    snapshot(name) {
      fs.writeFileSync(path.join(outDir, name + '.html'), dom.serialize());
      const ops = {};
      for (const [id, c] of Object.entries(ctxs)) ops[id] = c.ops;
      fs.writeFileSync(path.join(outDir, name + '.canvas.json'), JSON.stringify(ops));
    },
  };
  await until(() => w.PerfhubFlame && w.document.readyState === 'complete', 'page scripts loaded');
  return p;
}

module.exports = { WIDTH, ROW_H, HIGHLIGHT, stats, ok, until, sleep, api, openPage };
