/* app.js: starts the page - the views (page.js and one module each),
 * the token box, the server's health, the keys and redraws every view
 * shares, and the test hook window.PerfhubPage (docs/web.md). */
(function () {
  'use strict';
  const U = window.PerfhubUI;
  const { $, api, token } = U;

  /* ---- health ----------------------------------------------------------------- */

  async function health() {
    const h = $('#health');
    try {
      const j = await api('healthz');
      h.className = 'health ' + (j && j.status === 'ok' ? 'ok' : 'bad');
      h.title = 'server: ' + (j && j.status);
    } catch (e) {
      h.className = 'health bad';
      h.title = 'server: ' + e.message;
    }
    setTimeout(health, 15000);
  }

  /* ---- start ---------------------------------------------------------------------- */

  /* The test hook (docs/web.md): what the canvases and the trend chart
   * show, for browser tests and for anyone checking the page from the
   * console. Each carries data-hash, the URL state its last drawing shows. */
  const canvases = {
    profile: () => U.views.profile.fg, compare: () => U.views.compare.fg, trend: () => U.views.trend.fg,
    callers: () => U.views.sandwich.callers, callees: () => U.views.sandwich.callees,
  };
  window.PerfhubPage = {
    frames: (which) => (canvases[which] || canvases.profile)().frames(),
    heat: () => U.views.profile.heatGeom || null,
    trend: () => U.views.trend.geom || null,
  };

  function init() {
    const tok = $('#token');
    tok.value = token();
    tok.addEventListener('change', () => {
      try { localStorage.setItem('perfhub.token', tok.value.trim()); } catch (e) { /* private mode */ }
      /* a token given after a 401: the view asks again with it */
      if (tok.classList.contains('wanted')) {
        tok.classList.remove('wanted');
        U.route();
      }
    });
    U.initUpload();
    document.addEventListener('keydown', (e) => {
      if (e.key === '/' && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) {
        const v = U.views[U.state.view];
        if (v && v.searchBox) { e.preventDefault(); $(v.searchBox).focus(); }
      }
    });
    for (const v of Object.values(U.views)) if (v.init) v.init();
    let rt = null;
    const redraw = () => {
      clearTimeout(rt);
      rt = setTimeout(() => {
        const v = U.views[U.state.view];
        if (v && v.redraw) v.redraw();
      }, 100);
    };
    window.addEventListener('resize', redraw);
    window.addEventListener('scroll', U.tipAfterScroll, { passive: true });
    /* a new pixel ratio without a resize (the window moved to another
     * screen): the canvases' backing stores must follow it */
    const watchRatio = () => {
      if (!window.matchMedia) return;
      const mq = window.matchMedia('(resolution: ' + (window.devicePixelRatio || 1) + 'dppx)');
      const changed = () => { mq.removeEventListener('change', changed); redraw(); watchRatio(); };
      mq.addEventListener('change', changed);
    };
    watchRatio();
    /* hashchange covers back/forward and edited URLs; go() routes itself
     * after pushState, which fires no event. */
    window.addEventListener('hashchange', U.route);
    U.route();
    health();
  }

  init();
})();
