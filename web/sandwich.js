/* sandwich.js: callers and callees of one function of a profile
 * (/api/v1/profiles/{id}/sandwich): the callers drawn above the function
 * (flame layout, each caller above the one it called, out to the comm),
 * the callees below it (icicle layout). A click on a frame makes that
 * function the one in the middle. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage, firstArray } = U;

  const sandwichView = {
    callers: null,
    callees: null,
    key: null,
    namesOf: null,
    seq: 0,

    redraw() { this.callers.draw(); this.callees.draw(); },

    init() {
      const follow = (fv) => (path) => {
        if (!path.length || !fv.tree) return;
        const n = F.findPath(fv.tree, path);
        if (F.frameKind(n) !== 'comm') U.setParams({ function: n.name });
      };
      this.callers = new U.FlameView($('#sw-callers'), { onZoom: (path) => follow(this.callers)(path) });
      this.callees = new U.FlameView($('#sw-callees'), { onZoom: (path) => follow(this.callees)(path) });
      this.callees.icicle = true;
      $('#sw-form').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        U.setParams({ function: f.function.value.trim(), weight: f.weight.value });
      });
    },

    async show(s) {
      const id = s.id, p = s.params, fn = p.function || '';
      const dp = U.dataParams(p);
      const f = $('#sw-form').elements;
      f.function.value = fn;
      f.weight.value = dp.weight;
      $('#sw-title').textContent = fn ? 'Callers and callees of ' + fn : 'Callers and callees';
      const links = $('#sw-links');
      links.textContent = '';
      links.append(el('a', { href: F.formatHash({ view: 'profile', id: id, params: dp }) }, 'profile ' + id));
      if (fn) links.append(...U.functionLinks(id, fn, dp, ['profile', 'annotate', 'trend']));
      this.fillNames(id, dp);
      const key = JSON.stringify([id, fn, dp]);
      if (key === this.key) return;
      const seq = ++this.seq;
      this.key = null;
      for (const fv of [this.callers, this.callees]) { fv.setTree(null); fv.draw(); }
      if (!fn) { showMessage('Name a function of profile ' + id + '.', true); return; }
      let j;
      try {
        j = await api('profiles/' + encodeURIComponent(id) + '/sandwich' + qs(Object.assign({ function: fn }, dp)));
      } catch (e) {
        if (seq === this.seq) showMessage('Could not get the callers and callees of ' + fn + ': ' + e.message);
        return;
      }
      if (seq !== this.seq || U.state.view !== 'sandwich') return;
      this.key = key;
      this.callers.setTree(F.buildTree(j.callers, { sandwich: 'callers' }), dp.weight);
      this.callees.setTree(F.buildTree(j.callees, { sandwich: 'callees' }), dp.weight);
      this.redraw();
    },

    /* the profile's functions, offered in the function box */
    async fillNames(id, dp) {
      const nk = JSON.stringify([id, dp.event || '', dp.weight]);
      if (nk === this.namesOf) return;
      this.namesOf = nk;
      const list = $('#sw-names');
      list.textContent = '';
      try {
        const j = await api('profiles/' + encodeURIComponent(id) + '/top' + qs({ event: dp.event, weight: dp.weight, limit: 500 }));
        if (nk !== this.namesOf) return;
        for (const r of firstArray(j, ['functions'])) list.append(el('option', { value: r.name }));
      } catch (e) {
        this.namesOf = null; /* the sandwich's own answer says what is wrong */
      }
    },
  };

  U.views.sandwich = sandwichView;
})();
