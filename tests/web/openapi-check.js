/* openapi-check: docs/openapi.json against a running perfhubd.
 *
 *   node openapi-check.js --spec docs/openapi.json --routes ROUTES --server URL --fixture FILE
 *
 * 1. the description is valid OpenAPI (@apidevtools/swagger-parser);
 * 2. every route the server answers (ROUTES: `tests/http-routes --list`,
 *    read from the routing table) is described, and every described
 *    operation is a route;
 * 3. every example (parameters, request bodies, answers) fits its schema;
 * 4. a round trip of every example: each operation is sent with its
 *    examples (the fixture gives what cannot be written in the description:
 *    a recording's bytes, an ELF file and its build-id, the profile to
 *    delete) and must answer a documented success whose body fits the
 *    documented schema.
 * Prints one line per check; exits 1 on the first failure. */
'use strict';
const path = require('path');
const fs = require('fs');
const nm = (m) => path.join(__dirname, 'node_modules', m);
const SwaggerParser = require(nm('@apidevtools/swagger-parser'));
const Ajv2020 = require(nm('ajv/dist/2020'));
const addFormats = require(nm('ajv-formats'));

const METHODS = ['get', 'head', 'put', 'post', 'patch', 'delete'];
/* the order of the round trip: reads first; what re-parses or deletes last */
const ORDER = ['get', 'head', 'patch', 'put', 'post', 'delete'];
const LAST = ['resymbolizeProfile', 'deleteProfile'];

function args() {
  const a = {};
  for (let i = 2; i + 1 < process.argv.length; i += 2) a[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
  return a;
}

let checks = 0;
function ok(cond, what) {
  checks++;
  if (!cond) throw new Error('FAIL: ' + what);
}

const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function main(a) {
  const text = fs.readFileSync(a.spec, 'utf8');
  const spec = JSON.parse(text);
  const fixture = JSON.parse(fs.readFileSync(a.fixture, 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(spec, 'spec');
  const validator = (pointer) => ajv.getSchema('spec#' + pointer);
  return { spec, text, fixture, validator };
}

/* 2: the routing table and the description name the same operations */
function checkRoutes(spec, routesFile) {
  const routes = fs.readFileSync(routesFile, 'utf8').trim().split('\n').map((l) => l.split(' '));
  const table = new Set(routes.map(([m, p]) => m + ' ' + p));
  for (const [method, p] of routes) {
    const item = spec.paths[p];
    ok(item && item[method.toLowerCase()],
      'perfhubd answers ' + method + ' ' + p + ' (daemon/http/routes.c) but docs/openapi.json does not ' +
      'describe it: add "' + p + '": {"' + method.toLowerCase() + '": ...} to docs/openapi.json, ' +
      'with its parameters, body, answers and examples, and the same to docs/api.md');
  }
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const m of METHODS.filter((x) => item[x])) {
      const as = m === 'head' ? 'GET' : m.toUpperCase();
      ok(table.has(as + ' ' + p), 'docs/openapi.json describes ' + m.toUpperCase() + ' ' + p +
        ' but perfhubd has no such route in daemon/http/routes.c');
    }
  }
  console.log('ok: ' + routes.length + ' routes, each described; every described operation is a route');
}

function operations(spec) {
  const ops = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const m of METHODS.filter((x) => item[x])) {
      ops.push({ path: p, method: m, op: item[m], params: (item.parameters || []).concat(item[m].parameters || []),
        pointer: '/paths/' + esc(p) + '/' + m });
    }
  }
  return ops;
}

function resolveParam(spec, p) {
  if (!p.$ref) return p;
  return spec.components.parameters[p.$ref.split('/').pop()];
}

/* 3: every example fits its schema */
function checkExamples(spec, validator, ops) {
  let n = 0;
  const fits = (pointer, example, what) => {
    const v = validator(pointer);
    ok(v, 'no schema at ' + pointer);
    ok(v(example), what + ': the example does not fit its schema: ' + JSON.stringify(v.errors));
    n++;
  };
  for (const o of ops) {
    for (const [status, r] of Object.entries(o.op.responses)) {
      for (const [type, media] of Object.entries(r.content || {})) {
        if (media.example !== undefined && type === 'application/json') {
          fits(o.pointer + '/responses/' + status + '/content/' + esc(type) + '/schema', media.example,
            o.method.toUpperCase() + ' ' + o.path + ' ' + status);
        }
      }
    }
    const body = o.op.requestBody && o.op.requestBody.content['application/json'];
    if (body && body.example !== undefined) {
      fits(o.pointer + '/requestBody/content/application~1json/schema', body.example, o.op.operationId + ' body');
    }
  }
  for (const [name, p] of Object.entries(spec.components.parameters)) {
    if (p.example !== undefined) fits('/components/parameters/' + name + '/schema', p.example, 'parameter ' + name);
  }
  console.log('ok: ' + n + ' examples fit their schemas');
}

