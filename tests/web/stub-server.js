/* A stand-in for perfhubd's HTTP side for the page tests: serves web/ and
 * answers the API endpoints the page uses, with answers computed
 * from a fixed list of samples (so a time range, a comm or a weight give
 * different, checkable trees). Run alone for manual work on the page:
 *   node tests/web/stub-server.js [PORT]   (then open http://127.0.0.1:PORT/) */
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const views = require('./stub-views.js');

const T0 = 1000000000000; /* perf clock of the first sample, ns */

/* Samples of two builds: 0-0.5 s only emit(), then parse/lex. The target
 * spends much more in lex() (the regression the compare test looks for). */
function makeSamples(lexEvery) {
  const out = [];
  for (let i = 0; i < 200; i++) {
    const t = T0 + i * 10e6;
    const period = 1000 + (i % 7) * 100;
    if (t < T0 + 500e6) {
      out.push({ comm: 'make', pid: 100, tid: 100, t, period, stack: ['main', 'run', 'emit'] });
    } else if (i % 5 === 0) {
      out.push({ comm: 'cc1', pid: 200, tid: 201, t, period, stack: ['main', 'parse', 'lex'] });
    } else if (i % 5 === 1) {
      out.push({ comm: 'cc1', pid: 200, tid: 202, t, period, stack: ['main', 'do_syscall_64_[k]', 'vfs_read_[k]'] });
    } else if (i % lexEvery === 0) {
      out.push({ comm: 'make', pid: 100, tid: 100, t, period, stack: ['main', 'run', 'parse', 'lex'] });
    } else {
      out.push({ comm: 'make', pid: 100, tid: 100, t, period, stack: ['main', 'run', 'parse'] });
    }
  }
  return out;
}

function header(host) {
  return {
    hostname: host, os_release: '6.1.0-test', perf_version: '6.1.76', arch: 'x86_64',
    nr_cpus_online: 4, nr_cpus_available: 4, cpu_desc: 'Test CPU @ 2.0GHz', total_mem: 8000000,
    cmdline: 'perf record -g -- make', sample_time: { first_ns: T0, last_ns: T0 + 199 * 10e6 },
  };
}

function newProfile(id, name, samples, status) {
  return {
    id: String(id), name, tags: { branch: 'main' }, status, error: null,
    sha256: crypto.createHash('sha256').update(name).digest('hex'), size: 123456,
    uploaded_at: '2026-11-23T09:00:0' + id + 'Z', parse_ms: 12, symbolized_pct: 97.5,
    samples,
  };
}

/* A recording with off-CPU time (sched:sched_switch samples held to the
 * thread's switch-in): make waits in wait_child between its CPU work. */
function sleepySamples() {
  const out = makeSamples(3);
  for (let i = 0; i < 20; i++) {
    out.push({ comm: 'make', pid: 100, tid: 100, t: T0 + i * 100e6 + 5e6, period: 1, off: (i % 4 + 1) * 10e6,
      stack: ['main', 'run', 'wait_child', 'do_wait_[k]', 'schedule_[k]'] });
  }
  return out.sort((a, b) => a.t - b.t);
}

function createState() {
  const profiles = [
    newProfile(1, 'build-base', makeSamples(4), 'ready'),
    newProfile(2, 'build-target', makeSamples(2), 'ready'),
    newProfile(3, 'broken-upload', [], 'failed'),
    newProfile(4, 'sleepy', sleepySamples(), 'ready'),
  ];
  profiles[0].tags.build = 'base';
  profiles[1].tags = { branch: 'pr-1', build: 'target' };
  profiles[2].error = 'bad magic at offset 0: not a perf.data file';
  profiles[3].tags.build = 'base';
  /* token: API requests need "Authorization: Bearer TOKEN" (null: open);
   * busy: that many API requests get 503 with Retry-After first;
   * holdNext: the next API request waits in held (call each to answer
   * it, as the state is then) */
  return { profiles, nextId: 5, requests: [], uploads: [], token: null, busy: 0, holdNext: false, held: [] };
}

