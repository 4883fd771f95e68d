/* annotate.js: one function's self samples by source line and by
 * instruction (/api/v1/profiles/{id}/annotate), as perf annotate shows
 * them: each line and instruction with its share of the function's self,
 * the source text where the server has the file. */
(function () {
  'use strict';
  const F = window.PerfhubFlame;
  const U = window.PerfhubUI;
  const { $, el, api, qs, showMessage } = U;

  const UNITS = { samples: 'samples', period: 'period', offcpu: 'off-CPU', wall: 'on+off-CPU' };

  const annotateView = {
    key: null,
    seq: 0,

    async show(s) {
      const id = s.id, p = s.params, fn = p.function || '';
      const ap = { function: fn, event: p.event, weight: p.weight, dso: p.dso };
      $('#an-title').textContent = fn ? 'Annotation of ' + fn : 'Annotation';
      const links = $('#an-links');
      links.textContent = '';
      const dp = { event: p.event, weight: p.weight };
      links.append(el('a', { href: F.formatHash({ view: 'profile', id: id, params: dp }) }, 'profile ' + id));
      if (fn) links.append(...U.functionLinks(id, fn, dp, ['profile', 'sandwich', 'trend']));
      const key = JSON.stringify([id, ap]);
      if (key === this.key) return;
      const seq = ++this.seq;
      this.key = null;
      this.clear();
      if (!fn) { showMessage('Name a function of profile ' + id + '.', true); return; }
      let j;
      try {
        j = await api('profiles/' + encodeURIComponent(id) + '/annotate' + qs(ap));
      } catch (e) {
        if (seq === this.seq) showMessage('Could not annotate ' + fn + ': ' + e.message);
        return;
      }
      if (seq !== this.seq || U.state.view !== 'annotate') return;
      this.key = key;
      this.render(id, j);
    },

    clear() {
      for (const sel of ['#an-facts', '#an-others', '#an-lines tbody', '#an-insns tbody']) $(sel).textContent = '';
      $('#an-problem').hidden = true;
    },

    render(id, j) {
      const self = typeof j.self === 'number' ? j.self : 0;
      const w = j.weight || U.DEFAULT_WEIGHT;
      const val = (v) => F.fmtWeight(v || 0, w);
      const share = (v) => (self > 0 ? F.fmtPct((100 * (v || 0)) / self) : '-');
      /* a row's background: how much of the function's self it holds */
      const heat = (v) => (self > 0 && v > 0 ? 'background:hsl(8,80%,' + Math.round(96 - (36 * v) / self) + '%)' : null);
      for (const th of document.querySelectorAll('#view-annotate .an-unit')) th.textContent = UNITS[w] || w;

      const dl = $('#an-facts');
      const fact = (k, v) => { if (v !== undefined && v !== null && v !== '') dl.append(el('dt', null, k), el('dd', null, String(v))); };
      fact('function', j.function + (j.symbol && j.symbol !== j.function ? ' (symbol ' + j.symbol + ')' : ''));
      fact('self', F.fmtWeight(self, w, true));
      fact('DSO', j.dso);
      fact('build-id', j.build_id);
      fact('source file', j.file);
      fact('addresses', j.addresses);
      fact('disassembler', j.disassembler);
      /* the same name in other DSOs: each one's own annotation */
      const others = Array.isArray(j.other_dsos) ? j.other_dsos : [];
      if (others.length) {
        const box = $('#an-others');
        box.append(el('h2', null, 'Also in'));
        for (const o of others) {
          box.append(el('div', null, el('a', { href: F.formatHash({ view: 'annotate', id: id,
            params: Object.assign({}, U.state.params, { dso: o.dso }) }) }, o.dso), ' ' + F.fmtWeight(o.self || 0, w, true)));
        }
      }
      if (j.problem) {
        $('#an-problem').textContent = j.problem;
        $('#an-problem').hidden = false;
      }

      /* the source text of the function's own file, when the server has it */
      const src = j.source && Array.isArray(j.source.text) ? j.source : null;
      const textOf = (l) => (src && !l.file && l.line >= src.first_line && l.line < src.first_line + src.text.length
        ? src.text[l.line - src.first_line] : null);
      const lines = $('#an-lines tbody');
      for (const l of Array.isArray(j.lines) ? j.lines : []) {
        const where = (l.file ? l.file.slice(l.file.lastIndexOf('/') + 1) + ':' : '') + l.line;
        const text = textOf(l);
        lines.append(el('tr', { 'data-line': l.line, 'data-file': l.file || null, style: heat(l.samples) },
          el('td', { class: 'num', title: l.file || j.file || null }, where), el('td', { class: 'num' }, val(l.samples)),
          el('td', { class: 'num' }, share(l.samples)), el('td', { class: 'src' }, text === null ? '' : text)));
      }
      const insns = $('#an-insns tbody');
      for (const i of Array.isArray(j.instructions) ? j.instructions : []) {
        const where = i.line === null || i.line === undefined ? '' : (i.file ? i.file.slice(i.file.lastIndexOf('/') + 1) + ':' : '') + i.line;
        insns.append(el('tr', { 'data-address': i.address, style: heat(i.samples) },
          el('td', { class: 'addr' }, i.address), el('td', { class: 'num' }, val(i.samples)), el('td', { class: 'num' }, share(i.samples)),
          el('td', { class: 'src' }, i.text === null || i.text === undefined ? '(not read)' : i.text),
          el('td', { class: 'num', title: i.file || null }, where)));
      }
    },
  };

  U.views.annotate = annotateView;
})();
