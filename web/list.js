/* list.js: the profile list - a selector (sent as /profiles?q=) and
 * filters, pages, live status while anything is being parsed, delete, and
 * B/T picks that open a comparison. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, headers, showMessage, fmtTime, firstArray, profileSamples, tagList } = U;

  let listTimer = null;
  function stopListPoll() { if (listTimer) { clearTimeout(listTimer); listTimer = null; } }

  const PAGE = 50;
  const listView = {
    cmp: { base: '', target: '' },
    seq: 0,          /* the latest load */

    leave() { stopListPoll(); },

    init() {
      $('#list-filter').addEventListener('submit', (e) => {
        e.preventDefault();
        const f = e.target.elements;
        U.go({ view: 'list', params: { sel: f.sel.value.trim(), q: f.q.value.trim(), status: f.status.value, hostname: f.hostname.value.trim(),
          tag: f.tag.value.trim(), since: f.since.value, until: f.until.value } });
      });
      $('#prev').addEventListener('click', () => U.setParams({ offset: Math.max(0, (+U.state.params.offset || 0) - PAGE) || '' }));
      $('#next').addEventListener('click', () => U.setParams({ offset: (+U.state.params.offset || 0) + PAGE }));
    },

    show(s, prev) {
      const params = s.params;
      /* back from another view: no rows of an old answer while the list loads */
      if (prev.view !== 'list') $('#profiles tbody').textContent = '';
      const f = $('#list-filter');
      for (const k of ['sel', 'q', 'status', 'hostname', 'tag', 'since', 'until']) f.elements[k].value = params[k] || '';
      this.selLinks(params.sel);
      this.load(params);
    },

    /* With a selector: its trend and a comparison with it as the base. */
    selLinks(sel) {
      const box = $('#list-sel-links');
      box.textContent = '';
      box.hidden = !sel;
      if (!sel) return;
      box.append(el('a', { href: F.formatHash({ view: 'trend', params: { sel: sel } }) }, 'trend'),
        el('a', { href: F.formatHash({ view: 'compare', params: { base_q: sel } }), title: 'compare this selection (base) with another' }, 'compare'));
    },

    async load(params) {
      stopListPoll();
      /* an answer a newer load overtook is dropped (a 401 asked without
       * the token given since, a filter changed meanwhile) */
      const seq = ++this.seq;
      const offset = Math.max(0, parseInt(params.offset || '0', 10) || 0);
      let j;
      try {
        j = await api('profiles' + qs({ q: params.sel, limit: PAGE, offset: offset, status: params.status,
          hostname: params.hostname, tag: params.tag, since: params.since, until: params.until }));
      } catch (e) {
        if (seq !== this.seq) return;
        const bad = U.markSelector($('#list-filter').elements.sel, e, 'q');
        if (bad) $('#profiles tbody').textContent = '';
        showMessage((bad ? 'Bad selector: ' : 'Could not list profiles: ') + e.message);
        return;
      }
      if (seq !== this.seq) return;
      U.markSelector($('#list-filter').elements.sel, null, 'q');
      if (U.state.view !== 'list') return;
      const all = firstArray(j, ['profiles']);
      const q = (params.q || '').toLowerCase();
      const rows = q ? all.filter((p) => [p.id, p.name, p.hostname, p.header && p.header.hostname]
        .concat(tagList(p.tags)).some((s) => s && String(s).toLowerCase().includes(q))) : all;
      this.render(rows);
      const total = typeof j.total === 'number' ? j.total : all.length;
      $('#page-info').textContent = total ? (offset + 1) + '\u2013' + (offset + all.length) + ' of ' + total : 'no profiles';
      $('#prev').disabled = offset === 0;
      $('#next').disabled = offset + all.length >= total;
      /* live status: refresh while anything is still being parsed */
      if (all.some((p) => p.status === 'queued' || p.status === 'parsing')) {
        listTimer = setTimeout(() => { if (U.state.view === 'list') this.load(U.state.params); }, U.POLL_MS);
      }
    },

    render(rows) {
      const tb = $('#profiles tbody');
      tb.textContent = '';
      for (const p of rows) {
        const host = (p.header && p.header.hostname) || p.hostname || '';
        const cmp = el('td', null,
          el('label', { title: 'use as base' }, el('input', { type: 'radio', name: 'cmp-base', value: p.id,
            checked: this.cmp.base === String(p.id), onchange: () => { this.cmp.base = String(p.id); this.cmpReady(); } }), 'B'),
          ' ',
          el('label', { title: 'use as target' }, el('input', { type: 'radio', name: 'cmp-target', value: p.id,
            checked: this.cmp.target === String(p.id), onchange: () => { this.cmp.target = String(p.id); this.cmpReady(); } }), 'T'));
        const tags = el('td');
        for (const t of tagList(p.tags)) tags.append(el('span', { class: 'tag' }, t));
        const status = el('td', { class: 'status-' + p.status, title: p.error || '' }, p.status,
          p.status === 'failed' && p.error ? el('div', { class: 'muted' }, p.error) : null);
        tb.append(el('tr', { 'data-id': p.id },
          el('td', null, el('a', { href: F.formatHash({ view: 'profile', id: p.id, params: {} }) }, p.name || p.id)),
          el('td', null, host),
          el('td', null, fmtTime(p.uploaded_at)),
          status,
          el('td', { class: 'num' }, profileSamples(p) === undefined ? '' : F.fmtCount(profileSamples(p))),
          el('td', { class: 'num' }, typeof p.size === 'number' ? F.fmtBytes(p.size) : ''),
          tags, cmp,
          el('td', null, el('button', { type: 'button', title: 'delete', 'aria-label': 'delete ' + (p.name || p.id),
            onclick: () => this.remove(p) }, '\u2715'))));
      }
      if (!rows.length) tb.append(el('tr', null, el('td', { colspan: 9, class: 'muted' }, 'No profiles. Upload a perf.data file above.')));
    },

    cmpReady() {
      if (this.cmp.base && this.cmp.target && this.cmp.base !== this.cmp.target) {
        U.go({ view: 'compare', params: { base: this.cmp.base, target: this.cmp.target } });
      }
    },

    async remove(p) {
      if (!confirm('Delete profile ' + (p.name || p.id) + '?')) return;
      try {
        await api('profiles/' + encodeURIComponent(p.id), { method: 'DELETE', headers: headers() });
        this.load(U.state.params);
      } catch (e) {
        showMessage('Could not delete: ' + e.message);
      }
    },
  };

  U.views.list = listView;
})();