/* The request an operation's examples make. */
function request(spec, o, fixture) {
  let url = o.path;
  const query = [];
  for (const raw of o.params) {
    const p = resolveParam(spec, raw);
    let v = p.example;
    /* a function the recording has (which one is the machine's business) */
    if (p.in === 'query' && p.name === 'function' && fixture.function) v = fixture.function;
    if (p.in === 'path') {
      if (p.name === 'build_id') v = fixture.build_id;
      if (p.name === 'id' && o.op.operationId === 'deleteProfile') v = fixture.delete_id;
      ok(v !== undefined, o.op.operationId + ': path parameter ' + p.name + ' has no example');
      url = url.replace('{' + p.name + '}', encodeURIComponent(String(v)));
    } else if (p.in === 'query' && v !== undefined) {
      query.push(encodeURIComponent(p.name) + '=' + encodeURIComponent(String(v)));
    } else {
      ok(!p.required, o.op.operationId + ': required parameter ' + p.name + ' has no example');
    }
  }
  const q = query.join('&');
  const init = { method: o.method.toUpperCase(), headers: {} };
  const rb = o.op.requestBody;
  if (rb) {
    const types = Object.keys(rb.content);
    if (rb.content['application/json']) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(rb.content['application/json'].example);
    } else {
      /* bytes no description can hold: the fixture's files */
      const file = { uploadProfile: fixture.recording, debuginfoPut: fixture.elf,
        debuginfoArchive: fixture.archive }[o.op.operationId];
      ok(file, o.op.operationId + ': no fixture for a ' + types[0] + ' body');
      init.headers['Content-Type'] = types[0];
      init.body = fs.readFileSync(file);
    }
  }
  return { url: url + (q ? '?' + q : ''), init };
}

/* 4: each operation with its examples, answered as described */
async function roundTrip(server, spec, validator, ops, fixture, servedText) {
  const rank = (o) => LAST.indexOf(o.op.operationId) + 1 || 0;
  ops.sort((x, y) => rank(x) - rank(y) || ORDER.indexOf(x.method) - ORDER.indexOf(y.method));
  for (const o of ops) {
    const { url, init } = request(spec, o, fixture);
    const res = await fetch(server + url, init);
    const body = Buffer.from(await res.arrayBuffer());
    const what = init.method + ' ' + url;
    const documented = o.op.responses[String(res.status)];
    ok(documented, what + ': answered ' + res.status + ' (' + body.toString().slice(0, 200) +
      '), which the description does not list');
    ok(res.status >= 200 && res.status < 300, what + ': the example did not succeed: ' + res.status + ' ' +
      body.toString().slice(0, 300));
    const type = (res.headers.get('content-type') || '').split(';')[0].trim();
    if (init.method === 'HEAD' || res.status === 204) {
      ok(body.length === 0, what + ': a body where none is described');
    } else {
      const media = documented.content && documented.content[type];
      ok(media, what + ': answered ' + type + ', described: ' + Object.keys(documented.content || {}).join(', '));
      if (type === 'application/json') {
        const v = validator(o.pointer + '/responses/' + res.status + '/content/application~1json/schema');
        const doc = JSON.parse(body.toString());
        ok(v(doc), what + ': the answer does not fit its schema: ' + JSON.stringify(v.errors).slice(0, 600));
      } else {
        ok(body.length > 0, what + ': an empty ' + type + ' answer');
      }
    }
    if (o.op.operationId === 'getOpenapi') {
      ok(body.toString() === servedText, what + ': not the bytes of docs/openapi.json');
    }
    console.log('ok: ' + what + ' -> ' + res.status + ' ' + type);
  }
}

(async () => {
  const a = args();
  const { spec, text, fixture, validator } = main(a);
  await SwaggerParser.validate(JSON.parse(text));
  console.log('ok: docs/openapi.json is valid OpenAPI ' + spec.openapi);
  checkRoutes(spec, a.routes);
  const ops = operations(spec);
  checkExamples(spec, validator, ops);
  await roundTrip(a.server, spec, validator, ops, fixture, text);
  console.log('openapi-check: ' + checks + ' checks passed');
})().catch((e) => {
  console.log(e.message || String(e));
  process.exit(1);
});
