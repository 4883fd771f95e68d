/* The page's views of many recordings and the deeper views of one, run in
 * a DOM (jsdom) against the stand-in server (tests/web/stub-server.js and
 * tests/web/stub-views.js): a selector in the list box lists what
 * /profiles?q= lists, and a bad one is marked; the trend chart's points
 * are /series' (values, order, groups), a click on one opens its
 * recording, a click on a frame of the merged graph picks its function;
 * the compare view with selectors shows /diff's ranked rows; the off-CPU
 * toggle asks for and draws weight=offcpu and wall (and is not offered
 * without off-CPU time); the callers and callees from a frame click and
 * from a /top row are /sandwich's trees, a click there follows a caller;
 * the annotation's lines and instructions are /annotate's. Every
 * expected value comes from the stand-in's own JSON. DOM snapshots go to
 * $PERFHUB_TEST_TMP/web-views/. */
'use strict';
const path = require('path');
const top = path.resolve(process.env.top_srcdir || path.join(__dirname, '..'));
const H = require(path.join(top, 'tests', 'web', 'harness.js'));
const stub = require(path.join(top, 'tests', 'web', 'stub-server.js'));
const F = require(path.join(top, 'web', 'flame.js'));
const { WIDTH, ROW_H, ok, until, api } = H;

const outDir = path.join(process.env.PERFHUB_TEST_TMP || '/tmp', 'web-views');
const enc = encodeURIComponent;

/* every node name of an API tree, the root's too */
function namesOf(tree) {
  const out = new Set();
  (function walk(n) { out.add(n.name); (n.children || []).forEach(walk); })(tree);
  return out;
}