/* The public view of a profile, as GET /api/v1/profiles/{id} gives it. */
function describe(p) {
  const o = {
    id: p.id, name: p.name, tags: p.tags, status: p.status, error: p.error, sha256: p.sha256,
    size: p.size, uploaded_at: p.uploaded_at, parse_ms: p.parse_ms, symbolized_pct: p.symbolized_pct,
  };
  if (p.warnings) o.warnings = p.warnings;
  /* parsed again (re-symbolized): the earlier parse is served meanwhile */
  if (p.resymbolizing && p.status !== 'ready') o.resymbolizing = true;
  if (p.status === 'ready' || o.resymbolizing) {
    const n = p.samples.filter((x) => !x.off).length, sw = p.samples.length - n;
    o.header = header('farm-' + p.id);
    o.events = [{ name: 'cpu-clock:ppp', type: 1, config: 0, sample_type: 295, sample_freq: 4000, ids: [1], samples: n }];
    o.records = { SAMPLE: n + sw, MMAP2: 40, COMM: 3, FINISHED_ROUND: 5 };
    o.samples_per_event = { 'cpu-clock:ppp': n };
    if (sw) {
      o.events.push({ name: 'sched:sched_switch', type: 2, config: 372, sample_type: 66983, sample_period: 1, ids: [2], samples: sw });
      o.samples_per_event['sched:sched_switch'] = sw;
      o.records.SWITCH = 2 * sw;
    }
    o.lost = 0;
  }
  return o;
}

/* The samples an answer counts: off-CPU weights count the switch-outs'
 * time (wall adds the CPU samples), the others the CPU samples. */
function filterSamples(p, q) {
  const w = q.get('weight');
  return p.samples.filter((s) =>
    (w === 'wall' || (w === 'offcpu') === !!s.off) &&
    (!q.get('comm') || s.comm === q.get('comm')) &&
    (!q.get('pid') || String(s.pid) === q.get('pid')) &&
    (!q.get('tid') || String(s.tid) === q.get('tid')) &&
    (!q.get('from_ns') || s.t >= Number(q.get('from_ns'))) &&
    (!q.get('to_ns') || s.t < Number(q.get('to_ns'))));
}

function weightOf(s, q) {
  const w = q.get('weight');
  return s.off && (w === 'offcpu' || w === 'wall') ? s.off : w === 'samples' ? 1 : s.period;
}

/* Kernel frames are stored with perfhubd's "_[k]" mark; as perfhubd does,
 * answers keep it only when asked with kernel=1 (never in /top). */
function frameName(f, q) { return q && q.get('kernel') ? f : f.replace(/_\[k\]$/, ''); }

/* The DSO of each frame, as perfhubd gives it ("dso", the full path) on
 * nodes below the comm; emit has none (the page must cope). */
const DSOS = {
  main: '/usr/bin/make', run: '/usr/bin/make', wait_child: '/usr/bin/make', parse: '/usr/lib/x86_64-linux-gnu/libparse.so.1',
  lex: '/usr/lib/x86_64-linux-gnu/libparse.so.1', 'do_syscall_64_[k]': '[kernel.kallsyms]', 'vfs_read_[k]': '[kernel.kallsyms]',
};

/* {name, value, children}: first level the comm, then frames outermost first. */
function tree(samples, q, key) {
  const top = { name: 'all', value: 0, children: [] };
  for (const s of samples) {
    const w = weightOf(s, q);
    let n = top;
    n[key] = (n[key] || 0) + w;
    for (const [i, raw] of [s.comm].concat(s.stack).entries()) {
      const f = i ? frameName(raw, q) : raw;
      let k = n.children.find((c) => c.name === f);
      if (!k) {
        k = { name: f, children: [] };
        if (i && DSOS[raw]) k.dso = DSOS[raw];
        n.children.unshift(k);
      }
      k[key] = (k[key] || 0) + w;
      n = k;
    }
  }
  return top;
}

