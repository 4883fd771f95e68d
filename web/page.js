/* page.js: what every view of the page shares - DOM and number helpers,
 * the JSON API client and the router. Every view is a URL fragment
 * (#/ the list, #/profile/ID?..., #/compare?..., ...), all state in the
 * URL so that any view can be pasted into a chat. A view module registers
 * itself in PerfhubUI.views under its name: {init(), show(state, prev),
 * leave(), redraw(), searchBox}; app.js starts them. It talks only to the
 * JSON API of perfhubd (README, perfhubd(8)); the model lives in flame.js. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const API = 'api/v1/';

  /* ---- small helpers ----------------------------------------------------- */

  const $ = (sel) => document.querySelector(sel);

  /* el('td', {class: 'num'}, 'text', child...) */
  function el(tag, attrs) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else if (k === 'text') e.textContent = v;
        /* through the CSSOM: the server's Content-Security-Policy
         * (style-src 'self') refuses style attributes */
        else if (k === 'style') e.style.cssText = String(v);
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) {
      const c = arguments[i];
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  function token() {
    try { return localStorage.getItem('perfhub.token') || ''; } catch (e) { return ''; }
  }

  function headers() {
    const t = token();
    return t ? { Authorization: 'Bearer ' + t } : {};
  }

  function qs(params) {
    const u = new URLSearchParams();
    for (const k of Object.keys(params)) {
      const v = params[k];
      if (v === undefined || v === null || v === '') continue;
      if (Array.isArray(v)) v.forEach((x) => u.append(k, x));
      else u.set(k, v);
    }
    const s = u.toString();
    return s ? '?' + s : '';
  }

  /* A server that needs a token (require-read-token) answers the API 401
   * while the page itself loads: the token box says so and takes focus;
   * app.js asks again once a token is given. */
  function askForToken() {
    const tok = $('#token');
    tok.classList.add('wanted');
    tok.focus();
  }

  /* JSON from the API; a failure throws an Error carrying the server's
   * {"error"} text and the HTTP status. A busy server (503 with
   * Retry-After of 1..30 s: too many heavy queries at once) is asked
   * again, up to three times. */
  async function api(path, opts) {
    const url = path.startsWith('/') || path.startsWith('healthz') ? path : API + path;
    const asked = token();
    let r;
    for (let attempt = 0; ; attempt++) {
      r = await fetch(url, Object.assign({ headers: headers() }, opts || {}));
      const wait = Number(r.headers.get('Retry-After'));
      if (r.status !== 503 || attempt >= 3 || !(wait > 0 && wait <= 30)) break;
      await new Promise((res) => setTimeout(res, wait * 1000));
    }
    if (r.status === 204) return null;
    const type = r.headers.get('Content-Type') || '';
    const body = type.includes('json') ? await r.json().catch(() => null) : await r.text();
    if (!r.ok) {
      /* not for a question asked before the token now given */
      if (r.status === 401 && token() === asked) askForToken();
      const msg = r.status === 401 ? 'this server wants a token: enter it in the Token box above'
        : body && body.error ? body.error : 'HTTP ' + r.status;
      const err = new Error(msg);
      err.status = r.status;
      err.body = body;
      throw err;
    }
    return body;
  }

  function showMessage(text, info) {
    const m = $('#message');
    if (!text) { m.hidden = true; return; }
    m.textContent = text;
    m.className = 'message' + (info ? ' info' : '');
    m.hidden = false;
  }

  function fmtTime(v) {
    if (v === undefined || v === null || v === '') return '-';
    const d = typeof v === 'number' ? new Date(v < 1e11 ? v * 1000 : v) : new Date(v);
    return isNaN(d) ? String(v) : d.toLocaleString();
  }

  function firstArray(j, keys) {
    if (Array.isArray(j)) return j;
    for (const k of keys) if (j && Array.isArray(j[k])) return j[k];
    return [];
  }

  function profileSamples(p) {
    if (typeof p.samples === 'number') return p.samples;
    if (p.samples_per_event && typeof p.samples_per_event === 'object') {
      return Object.values(p.samples_per_event).reduce((a, b) => a + (+b || 0), 0);
    }
    return undefined;
  }

  function tagList(tags) {
    if (!tags) return [];
    if (Array.isArray(tags)) return tags.map(String);
    return Object.keys(tags).map((k) => k + '=' + tags[k]);
  }

  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'); }

  /* A selector box after an answer: marked when the server refused the
   * selector it holds (400 naming its parameter), clear otherwise. */
  function markSelector(input, err, param) {
    const bad = !!(err && err.status === 400 && err.body && err.body.parameter === param);
    input.toggleAttribute('aria-invalid', bad);
    input.title = bad ? err.message : '';
    return bad;
  }

  /* The weight the page asks for when the URL names none: the server's
   * default for every answer, the sample period as stackcollapse-perf
   * sums it (docs/query.md). */
  const DEFAULT_WEIGHT = 'period';

  /* A profile view's data parameters from its URL state: the flame
   * graph's filters and weight, which /sandwich takes as well. */
  const DATA_KEYS = ['event', 'comm', 'pid', 'tid', 'weight', 'from_ns', 'to_ns'];
  function dataParams(params) {
    const p = {};
    for (const k of DATA_KEYS) if (params[k]) p[k] = params[k];
    if (!p.weight) p.weight = DEFAULT_WEIGHT;
    return p;
  }

  /* Links to the views of one function of a profile (`which` of
   * 'profile', 'sandwich', 'annotate', 'trend'): its flame graph with the
   * function highlighted, its callers and callees (with the flame graph's
   * filters, dp), its annotation (event and weight only: addresses are
   * kept per event, not per thread or time), its trend over recordings.
   * A click on one stays with the link (rows around them take clicks). */
  function functionLinks(id, name, dp, which) {
    const w = which || ['sandwich', 'annotate', 'trend'];
    const stop = (e) => e.stopPropagation();
    const link = (cls, text, state, title) => el('a', { class: 'to-' + cls, href: F.formatHash(state), title: title, onclick: stop, onkeydown: stop }, text);
    const out = [];
    if (w.includes('profile')) {
      out.push(link('profile', 'flame graph', { view: 'profile', id: id, params: Object.assign({}, dp, { q: '/^' + escapeRe(name) + '$/' }) },
        'the flame graph with ' + name + ' highlighted'));
    }
    if (w.includes('sandwich')) {
      out.push(link('sandwich', 'callers & callees', { view: 'sandwich', id: id, params: Object.assign({}, dp, { function: name }) },
        'who calls ' + name + ' and what it calls'));
    }
    if (w.includes('annotate')) {
      out.push(link('annotate', 'annotate', { view: 'annotate', id: id, params: { function: name, event: dp.event, weight: dp.weight } },
        name + "'s samples by source line and instruction"));
    }
    if (w.includes('trend')) out.push(link('trend', 'trend', { view: 'trend', params: { function: name } }, name + ' over the recordings'));
    return out;
  }

  /* ---- routing ------------------------------------------------------------ */

  const U = {
    API, $, el, token, headers, qs, api, showMessage, fmtTime, firstArray, profileSamples, tagList, escapeRe, markSelector, functionLinks,
    DEFAULT_WEIGHT, dataParams,
    POLL_MS: 1500,
    views: {},
    /* the URL state being shown: {view, id, params}; replaced by route() */
    state: { view: null, id: null, params: {} },
    go, setParams, route,
  };

  function go(state, replace) {
    const h = F.formatHash(state);
    if (h === location.hash) return;
    if (replace) history.replaceState(null, '', h);
    else history.pushState(null, '', h);
    route();
  }

  /* Updates some URL parameters of the current view. */
  function setParams(changes, replace) {
    const p = Object.assign({}, U.state.params, changes);
    go({ view: U.state.view, id: U.state.id, params: p }, replace);
  }

  function route() {
    const s = F.parseHash(location.hash);
    const prev = U.state;
    U.state = s;
    for (const v of Object.keys(U.views)) {
      $('#view-' + v).hidden = v !== s.view;
      if (v !== s.view && U.views[v].leave) U.views[v].leave();
    }
    for (const a of document.querySelectorAll('.bar nav a[data-view]')) a.toggleAttribute('aria-current', a.dataset.view === s.view);
    showMessage('');
    U.views[s.view].show(s, prev);
  }

  window.PerfhubUI = U;
})();
