/* trace.js - the dashboard's profiler-trace panel: for the run on screen, the views that
 * `mfu trace FILE... --attach RUN` stored with it (GET api/runs/NAME/trace): where each rank's
 * GPU time went, the straggler, the MFU waterfall and the main matmul kernels. A run without a
 * trace shows nothing (the API answers {"trace": null}). Separate from app.js: it follows location.hash
 * itself ("#/run/NAME") and keeps its own panel, inserted after the run's charts. Every text
 * from the server is inserted with textContent, never as markup. */
(function () {
  'use strict';
  const PARTS = [
    ['matmul_s', 'matmul', '#1f618d'],
    ['attention_s', 'attention', '#5dade2'],
    ['other_s', 'other compute', '#a9cce3'],
    ['communication_exposed_s', 'exposed communication', '#b9770e'],
    ['memcpy_s', 'memory copies', '#7d3c98'],
    ['idle_s', 'idle', '#cbd5e1'],
  ];
  const LOSSES = [
    ['idle', 'idle'], ['communication', 'exposed communication'], ['memcpy', 'memory copies'],
    ['non_matmul', 'non-matmul compute'], ['matmul_below_peak', 'matmul below peak'],
  ];
  /* the panel's own styles, so that app.css stays the page's */
  const CSS = [
    '.trace-panel { margin-top: 12px; }',
    '.trace-bar { display: flex; align-items: center; gap: 8px; margin: 4px 0; }',
    '.trace-rank { width: 64px; color: var(--muted); font-size: 0.85rem; }',
    '.trace-track { flex: 1; display: flex; height: 16px; border-radius: 3px; overflow: hidden; background: #f1f5f9; }',
    '.trace-part { display: block; height: 100%; }',
    '.trace-legend { font-size: 0.8rem; }',
    '.trace-waterfall { margin: 6px 0; }',
    '.trace-wf-row { display: flex; align-items: center; gap: 8px; margin: 3px 0; font-size: 0.85rem; }',
    '.trace-wf-label { width: 150px; color: var(--muted); }',
    '.trace-wf-track { position: relative; flex: 1; height: 14px; background: #f1f5f9; border-radius: 2px; }',
    '.trace-wf-bar { position: absolute; top: 0; height: 100%; border-radius: 2px; }',
    '.trace-wf-bar.peak { background: #1f618d; }',
    '.trace-wf-bar.loss { background: #c0392b; }',
    '.trace-wf-bar.mfu { background: #1e8449; }',
    '.trace-wf-pts { width: 48px; text-align: right; font-variant-numeric: tabular-nums; }',
    '.trace-kname { max-width: 360px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-family: ui-monospace, monospace; font-size: 0.8rem; }',
  ].join('\n');
  const isNum = (v) => typeof v === 'number' && isFinite(v);
  const pct = (v) => (isNum(v) ? (100 * v).toFixed(1) + '%' : '-');
  /* FLOP/s as the dashboard prints them (app.js, loaded first: "312 TFLOP/s", "45.6 GFLOP/s") */
  const flops = (v) => window.mfuDash.fmt.flops(v);

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'style') e.style.cssText = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  function panel() {
    let p = document.getElementById('trace-panel');
    if (!p) {
      document.head.append(el('style', {}, CSS));
      p = el('section', { id: 'trace-panel', class: 'panel trace-panel', hidden: '' });
      const view = document.getElementById('view-run');
      if (view) view.append(p);
    }
    return p;
  }

  function bar(label, b) {
    const row = el('div', { class: 'trace-bar' }, el('span', { class: 'trace-rank' }, label));
    const track = el('div', { class: 'trace-track' });
    for (const [key, name, colour] of PARTS) {
      const share = b.span_s > 0 ? b[key] / b.span_s : 0;
      if (!(share > 0)) continue;
      track.append(el('span', { class: 'trace-part', title: name + ' ' + pct(share),
        style: 'width:' + (100 * share).toFixed(3) + '%;background:' + colour }));
    }
    row.append(track);
    return row;
  }

  function waterfall(w) {
    const box = el('div', { class: 'trace-waterfall' });
    const rows = [['peak', 100, 0, 100]];
    let level = 100;
    for (const [key, name] of LOSSES) {
      const pts = w.lost_points[key];
      rows.push([name, -pts, level - pts, level]);
      level -= pts;
    }
    rows.push(['achieved MFU', 100 * w.mfu, 0, 100 * w.mfu]);
    for (const [name, pts, from, to] of rows) {
      const lo = Math.max(0, Math.min(from, to)), hi = Math.min(100, Math.max(from, to));
      box.append(el('div', { class: 'trace-wf-row' },
        el('span', { class: 'trace-wf-label' }, name),
        el('span', { class: 'trace-wf-track' }, el('span', {
          class: 'trace-wf-bar' + (name === 'peak' ? ' peak' : name === 'achieved MFU' ? ' mfu' : ' loss'),
          style: 'left:' + lo.toFixed(3) + '%;width:' + Math.max(0.3, hi - lo).toFixed(3) + '%' })),
        el('span', { class: 'trace-wf-pts' }, (pts > 0 && name !== 'peak' && name !== 'achieved MFU' ? '+' : '') + pts.toFixed(1))));
    }
    return box;
  }

  function render(name, t) {
    const p = panel();
    p.replaceChildren();
    p.append(el('h2', {}, 'Profiler trace: where the GPU time went'));
    for (const r of t.ranks) {
      p.append(bar(r.rank === null ? 'rank ?' : 'rank ' + r.rank, r.totals));
    }
    const legend = el('p', { class: 'trace-legend muted' });
    for (const [, label, colour] of PARTS)
      legend.append(el('span', { style: 'color:' + colour }, '■'), ' ' + label + '  ');
    p.append(legend);
    const tb = el('table', { class: 'figures trace-table' });
    tb.append(el('tr', {}, ...['rank', 'steps', 'GPU span', 'compute', 'matmul', 'comm. exposed',
      'memcpy', 'idle'].map((h) => el('th', {}, h))));
    for (const r of t.ranks) {
      const b = r.totals;
      tb.append(el('tr', {}, el('td', {}, r.rank === null ? '?' : String(r.rank)),
        el('td', {}, String(r.steps.length)), el('td', {}, b.span_s.toFixed(4) + ' s'),
        el('td', {}, pct(b.compute_s / b.span_s)), el('td', {}, pct(b.matmul_s / b.span_s)),
        el('td', {}, pct(b.communication_exposed_s / b.span_s)),
        el('td', {}, pct(b.memcpy_s / b.span_s)), el('td', {}, pct(b.idle_s / b.span_s))));
    }
    p.append(tb);
    if (t.straggler) {
      const s = t.straggler;
      p.append(el('p', { class: 'trace-straggler' }, 'Straggler: rank ' + s.rank + ', compute ' +
        s.compute_s.toFixed(4) + ' s per step (' + (s.excess >= 0 ? '+' : '') +
        (100 * s.excess).toFixed(1) + '% against the median); the others wait ' +
        s.wait_s.toFixed(4) + ' s per step in collectives (' + s.wait_points.toFixed(1) +
        ' points).'));
    }
    if (t.ranks_check && t.ranks.length > 1 && t.ranks_check.missing > 0)
      p.append(el('p', { class: 'muted' }, t.ranks_check.missing + ' of ' +
        t.ranks_check.world_size + ' ranks have no trace.'));
    p.append(el('h2', {}, 'MFU waterfall'));
    if (t.waterfall) {
      p.append(el('p', { class: 'muted' }, 'Points of peak; MFU from ' + t.waterfall.mfu_source + '.'));
      p.append(waterfall(t.waterfall));
    } else {
      p.append(el('p', { class: 'muted' }, t.waterfall_missing || 'No MFU for the waterfall.'));
    }
    const mm = (t.ranks[0] && t.ranks[0].matmul_kernels) || [];
    if (mm.length) {
      const kt = el('table', { class: 'figures trace-kernels' });
      kt.append(el('tr', {}, ...['main matmul kernels', 'count', 'share', 'FLOP/s'].map((h) => el('th', {}, h))));
      for (const k of mm) {
        kt.append(el('tr', {}, el('td', { class: 'trace-kname', title: k.name }, k.name),
          el('td', {}, String(k.count)), el('td', {}, pct(k.share)),
          el('td', {}, flops(k.flops_per_s))));
      }
      p.append(kt);
    }
    p.dataset.run = name;
    p.hidden = false;
  }

  let asked = null;
  function follow() {
    const h = location.hash || '';
    const p = panel();
    if (!h.startsWith('#/run/')) { p.hidden = true; asked = null; return; }
    let name;
    try { name = decodeURIComponent(h.slice(6)); } catch (e) { name = h.slice(6); }
    if (name === asked) return;
    asked = name;
    p.hidden = true;
    fetch('api/runs/' + encodeURIComponent(name) + '/trace', { headers: { Accept: 'application/json' } })
      .then((r) => (r.ok ? r.json() : null))
      .then((t) => { if (t && asked === name && Array.isArray(t.ranks)) render(name, t); })
      .catch(() => {});
  }
  window.addEventListener('hashchange', follow);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', follow);
  else follow();
  /* app.js may set the hash after its first load ("#/" opens the first run) */
  window.addEventListener('load', () => setTimeout(follow, 0));
})();
