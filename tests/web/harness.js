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

/* 'hsl(h,s%,l%)', 'rgb(r,g,b)' or '#rrggbb' to [r, g, b]. */
function rgbOf(style) {
  let m = /^hsl\((-?[\d.]+),\s*([\d.]+)%,\s*([\d.]+)%\)$/.exec(style);
  if (m) {
    const h = (((+m[1] % 360) + 360) % 360) / 360, s = m[2] / 100, l = m[3] / 100;
    const q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    const f = (t) => {
      t = (t + 1) % 1;
      const v = t < 1 / 6 ? p + (q - p) * 6 * t : t < 0.5 ? q : t < 2 / 3 ? p + (q - p) * (2 / 3 - t) * 6 : p;
      return Math.round(v * 255);
    };
    return [f(h + 1 / 3), f(h), f(h - 1 / 3)];
  }
  m = /^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(style);
  if (m) return [+m[1], +m[2], +m[3]];
  m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(style);
  if (m) return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)];
  return [0, 0, 0];
}

/* A PNG of the rectangles a canvas got (labels are not drawn): the
 * nearest thing to a screenshot without a browser. */
function png(ops) {
  const rects = ops.filter((o) => o.op === 'rect');
  if (!rects.length) return null;
  const W = Math.min(4000, Math.ceil(Math.max(...rects.map((r) => r.x + r.w))));
  const Hh = Math.min(4000, Math.ceil(Math.max(...rects.map((r) => r.y + r.h))));
  const px = Buffer.alloc((W * 3 + 1) * Hh, 255);
  for (let y = 0; y < Hh; y++) px[y * (W * 3 + 1)] = 0;
  for (const r of rects) {
    const c = rgbOf(r.style);
    for (let y = Math.max(0, Math.floor(r.y)); y < Math.min(Hh, Math.ceil(r.y + r.h)); y++) {
      for (let x = Math.max(0, Math.floor(r.x)); x < Math.min(W, Math.ceil(r.x + r.w)); x++) {
        const o = y * (W * 3 + 1) + 1 + x * 3;
        px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2];
      }
    }
  }
  const zlib = require('zlib');
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(W, 0);
  ihdr.writeUInt32BE(Hh, 4);
  ihdr[8] = 8; ihdr[9] = 2; /* 8-bit RGB */
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(px)), chunk('IEND', Buffer.alloc(0))]);
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
      /* what every current browser has and jsdom lacks */
      window.fetch = (u, o) => fetch(new URL(u, window.location.href), o);
      if (!window.TextEncoder) window.TextEncoder = TextEncoder;
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
      for (const [id, c] of Object.entries(ctxs)) {
        const img = png(c.ops);
        if (img) fs.writeFileSync(path.join(outDir, name + '.' + id + '.png'), img);
      }
    },
  };
  await until(() => w.PerfhubFlame && w.document.readyState === 'complete', 'page scripts loaded');
  return p;
}

module.exports = { WIDTH, ROW_H, HIGHLIGHT, stats, ok, until, sleep, api, openPage };