function merge(a, b) {
  /* base tree a and target tree b (values under 'base'/'target') into one */
  const out = { name: a ? a.name : b.name, base: (a && a.base) || 0, target: (b && b.target) || 0, children: [] };
  const dso = (a && a.dso) || (b && b.dso);
  if (dso) out.dso = dso;
  const names = new Set([].concat(a ? a.children.map((c) => c.name) : [], b ? b.children.map((c) => c.name) : []));
  for (const nm of names) {
    out.children.push(merge(a && a.children.find((c) => c.name === nm), b && b.children.find((c) => c.name === nm)));
  }
  return out;
}

function top(samples, q) {
  const acc = new Map();
  for (const s of samples) {
    const w = weightOf(s, q);
    const seen = new Set();
    s.stack.map((x) => frameName(x, null)).forEach((f, i) => {
      const e = acc.get(f) || { name: f, self: 0, total: 0 };
      if (i === s.stack.length - 1) e.self += w;
      if (!seen.has(f)) { e.total += w; seen.add(f); }
      acc.set(f, e);
    });
  }
  return Array.from(acc.values()).sort((x, y) => y.self - x.self || y.total - x.total);
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function json(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/* what stub-views.js computes its answers with */
const helpers = { tree, top, merge, weightOf, filterSamples, frameName, DSOS, json };

function handler(state, webRoot) {
  const handle = (req, res) => {
    const u = new URL(req.url, 'http://stub');
    const q = u.searchParams;
    if (state.holdNext && u.pathname.startsWith('/api/')) {
      state.holdNext = false;
      state.held.push(() => handle(req, res));
      return;
    }
    state.requests.push(req.method + ' ' + u.pathname + u.search);
    const m = u.pathname.match(/^\/api\/v1\/profiles\/([^/]+)(?:\/([a-z]+))?$/);
    const find = (id) => state.profiles.find((p) => p.id === id);

    if (u.pathname === '/healthz') return json(res, 200, { status: 'ok' });
    if (u.pathname.startsWith('/api/')) {
      if (state.token && req.headers.authorization !== 'Bearer ' + state.token) {
        return json(res, 401, { error: 'a valid token is needed (Authorization: Bearer)' });
      }
      if (state.busy > 0) {
        state.busy--;
        res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
        return res.end(JSON.stringify({ error: 'heavy queries are running; retry in 1 s' }));
      }
    }
    if (u.pathname === '/api/v1/profiles' && req.method === 'POST') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const p = newProfile(state.nextId++, q.get('name') || 'upload', makeSamples(3), 'queued');
        p.tags = {};
        for (const t of q.getAll('tag')) { const e = t.indexOf('='); p.tags[t.slice(0, e)] = t.slice(e + 1); }
        p.sha256 = crypto.createHash('sha256').update(body).digest('hex');
        p.size = body.length;
        /* queued -> parsing -> ready over the next reads of it */
        p.reads = 0;
        state.profiles.unshift(p);
        state.uploads.push({ name: q.get('name'), tags: q.getAll('tag'), bytes: body.length, type: req.headers['content-type'], body });
        json(res, 202, { id: p.id, status: 'queued', sha256: p.sha256 });
      });
      return;
    }
    if (u.pathname === '/api/v1/profiles' && req.method === 'GET') {
      const picked = views.pick(state.profiles, q, 'q', res, json);
      if (!picked) return;
      let list = state.profiles.filter((p) => picked.includes(p) && (!q.get('status') || p.status === q.get('status')));
      const total = list.length;
      const off = Number(q.get('offset') || 0), lim = Number(q.get('limit') || 50);
      list = list.slice(off, off + lim).map(describe);
      return json(res, 200, { profiles: list, total });
    }
    if (m) {
      const p = find(decodeURIComponent(m[1]));
      if (!p) return json(res, 404, { error: 'no such profile' });
      if (req.method === 'DELETE' && !m[2]) {
        state.profiles = state.profiles.filter((x) => x !== p);
        res.writeHead(204);
        return res.end();
      }
      if (!m[2]) {
        if (p.reads !== undefined) {
          p.reads++;
          p.status = p.reads < 2 ? 'queued' : p.reads < 4 ? 'parsing' : 'ready';
        }
        return json(res, 200, describe(p));
      }
      if (p.status !== 'ready' && !p.resymbolizing) return json(res, 404, { error: 'no ready profile ' + p.id });
      const ss = filterSamples(p, q);
      switch (m[2]) {
        case 'flamegraph': return json(res, 200, tree(ss, q, 'value'));
        case 'top': return json(res, 200, { functions: top(ss, q).slice(0, Number(q.get('limit') || 100)) });
        case 'threads': {
          const t = new Map();
          for (const s of p.samples) {
            const e = t.get(s.tid) || { pid: s.pid, tid: s.tid, comm: s.comm, samples: 0 };
            e.samples++;
            t.set(s.tid, e);
          }
          return json(res, 200, { threads: Array.from(t.values()) });
        }
        case 'timeline': {
          const bms = Number(q.get('bucket_ms') || 10);
          const counts = [];
          const w = q.get('weight');
          if (w === 'offcpu' || w === 'wall') {
            /* as perfhubd: buckets with samples, period and off-CPU time */
            for (const s of filterSamples(p, q)) {
              const i = Math.floor((s.t - T0) / (bms * 1e6));
              const b = counts[i] || (counts[i] = { t_ns: T0 + i * bms * 1e6, samples: 0, period: 0, offcpu: 0 });
              b.samples++;
              if (s.off) b.offcpu += s.off; else b.period += s.period;
            }
            return json(res, 200, { bucket_ms: bms, bucket_ns: bms * 1e6, start_ns: T0, buckets: counts.filter(Boolean) });
          }
          for (const s of p.samples.filter((x) => !x.off)) {
            const i = Math.floor((s.t - T0) / (bms * 1e6));
            counts[i] = (counts[i] || 0) + weightOf(s, q);
          }
          for (let i = 0; i < counts.length; i++) counts[i] = counts[i] || 0;
          return json(res, 200, { bucket_ms: bms, start_ns: T0, buckets: counts });
        }
        case 'collapsed': {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          const lines = new Map();
          for (const s of ss) {
            const k = [s.comm].concat(s.stack.map((x) => frameName(x, q))).join(';');
            lines.set(k, (lines.get(k) || 0) + weightOf(s, q));
          }
          return res.end(Array.from(lines, ([k, v]) => k + ' ' + v + '\n').join(''));
        }
        case 'sandwich': case 'annotate': views.route(state, u, q, { view: m[2], profile: p }, res, helpers); return;
        default: return json(res, 404, { error: 'no such endpoint' });
      }
    }
    if (views.route(state, u, q, null, res, helpers)) return;
    if (u.pathname.startsWith('/api/')) return json(res, 404, { error: 'no such endpoint' });
    /* static files: only names in the web root, never a path outside it */
    const name = u.pathname === '/' ? 'index.html' : u.pathname.slice(1);
    if (!/^[a-z0-9_-]+\.(html|js|css)$/.test(name)) return json(res, 404, { error: 'not found' });
    fs.readFile(path.join(webRoot, name), (err, data) => {
      if (err) return json(res, 404, { error: 'not found' });
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(name)] });
      res.end(data);
    });
  };
  return handle;
}

/* Starts a stub on 127.0.0.1 (port 0: any free one); resolves to
 * {url, state, close}. */
function start(webRoot, port) {
  const state = createState();
  const server = http.createServer(handler(state, webRoot));
  return new Promise((resolve) => {
    server.listen(port || 0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ url: 'http://127.0.0.1:' + a.port, state, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

module.exports = { start, T0 };

if (require.main === module) {
  const root = path.join(__dirname, '..', '..', 'web');
  start(root, Number(process.argv[2] || 8099)).then((s) => console.log('stub perfhubd at ' + s.url));
}