async function main() {
  const server = await stub.start(path.join(top, 'web'));
  const base = server.url;
  const P = await H.openPage(base, outDir);
  const { w, d, $, nav, texts, mouse, errors } = P;
  const hash = () => F.parseHash(w.location.hash);
  const rowsOf = (sel) => Array.from(d.querySelectorAll(sel)).map((tr) => Array.from(tr.cells).map((c) => c.textContent));
  const submit = (form) => form.dispatchEvent(new w.Event('submit', { bubbles: true, cancelable: true }));
  /* a click on the middle of the frame a path names, as laid out for the page's width */
  const clickFrame = (canvas, tree, names, icicle) => {
    const rows = F.layout(tree, tree, WIDTH, 0.3);
    const n = F.findPath(tree, names);
    const r = rows[n.depth].find((x) => x.node === n);
    const y = (icicle ? n.depth : rows.length - 1 - n.depth) * ROW_H + 2 + ROW_H / 2;
    mouse($(canvas), 'click', r.x + r.w / 2, y);
  };

  try {
    /* ---- the list: a selector filters it as /profiles?q= does ---- */
    const sel = '{build="base"}';
    await until(() => d.querySelectorAll('#profiles tbody tr[data-id]').length > 0, 'list');
    $('#list-filter').elements.sel.value = sel;
    submit($('#list-filter'));
    const want = (await api(base, 'profiles?limit=50&q=' + enc(sel))).profiles.map((p) => p.id);
    ok(want.length === 2, 'the stand-in picks two profiles: ' + want);
    await until(() => Array.from(d.querySelectorAll('#profiles tbody tr[data-id]')).map((tr) => tr.dataset.id).join() === want.join(),
      'the selector lists what /profiles?q= lists');
    ok(hash().params.sel === sel, 'the selector in the URL');
    ok(server.state.requests.some((r) => r.includes('/api/v1/profiles?q=' + enc(sel).replace(/%20/g, '+'))), 'the page asked /profiles?q=');
    ok(!$('#list-sel-links').hidden && $('#list-sel-links a').getAttribute('href') === F.formatHash({ view: 'trend', params: { sel: sel } }),
      'the selection links to its trend');
    P.snapshot('list-selector');
    nav('#/?sel=' + enc('{build="base" name="x"}'));
    await until(() => !$('#message').hidden && /Bad selector/.test($('#message').textContent), 'a bad selector is reported');
    ok($('#message').textContent.includes('position 15') && $('#list-filter').elements.sel.hasAttribute('aria-invalid') &&
      d.querySelectorAll('#profiles tbody tr').length === 0, 'the box is marked, the server\'s position named, no rows');

    /* ---- trend: the chart's points are /series' ---- */
    nav('#/trend?function=lex');
    const series = await api(base, 'series?function=lex');
    await until(() => w.PerfhubPage.trend() && $('#tr-chart').dataset.hash === w.location.hash, 'trend chart drawn');
    let g = w.PerfhubPage.trend();
    ok(g.series.length === 1 && g.series[0].points.length === series.points.length && series.points.length === 3, 'a point per recording');
    g.series[0].points.forEach((p, i) => {
      const a = series.points[i];
      ok(p.id === String(a.id) && p.value === a.value, 'point ' + i + ' = /series: ' + JSON.stringify([p.id, p.value]));
    });
    const ys = g.series[0].points.map((p) => p.y), vs = series.points.map((p) => p.value);
    for (let i = 0; i < vs.length; i++) for (let j = 0; j < vs.length; j++) if (vs[i] > vs[j]) ok(ys[i] < ys[j], 'a larger value is drawn higher');
    const circles = Array.from(d.querySelectorAll('#tr-chart circle.pt'));
    ok(circles.map((c) => c.dataset.id).join() === series.points.map((p) => p.id).join(), 'the chart\'s circles in /series\' order');
    ok(Array.from($('#tr-names').options).map((o) => o.value).join() === (await api(base, 'query/top?weight=period&rows=500')).functions.map((f) => f.name).join(),
      'the names offered are the selection\'s functions');
    P.snapshot('trend');
    /* a click on a point opens that recording with the function marked */
    const target = series.points.find((p) => p.name === 'build-target');
    circles.find((c) => c.dataset.id === String(target.id)).dispatchEvent(new w.MouseEvent('click', { bubbles: true }));
    await until(() => hash().view === 'profile' && hash().id === String(target.id) && hash().params.q === '/^lex$/', 'the point opens its recording');
    /* grouped by a label: one line per value */
    nav('#/trend?function=lex&group_by=build&metric=total_share&sel=' + enc('{branch=~"main|pr-1"}'));
    const grouped = await api(base, 'series?function=lex&group_by=build&metric=total_share&q=' + enc('{branch=~"main|pr-1"}'));
    await until(() => $('#tr-chart').dataset.hash === w.location.hash && w.PerfhubPage.trend(), 'grouped chart drawn');
    g = w.PerfhubPage.trend();
    ok(JSON.stringify(g.series.map((s) => [s.label, s.points.map((p) => [p.id, p.value])])) ===
      JSON.stringify(grouped.series.map((s) => [s.label, s.points.map((p) => [String(p.id), p.value])])), 'groups = /series?group_by');
    ok(d.querySelectorAll('#tr-chart polyline').length === 1 && $('#tr-legend').children.length === 2, 'a line per group of two or more, a legend');
    /* a click on a frame of the merged graph follows its function */
    const merged = F.buildTree(await api(base, 'query/flamegraph?weight=period&kernel=1&q=' + enc('{branch=~"main|pr-1"}')), { kernelMarks: true });
    await until(() => texts('tr-fg').includes('parse'), 'merged flame graph drawn');
    clickFrame('#tr-fg', merged, ['make', 'main', 'run', 'parse']);
    await until(() => hash().params.function === 'parse' && hash().params.sel === '{branch=~"main|pr-1"}', 'a frame picks its function, the selector stays');
    await until(() => server.state.requests.some((r) => r.startsWith('GET /api/v1/series?') && r.includes('function=parse')), 'the series of the frame\'s function asked');

    /* ---- compare with selectors: /diff's ranked rows ---- */
    const bq = '{build="base", name!="sleepy"}', tq = '{build="target"}';
    nav('#/compare');
    await until(() => $('#cmp-form').elements.base.options.length > 1, 'compare form');
    $('#cmp-form').elements.base_q.value = bq;
    $('#cmp-form').elements.target_q.value = tq;
    submit($('#cmp-form'));
    await until(() => hash().params.base_q === bq && hash().params.target_q === tq, 'the selectors in the URL');
    /* the weight the page asked for: the form's default */
    const df = await api(base, 'diff?kernel=1&rows=30&weight=' + hash().params.weight + '&base_q=' + enc(bq) + '&target_q=' + enc(tq));
    await until(() => d.querySelectorAll('#cmp-regressions tbody tr[data-function]').length === df.regressions.length, 'regression rows');
    const fmt = (v) => v.toFixed(2) + '%';
    const dlt = (v) => (v >= 0 ? '+' : '') + v.toFixed(2) + ' pts';
    for (const [sel2, list] of [['#cmp-regressions', df.regressions], ['#cmp-improvements', df.improvements]]) {
      const shown = rowsOf(sel2 + ' tbody tr[data-function]');
      ok(shown.length === list.length && list.length > 0, sel2 + ': every row /diff ranks');
      list.forEach((r, i) => {
        const c = shown[i];
        ok(c[0] === r.function.replace(/_\[k\]$/, '') && c[1] === fmt(r.base_self_share) && c[2] === fmt(r.target_self_share) &&
          c[3] === dlt(r.delta_self) && c[4] === fmt(r.base_total_share) && c[5] === fmt(r.target_total_share) &&
          c[6] === dlt(r.delta_total) && c[7] === (r.significant ? 'yes' : 'no'), sel2 + ' row ' + i + ': ' + c.join(' | '));
      });
    }
    ok(rowsOf('#cmp-regressions tbody tr')[0][0] === 'lex', 'lex leads the regressions');
    ok(/Base: 1 recording; target: 1 recording/.test($('#cmp-summary').textContent), 'the summary names each side\'s recordings');
    await until(() => texts('cmp-fg').includes('lex'), 'the differential graph of the selections drawn');
    P.snapshot('compare-selectors');
    nav('#/compare?target_q=' + enc(tq) + '&base_q=' + enc('{build=}'));
    await until(() => /Bad selector/.test($('#message').textContent) && $('#cmp-form').elements.base_q.hasAttribute('aria-invalid'), 'a bad base selector is marked');

    /* ---- off-CPU: offered where the recording has it ---- */
    const ids = Object.fromEntries(server.state.profiles.map((p) => [p.name, p.id]));
    nav('#/profile/' + ids['build-base']);
    await until(() => texts('fg').length > 0 && $('#p-status').textContent.startsWith('ready'), 'a profile without off-CPU time');
    ok($('#p-cpu').hidden, 'no toggle without off-CPU time');
    nav('#/profile/' + ids.sleepy);
    await until(() => !$('#p-cpu').hidden && texts('fg').length > 0, 'the toggle shown for a recording with switch events');
    ok($('#p-cpu input[value=""]').checked, 'on-CPU to begin with');
    for (const [wgt, unit] of [['offcpu', 'off-CPU'], ['wall', 'on+off-CPU']]) {
      $('#p-cpu input[value="' + wgt + '"]').click();
      await until(() => hash().params.weight === wgt, 'the toggle asks for weight=' + wgt);
      const want2 = await api(base, 'profiles/' + ids.sleepy + '/flamegraph?kernel=1&weight=' + wgt);
      const t2 = F.buildTree(want2, { kernelMarks: true });
      await until(() => $('#fg').dataset.hash === w.location.hash, 'drawn for ' + wgt);
      const labels = new Set(texts('fg'));
      const wantNames = new Set();
      (function walk(n) { wantNames.add(F.nodeLabel(n)); n.children.forEach(walk); })(t2);
      ok([...labels].every((l) => wantNames.has(l) || l.endsWith('\u2026')) && labels.has('wait_child') && labels.has('do_wait'),
        wgt + ': the labels are /flamegraph?weight=' + wgt + '\'s: ' + [...labels]);
      ok(wgt !== 'offcpu' || !labels.has('emit'), 'off-CPU: no CPU-only frame');
      ok(server.state.requests.some((r) => r.includes('/timeline?') && r.includes('weight=' + wgt)), 'the heat map asked for ' + wgt);
      await until(() => $('#tl-info').textContent.includes(unit + ' per bucket'), 'the heat map counts ' + unit + ' time');
      const tipNode = F.findPath(t2, ['make', 'main', 'run', 'wait_child']);
      const rows = F.layout(t2, t2, WIDTH, 0.3);
      const r = rows[tipNode.depth].find((x) => x.node === tipNode);
      mouse($('#fg'), 'mousemove', r.x + r.w / 2, (rows.length - 1 - tipNode.depth) * ROW_H + 2 + ROW_H / 2);
      ok($('#tooltip .value').textContent === F.fmtNs(tipNode.value) + ' ' + unit + ', self ' + F.fmtNs(tipNode.self), 'tooltip in time: ' + $('#tooltip .value').textContent);
      P.snapshot('offcpu-' + wgt);
    }
    $('#p-cpu input[value=""]').click();
    await until(() => !hash().params.weight && $('#fg').dataset.hash === w.location.hash, 'on-CPU again: the weight chosen before');

    /* ---- callers and callees from a frame click ---- */
    const id = ids['build-base'];
    nav('#/profile/' + id + '?weight=samples');
    const fgTree = F.buildTree(await api(base, 'profiles/' + id + '/flamegraph?kernel=1&weight=samples'), { kernelMarks: true });
    await until(() => $('#fg').dataset.hash === w.location.hash && texts('fg').includes('parse'), 'profile drawn');
    clickFrame('#fg', fgTree, ['make', 'main', 'run', 'parse']);
    await until(() => $('#fg-actions a.to-sandwich'), 'a zoomed frame links to its callers and callees');
    const swHref = $('#fg-actions a.to-sandwich').getAttribute('href');
    ok(F.parseHash(swHref).view === 'sandwich' && F.parseHash(swHref).params.function === 'parse', 'the link names the frame\'s function: ' + swHref);
    ok(F.parseHash($('#fg-actions a.to-annotate').getAttribute('href')).params.function === 'parse', 'and its annotation');
    nav(swHref);
    const checkSandwich = async (fn) => {
      const sj = await api(base, 'profiles/' + id + '/sandwich?weight=samples&function=' + enc(fn));
      await until(() => $('#sw-callers').dataset.hash === w.location.hash && $('#sw-callees').dataset.hash === w.location.hash, 'sandwich of ' + fn + ' drawn');
      for (const [cv, tree] of [['sw-callers', sj.callers], ['sw-callees', sj.callees]]) {
        const names = namesOf(tree);
        const drawn = texts(cv);
        ok(drawn.length > 0 && drawn.every((t) => names.has(t) || t.endsWith('\u2026')), cv + ': labels from /sandwich: ' + drawn);
        const wide = F.layout(F.buildTree(tree, { sandwich: 'callers' }), null, WIDTH, 0.3).flat().filter((x) => x.w > 24 + 7 * (x.node.name.length + 1));
        for (const x of wide) ok(drawn.includes(x.node.name), cv + ': wide frame ' + x.node.name + ' labelled');
      }
      ok($('#sw-title').textContent.endsWith(fn), 'the title names ' + fn);
      return sj;
    };
    let sj = await checkSandwich('parse');
    ok(sj.callers.children.some((c) => c.name === 'run') && sj.callees.children.some((c) => c.name === 'lex'), 'parse: called by run, calls lex');
    P.snapshot('sandwich-parse');
    /* a click on a caller makes it the function in the middle */
    clickFrame('#sw-callers', F.buildTree(sj.callers, { sandwich: 'callers' }), ['run']);
    await until(() => hash().view === 'sandwich' && hash().params.function === 'run', 'a click on a caller follows it');
    sj = await checkSandwich('run');

    /* ---- callers and callees, and the annotation, from a /top row ---- */
    nav('#/profile/' + id + '?weight=samples');
    await until(() => d.querySelectorAll('#top tbody tr').length > 0 && $('#fg').dataset.hash === w.location.hash, 'top table');
    const lexRow = Array.from(d.querySelectorAll('#top tbody tr')).find((tr) => tr.cells[0].textContent === 'lex');
    nav(lexRow.querySelector('a.to-sandwich').getAttribute('href'));
    await checkSandwich('lex');
    nav('#/profile/' + id + '?weight=samples');
    await until(() => d.querySelectorAll('#top tbody tr a.to-annotate').length > 0, 'top table again');
    const annHref = Array.from(d.querySelectorAll('#top tbody tr')).find((tr) => tr.cells[0].textContent === 'lex').querySelector('a.to-annotate').getAttribute('href');
    ok(F.parseHash(annHref).params.function === 'lex' && !F.parseHash(annHref).params.comm, 'the annotate link: the function, no thread filter');
    nav(annHref);
    const an = await api(base, 'profiles/' + id + '/annotate?function=lex&weight=samples');
    await until(() => d.querySelectorAll('#an-insns tbody tr').length === an.instructions.length, 'annotation drawn');
    const lines = rowsOf('#an-lines tbody tr'), insns = rowsOf('#an-insns tbody tr');
    ok(lines.length === an.lines.length, 'a row per source line');
    an.lines.forEach((l, i) => {
      const text = an.source.text[l.line - an.source.first_line];
      ok(lines[i][0] === String(l.line) && lines[i][1] === F.fmtCount(l.samples) && lines[i][2] === F.fmtPct((100 * l.samples) / an.self) && lines[i][3] === text,
        'line ' + l.line + ' = /annotate: ' + lines[i].join(' | '));
    });
    an.instructions.forEach((x, i) => {
      ok(insns[i][0] === x.address && insns[i][1] === F.fmtCount(x.samples) && insns[i][3] === x.text && insns[i][4] === String(x.line),
        'instruction ' + x.address + ' = /annotate: ' + insns[i].join(' | '));
    });
    ok($('#an-facts').textContent.includes(an.file) && $('#an-facts').textContent.includes(String(an.self)), 'the file and the self count');
    P.snapshot('annotate');

    ok(errors.length === 0, 'no script errors: ' + errors.join('\n'));
  } finally {
    if (errors.length) console.error('page errors:\n' + errors.join('\n'));
  }
  console.log('ok: ' + H.stats.checks + ' checks; DOM snapshots in ' + outDir);
}

main().then(() => process.exit(0), (e) => { console.error(e.message || e); process.exit(1); });
