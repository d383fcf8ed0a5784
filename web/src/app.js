/*
 * app.js - the mfu dashboard (plain JS, no framework, no bundler). Reads the JSON API of
 * `mfu serve` (contract: docs/internals/web.md, notes/server-api.md) and draws with uPlot.
 *
 * Views (location.hash): "#/run/NAME" one run; "#/compare?a=..&b=.." two runs; "#/" the first
 * run. Live: one EventSource on api/events; "steps" events append points to the open run's
 * charts without re-fetching, "run" events refresh the run list.
 *
 * Safety: every text that comes from the server (run names, messages, tags) goes into the DOM
 * through textContent or createTextNode, never through innerHTML; links are built from
 * encodeURIComponent. The page's CSP forbids inline scripts as a second fence.
 *
 * For tests: window.mfuDash exposes read-only state (ready, updates, point counts), and every
 * chart container carries data-points (the points it draws) and data-total (rows on the server).
 */
(function () {
  'use strict';

  /* ---- small helpers -------------------------------------------------------------------- */

  const $ = (id) => document.getElementById(id);

  /* el('div', {class: 'x'}, 'text', child) - attributes by setAttribute, strings as text. */
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs)
      for (const [k, v] of Object.entries(attrs))
        if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      e.appendChild(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
    }
    return e;
  }
  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

  /* Number formatting: 4 significant digits with an SI prefix; '-' for unknown. */
  const PREFIX = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  function si(v, unit = '', digits = 3) {
    if (!isNum(v)) return '-';
    const a = Math.abs(v);
    for (const [f, p] of PREFIX)
      if (a >= f) return trim(v / f, digits) + ' ' + p + unit;
    return trim(v, digits) + (unit ? ' ' + unit : '');
  }
  function trim(v, digits) {
    const a = Math.abs(v);
    const d = a >= 100 ? Math.max(0, digits - 3) : a >= 10 ? Math.max(0, digits - 2) : digits - 1;
    return v.toFixed(d);
  }
  const pct = (v, d = 1) => (isNum(v) ? (100 * v).toFixed(d) + '%' : '-');
  const spct = (v, d = 1) => (isNum(v) ? (v >= 0 ? '+' : '') + (100 * v).toFixed(d) + '%' : '-');
  function secs(v) {
    if (!isNum(v)) return '-';
    if (Math.abs(v) < 1e-3) return (v * 1e6).toFixed(0) + ' µs';
    if (Math.abs(v) < 1) return (v * 1e3).toFixed(v < 0.1 ? 1 : 0) + ' ms';
    return v.toFixed(v < 10 ? 3 : 1) + ' s';
  }
  /* Axis ticks: short, no trailing zeros. */
  function secsAxis(v) {
    if (!isNum(v)) return '';
    if (v === 0) return '0';
    if (Math.abs(v) < 1) return +(v * 1e3).toPrecision(3) + ' ms';
    return +v.toPrecision(3) + ' s';
  }
  const tflops = (v) => (isNum(v) ? (v / 1e12).toFixed(v >= 1e14 ? 0 : 1) + ' TFLOP/s' : '-');
  const intStr = (v) => (isNum(v) ? Math.round(v).toLocaleString('en-US') : '-');

  function api(path) {
    return fetch(path, { headers: { Accept: 'application/json' } }).then(async (r) => {
      let body = null;
      try { body = await r.json(); } catch (e) { body = null; }
      if (!r.ok) throw new Error((body && body.error) || r.status + ' ' + r.statusText);
      return body;
    });
  }
  const runPath = (name) => 'api/runs/' + encodeURIComponent(name);

  function showError(msg) {
    const e = $('error');
    e.textContent = msg || '';
    e.hidden = !msg;
  }

  /* ---- state ---------------------------------------------------------------------------- */

  const FIELDS = ['tokens_per_second', 'mfu', 'hfu', 'step_time_s',
    'model_flops_per_second_per_device', 'hardware_flops_per_second_per_device'];
  const MAX_POINTS_LIMIT = 20000;

  const state = {
    runs: [],
    run: null,          // name of the open run
    detail: null,       // /api/runs/{run}
    data: null,         // {step: [], columns: {...}, total, downsampled}
    range: null,        // [from, to] when zoomed, else null
    segments: null,
    findings: [],
    boundary: 0,        // selected decomposition index
    charts: {},         // id -> uPlot
    fetchSeq: 0,
    pendingRefresh: null,
    analysisError: null, // why segments/findings could not be had
  };
  const dash = { ready: false, updates: 0, appended: 0, points: {}, total: 0, view: '', errors: 0 };
  window.mfuDash = dash;

  /* ---- run list ------------------------------------------------------------------------- */

  function renderRunList() {
    const ul = $('run-list');
    clear(ul);
    $('run-count').textContent = state.runs.length ? '(' + state.runs.length + ')' : '';
    $('run-list-empty').hidden = state.runs.length > 0;
    for (const r of state.runs) {
      const s = r.summary || {};
      const a = el('a', { href: '#/run/' + encodeURIComponent(r.name), title: r.name },
        el('div', { class: 'name' }, r.name, ' ', r.live ? el('span', { class: 'badge live' }, 'live') : null),
        el('div', { class: 'meta' }, el('span', null, r.format || '?'),
          el('span', { class: 'steps' }, intStr(r.steps) + ' steps')),
        el('div', { class: 'figs' },
          el('span', null, 'MFU ', el('b', null, pct(s.mfu))),
          el('span', null, 'tok/s ', el('b', null, si(s.tokens_per_second)))));
      const li = el('li', { 'data-run': r.name }, a);
      if (r.name === state.run) li.classList.add('selected');
      ul.appendChild(li);
    }
    fillCompareSelects();
  }

  function loadRuns() {
    return api('api/runs').then((j) => {
      state.runs = (j && Array.isArray(j.runs)) ? j.runs : [];
      renderRunList();
    });
  }

  /* ---- charts --------------------------------------------------------------------------- */

  /* Overlays drawn on every run chart: warm-up band, segment boundaries, finding markers. */
  function drawOverlays(u) {
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const xmin = u.scales.x.min, xmax = u.scales.x.max;
    if (!isNum(xmin) || !isNum(xmax)) return;
    const X = (s) => u.valToPos(s, 'x', true);
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    const seg = state.segments;
    if (seg && seg.warmup && seg.warmup.steps > 0 && isNum(seg.warmup.last_step)) {
      const x0 = X(Math.max(xmin, seg.warmup.first_step)), x1 = X(Math.min(xmax, seg.warmup.last_step));
      if (x1 > x0) {
        ctx.fillStyle = 'rgba(148,163,184,0.18)';
        ctx.fillRect(x0, top, x1 - x0, height);
      }
    }
    if (seg && Array.isArray(seg.segments)) {
      ctx.strokeStyle = 'rgba(55,65,81,0.75)';
      ctx.lineWidth = Math.max(1, devicePixelRatio);
      ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
      for (let i = 1; i < seg.segments.length; i++) {
        const s = seg.segments[i].start_step;
        if (!isNum(s) || s < xmin || s > xmax) continue;
        const x = Math.round(X(s)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
      }
      ctx.setLineDash([]);
    }
    if (u.mfuMarkers) {
      const size = 5 * devicePixelRatio;
      for (const f of state.findings) {
        const st = Array.isArray(f.steps) ? f.steps : [];
        const a = st[0], b = isNum(st[1]) ? st[1] : st[0];
        if (!isNum(a) || b < xmin || a > xmax) continue;
        const color = sevColor(f.severity);
        const x0 = X(Math.max(a, xmin)), x1 = X(Math.min(b, xmax));
        /* a band for a short finding; a long one (a periodic stall) would tint everything */
        if (x1 - x0 > 2 && x1 - x0 < width / 4) {
          ctx.fillStyle = color + '22';
          ctx.fillRect(x0, top, x1 - x0, height);
        }
        ctx.fillStyle = color;
        ctx.beginPath();
        ctx.moveTo(x0, top + 2 * size);
        ctx.lineTo(x0 - size, top + 2);
        ctx.lineTo(x0 + size, top + 2);
        ctx.closePath();
        ctx.fill();
      }
    }
    if (u.mfuPeak && isNum(u.mfuPeak)) {
      const y = u.valToPos(u.mfuPeak, 'y', true);
      if (y >= top && y <= top + height) {
        ctx.strokeStyle = 'rgba(220,38,38,0.6)';
        ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
        ctx.beginPath();
        ctx.moveTo(left, y);
        ctx.lineTo(left + width, y);
        ctx.stroke();
      }
    }
    ctx.restore();
  }
  function sevColor(s) {
    return s === 'error' ? '#dc2626' : s === 'warning' ? '#d97706' : '#3b82f6';
  }

  /* One zoom for all run charts: a drag on any chart sets the x range of all of them and asks
   * the server for finer points in that range. */
  let syncing = false;
  function onSetScale(u, key) {
    if (key !== 'x' || syncing) return;
    const min = u.scales.x.min, max = u.scales.x.max;
    syncing = true;
    for (const c of Object.values(state.charts))
      if (c !== u && c.mfuRun) c.setScale('x', { min, max });
    syncing = false;
    if (u.mfuUserZoom) {
      u.mfuUserZoom = false;
      scheduleRangeFetch(min, max);
    }
  }

  function chartWidth(node) {
    return Math.max(240, Math.floor(node.getBoundingClientRect().width) - 8);
  }

  function makeChart(id, title, series, yfmt, height, extra) {
    const node = $(id);
    clear(node);
    const opts = {
      title,
      width: chartWidth(node),
      height,
      cursor: {
        sync: { key: 'mfu-run', setSeries: false },
        drag: { x: true, y: false, setScale: true },
      },
      scales: { x: { time: false } },
      legend: { live: true },
      series: [{ label: 'step', value: (u, v) => (isNum(v) ? intStr(v) : '-') }].concat(series),
      axes: [
        { values: (u, vals) => vals.map((v) => (Math.abs(v) >= 1e4 ? si(v, '', 3) : intStr(v))), size: 28 },
        { values: (u, vals) => vals.map(yfmt), size: 62, space: 22 },
      ],
      hooks: {
        draw: [drawOverlays],
        setScale: [onSetScale],
        setSelect: [(u) => { if (u.select.width > 0) u.mfuUserZoom = true; }],
      },
    };
    if (extra && extra.y) opts.scales.y = extra.y;
    const u = new uPlot(opts, emptyData(series.length), node);
    u.mfuRun = true;
    u.mfuMarkers = !!(extra && extra.markers);
    node.addEventListener('dblclick', () => resetZoom());
    state.charts[id] = u;
    return u;
  }
  function emptyData(n) {
    const d = [[]];
    for (let i = 0; i < n; i++) d.push([]);
    return d;
  }

  function buildRunCharts() {
    for (const c of Object.values(state.charts)) c.destroy();
    state.charts = {};
    const line = (label, stroke, value, extra) =>
      Object.assign({ label, stroke, width: 1.25, value: (u, v) => value(v), spanGaps: false }, extra || {});
    /* HFU first: MFU is drawn over it (they coincide without recomputation) */
    makeChart('chart-mfu', 'MFU', [line('HFU', '#93c5fd', (v) => pct(v, 2)), line('MFU', '#2563eb', (v) => pct(v, 2))],
      (v) => pct(v, 0), 170, { markers: true, y: { range: (u, min, max) => [0, Math.max(0.05, max * 1.08)] } });
    makeChart('chart-tps', 'tokens/s (whole job)', [line('tokens/s', '#0f9d76', (v) => si(v, '', 4))],
      (v) => si(v, '', 3), 150, { markers: true });
    makeChart('chart-step', 'step time', [line('step time', '#8b5cf6', secs)], secsAxis, 130, { markers: true });
    makeChart('chart-flops', 'TFLOP/s per device: model vs hardware',
      [line('model', '#2563eb', tflops), line('hardware', '#f59e0b', tflops)],
      (v) => (v / 1e12).toFixed(0), 140, { markers: true, y: { range: (u, min, max) => [0, Math.max(1, max * 1.08)] } });
  }

  /* uPlot data arrays from the state's columns. */
  function chartData(id) {
    const d = state.data;
    const col = (k) => (d.columns && d.columns[k]) || [];
    switch (id) {
      case 'chart-mfu': return [d.step, col('hfu'), col('mfu')];
      case 'chart-tps': return [d.step, col('tokens_per_second')];
      case 'chart-step': return [d.step, col('step_time_s')];
      default: return [d.step, col('model_flops_per_second_per_device'), col('hardware_flops_per_second_per_device')];
    }
  }

  function pushData(resetScales) {
    if (!state.data) return;
    for (const [id, u] of Object.entries(state.charts)) {
      if (!u.mfuRun) continue;
      const data = chartData(id);
      // uPlot needs every series as long as x: pad columns the server left out
      for (let i = 1; i < data.length; i++)
        if (data[i].length !== data[0].length) data[i] = padTo(data[i], data[0].length);
      u.setData(data, resetScales);
      if (!resetScales && state.range) u.setScale('x', { min: state.range[0], max: state.range[1] });
      const node = $(id);
      node.dataset.points = String(data[0].length);
      node.dataset.total = String(state.data.total);
      dash.points[node.dataset.field || id] = data[0].length;
    }
    dash.total = state.data.total;
    const flops = state.charts['chart-flops'];
    if (flops) {
      flops.mfuPeak = state.detail && state.detail.context ? state.detail.context.peak_flops : null;
      flops.redraw(false);
    }
  }
  function padTo(a, n) {
    const out = Array.from(a);
    while (out.length < n) out.push(null);
    out.length = n;
    return out;
  }

  function maxPoints() {
    const node = $('chart-mfu');
    const w = node ? chartWidth(node) : 800;
    return Math.min(MAX_POINTS_LIMIT, Math.max(200, Math.round(w)));
  }

  function seriesUrl(name, from, to) {
    let q = 'fields=' + FIELDS.join(',') + '&max_points=' + maxPoints();
    if (isNum(from)) q += '&from=' + Math.floor(from);
    if (isNum(to)) q += '&to=' + Math.ceil(to);
    return runPath(name) + '/series?' + q;
  }

  function normaliseSeries(j) {
    const step = Array.isArray(j.step) ? j.step : [];
    const columns = {};
    for (const f of FIELDS) {
      const c = j.columns && Array.isArray(j.columns[f]) ? j.columns[f] : [];
      columns[f] = c.length === step.length ? c : padTo(c, step.length);
    }
    return { step, columns, total: isNum(j.total) ? j.total : step.length, downsampled: !!j.downsampled };
  }

  let rangeTimer = null;
  function scheduleRangeFetch(min, max) {
    clearTimeout(rangeTimer);
    rangeTimer = setTimeout(() => {
      const name = state.run;
      state.range = [min, max];
      const seq = ++state.fetchSeq;
      api(seriesUrl(name, min, max)).then((j) => {
        if (seq !== state.fetchSeq || name !== state.run) return;
        state.data = normaliseSeries(j);
        pushData(false);
      }).catch((e) => showError('series: ' + e.message));
    }, 150);
  }

  function resetZoom() {
    if (!state.run) return;
    state.range = null;
    loadSeries(state.run);
  }

  function loadSeries(name) {
    const seq = ++state.fetchSeq;
    return api(seriesUrl(name)).then((j) => {
      if (seq !== state.fetchSeq || name !== state.run) return;
      state.data = normaliseSeries(j);
      pushData(true);
    });
  }

  /* ---- live updates --------------------------------------------------------------------- */

  function appendSteps(ev) {
    const name = ev.run;
    const rows = Array.isArray(ev.steps) ? ev.steps.filter((r) => r && isNum(r.step)) : [];
    if (!rows.length) return;
    const r = state.runs.find((x) => x.name === name);
    if (r) {
      r.steps = (isNum(r.steps) ? r.steps : 0) + rows.length;
      r.last_step = rows[rows.length - 1].step;
      r.live = true;
      scheduleRunListRender();
    } else {
      loadRuns().catch(() => {});
    }
    if (name !== state.run || !state.data) return;
    const d = state.data;
    const last = d.step.length ? d.step[d.step.length - 1] : -Infinity;
    for (const row of rows) {
      if (row.step <= last) continue; /* a repeat of what the series already holds */
      d.step.push(row.step);
      for (const f of FIELDS) d.columns[f].push(isNum(row[f]) ? row[f] : null);
      d.total++;
      dash.appended++;
    }
    /* Keep the charts light on very long live runs: when appended points swamp the budget,
     * ask the server for a fresh downsampled view instead of growing without end. */
    if (!state.range && d.step.length > 4 * maxPoints()) {
      loadSeries(state.run).catch(() => {});
    } else {
      pushData(!state.range);
    }
    dash.updates++;
    scheduleAnalysisRefresh();
  }

  let listTimer = null;
  function scheduleRunListRender() {
    if (listTimer) return;
    listTimer = setTimeout(() => { listTimer = null; renderRunList(); renderCards(); }, 250);
  }
  /* Findings and segments are recomputed by the server; fetch them at most every 5 s. */
  function scheduleAnalysisRefresh() {
    if (state.pendingRefresh) return;
    state.pendingRefresh = setTimeout(() => {
      state.pendingRefresh = null;
      if (state.run) loadAnalysis(state.run).catch(() => {});
    }, 5000);
  }

  function connectEvents() {
    if (!window.EventSource) return;
    const conn = $('conn');
    const es = new EventSource('api/events');
    es.onopen = () => { conn.dataset.state = 'open'; conn.textContent = 'live'; };
    es.onerror = () => { conn.dataset.state = 'error'; conn.textContent = 'reconnecting'; };
    es.addEventListener('steps', (m) => {
      try { appendSteps(JSON.parse(m.data)); } catch (e) { dash.errors++; }
    });
    es.addEventListener('run', () => {
      /* a new run: list it; open it when the page had nothing to show */
      loadRuns().then(() => { if (dash.view === 'empty') route(); }).catch(() => {});
    });
  }

  /* ---- run view ------------------------------------------------------------------------- */

  function card(label, value, sub) {
    return el('div', { class: 'card' }, el('div', { class: 'label' }, label),
      el('div', { class: 'value' }, value), sub ? el('div', { class: 'sub' }, sub) : null);
  }

  function renderCards() {
    const box = $('cards');
    if (!state.run) return;
    clear(box);
    const r = state.runs.find((x) => x.name === state.run) || state.detail || {};
    const s = r.summary || {};
    const st = state.segments && state.segments.steady;
    const ci = (iv, f) => (iv && isNum(iv.lo) && isNum(iv.hi) ? f(iv.lo) + ' – ' + f(iv.hi) : null);
    box.appendChild(card('MFU (median)', pct(s.mfu, 1), st ? ci(st.mfu, (v) => pct(v, 1)) : null));
    box.appendChild(card('tokens/s', si(s.tokens_per_second, '', 4), st ? ci(st.tokens_per_second, (v) => si(v, '', 3)) : null));
    box.appendChild(card('step time', secs(s.step_time_s)));
    box.appendChild(card('HFU', pct(s.hfu, 1)));
    box.appendChild(card('model TFLOP/s/device', isNum(s.model_flops_per_second_per_device) ? (s.model_flops_per_second_per_device / 1e12).toFixed(1) : '-'));
    box.appendChild(card('steps', intStr(r.steps), isNum(r.first_step) ? 'steps ' + intStr(r.first_step) + '–' + intStr(r.last_step) : null));
  }

  function renderContext() {
    const d = state.detail || {};
    const c = d.context;
    const parts = [];
    if (d.format) parts.push(d.format);
    if (c) {
      if (c.model) parts.push(c.model);
      if (c.convention) parts.push(c.convention + ' convention');
      if (isNum(c.model_flops_per_token)) parts.push(si(c.model_flops_per_token, 'FLOP/token'));
      const dev = [];
      if (isNum(c.devices)) dev.push(c.devices + ' ×');
      if (c.device) dev.push(c.device);
      if (c.dtype) dev.push(c.dtype);
      if (isNum(c.peak_flops)) dev.push('peak ' + tflops(c.peak_flops));
      if (dev.length) parts.push(dev.join(' '));
      if (c.mfu_known === false && c.why) parts.push(c.why);
    } else {
      parts.push('no model/device: MFU needs --model and --device on mfu serve');
    }
    if (d.meta && d.meta.model) parts.push('log says model ' + d.meta.model);
    if (d.tags && typeof d.tags === 'object')
      for (const [k, v] of Object.entries(d.tags)) parts.push(k + '=' + v);
    $('run-context').textContent = parts.join(' · ');
  }

  function renderFindings() {
    const ol = $('findings');
    clear(ol);
    const fs = state.findings;
    $('finding-count').textContent = fs.length ? '(' + fs.length + ')' : '';
    const why = state.analysisError;
    $('findings-empty').textContent = why ? 'No findings: ' + why : 'No findings.';
    $('findings-empty').hidden = fs.length > 0;
    const order = { error: 0, warning: 1, info: 2 };
    const sorted = fs.slice().sort((a, b) => (order[a.severity] ?? 3) - (order[b.severity] ?? 3));
    for (const f of sorted) {
      const st = Array.isArray(f.steps) ? f.steps : [];
      const sev = ['info', 'warning', 'error'].includes(f.severity) ? f.severity : 'info';
      const li = el('li', { 'data-kind': f.kind, 'data-severity': sev, title: 'show these steps on the charts' },
        el('div', { class: 'head' },
          el('span', { class: 'badge sev-' + sev }, sev),
          el('span', { class: 'kind' }, String(f.kind || '').replace(/_/g, ' ')),
          isNum(st[0]) ? el('span', { class: 'steps' }, 'steps ' + intStr(st[0]) + (isNum(st[1]) && st[1] !== st[0] ? '–' + intStr(st[1]) : '')) : null),
        el('p', { class: 'msg' }, f.message || f.summary || ''),
        f.next_step ? el('p', { class: 'next' }, f.next_step) : null);
      li.addEventListener('click', () => zoomTo(st[0], st[1]));
      ol.appendChild(li);
    }
  }

  function zoomTo(a, b) {
    if (!isNum(a)) return;
    if (!isNum(b)) b = a;
    const d = state.data;
    const span = d && d.step.length ? d.step[d.step.length - 1] - d.step[0] : b - a;
    const pad = Math.max(5, (b - a) * 0.5, span * 0.01);
    const u = state.charts['chart-mfu'];
    if (!u) return;
    u.mfuUserZoom = true;
    u.setScale('x', { min: a - pad, max: b + pad });
  }

  const TERMS = [
    ['mfu', 'utilization (MFU)'],
    ['capacity', 'capacity (devices × peak)'],
    ['flops_per_token', 'workload (FLOPs/token)'],
    ['padding', 'padding'],
  ];

  /* A horizontal waterfall of the terms of Δln(tokens/s): each bar starts where the previous
   * one ended (the log-changes add up exactly); the last bar is the total. Labels say the
   * change of tokens/s each term alone explains, with its interval. */
  function waterfall(node, dec) {
    clear(node);
    if (!dec || !dec.terms) return;
    const rows = [];
    let acc = 0;
    for (const [k, label] of TERMS) {
      const t = dec.terms[k];
      if (!t || !isNum(t.dln)) continue;
      if (k === 'padding' && Math.abs(t.dln) < 1e-6) continue;
      rows.push({ label, t, from: acc, to: acc + t.dln, total: false });
      acc += t.dln;
    }
    const tot = dec.terms.tokens_per_second;
    if (tot && isNum(tot.dln)) rows.push({ label: 'tokens/s (total)', t: tot, from: 0, to: tot.dln, total: true });
    if (!rows.length) return;
    const W = 520, rowH = 24, labelW = 170, valueW = 150, top = 6;
    const H = top + rows.length * rowH + 8;
    let lo = 0, hi = 0;
    for (const r of rows) { lo = Math.min(lo, r.from, r.to); hi = Math.max(hi, r.from, r.to); }
    if (hi - lo < 1e-9) { lo -= 0.01; hi += 0.01; }
    const plotL = labelW, plotW = W - labelW - valueW;
    const X = (v) => plotL + ((v - lo) / (hi - lo)) * plotW;
    const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'decomposition of the tokens/s change' });
    s.appendChild(svg('line', { class: 'axis', x1: X(0), x2: X(0), y1: 2, y2: H - 4 }));
    rows.forEach((r, i) => {
      const y = top + i * rowH;
      const x0 = X(Math.min(r.from, r.to)), x1 = X(Math.max(r.from, r.to));
      const up = r.to >= r.from;
      const color = r.total ? '#334155' : up ? '#16a34a' : '#dc2626';
      s.appendChild(svg('text', { x: 4, y: y + 15, 'font-weight': r.total ? 700 : 400 }, r.label));
      s.appendChild(svg('rect', { x: x0, y: y + 4, width: Math.max(1.5, x1 - x0), height: rowH - 9, fill: color, rx: 2 }));
      if (!r.total && i + 1 < rows.length && !rows[i + 1].total)
        s.appendChild(svg('line', { x1: X(r.to), x2: X(r.to), y1: y + rowH - 5, y2: y + rowH + 4, stroke: '#94a3b8', 'stroke-dasharray': '2,2' }));
      const t = r.t;
      let txt = spct(t.pct);
      if (isNum(t.lo_pct) && isNum(t.hi_pct)) txt += ' [' + spct(t.lo_pct, 1) + ', ' + spct(t.hi_pct, 1) + ']';
      s.appendChild(svg('text', { x: W - valueW + 6, y: y + 15, fill: t.direction_certain === false ? '#6b7280' : '#111827' },
        txt + (t.direction_certain === false ? ' ~' : '')));
    });
    node.appendChild(s);
    if (dec.config_change) node.appendChild(el('p', { class: 'cfg' }, 'configuration: ' + dec.config_change));
    node.appendChild(el('p', { class: 'cfg' }, '~ : within noise (the interval includes 0). Bars add up in log terms.'));
  }

  function renderSegments() {
    const ol = $('boundaries');
    clear(ol);
    const seg = state.segments || {};
    const decs = Array.isArray(seg.decomposition) ? seg.decomposition : [];
    const why = state.analysisError;
    $('boundaries-empty').textContent = why ? 'No segments: ' + why : 'One steady segment: nothing changed.';
    $('boundaries-empty').hidden = decs.length > 0;
    if (state.boundary >= decs.length) state.boundary = 0;
    decs.forEach((d, i) => {
      const at = isNum(d.step) ? d.step : isNum(d.at_step) ? d.at_step : d.to && d.to.first_step;
      const li = el('li', { 'data-index': i },
        el('span', { class: 'at' }, 'step ' + intStr(at)),
        el('span', { class: 'what' }, d.sentence || spct(d.terms && d.terms.tokens_per_second && d.terms.tokens_per_second.pct) + ' tokens/s'));
      if (i === state.boundary) li.classList.add('selected');
      li.addEventListener('click', () => {
        state.boundary = i;
        renderSegments();
      });
      ol.appendChild(li);
    });
    waterfall($('waterfall'), decs[state.boundary]);
  }

  function loadAnalysis(name) {
    let why = null;
    const note = (e) => { why = e.message; return null; };
    return Promise.all([
      api(runPath(name) + '/segments').catch(note),
      api(runPath(name) + '/findings').catch(note),
    ]).then(([seg, fnd]) => {
      if (name !== state.run) return;
      state.analysisError = why; /* e.g. a server built without the analysis */
      state.segments = seg;
      state.findings = fnd && Array.isArray(fnd.findings) ? fnd.findings : [];
      renderFindings();
      renderSegments();
      renderCards();
      for (const u of Object.values(state.charts)) u.redraw(false);
    });
  }

  function openRun(name) {
    const changed = name !== state.run;
    state.run = name;
    showView('run');
    renderRunList();
    $('run-title').textContent = name;
    if (!changed && state.data) return Promise.resolve();
    state.data = null;
    state.range = null;
    state.segments = null;
    state.findings = [];
    state.boundary = 0;
    dash.ready = false;
    buildRunCharts();
    clear($('findings'));
    clear($('boundaries'));
    clear($('waterfall'));
    return api(runPath(name)).then((d) => {
      if (name !== state.run) return;
      state.detail = d;
      $('run-live').hidden = !d.live;
      renderContext();
      renderCards();
      return Promise.all([loadSeries(name), loadAnalysis(name)]);
    }).then(() => {
      if (name === state.run) { dash.ready = true; dash.view = 'run'; showError(''); }
    }).catch((e) => showError('run ' + name + ': ' + e.message));
  }

  /* ---- compare -------------------------------------------------------------------------- */

  function fillCompareSelects() {
    for (const id of ['cmp-a', 'cmp-b']) {
      const sel = $(id);
      const keep = sel.value;
      clear(sel);
      for (const r of state.runs) sel.appendChild(el('option', { value: r.name }, r.name));
      if (keep && state.runs.some((r) => r.name === keep)) sel.value = keep;
    }
    if (!$('cmp-b').dataset.touched && state.runs.length > 1 && $('cmp-a').value === $('cmp-b').value)
      $('cmp-b').value = state.runs[1].name;
  }

  function runSpec(name, range) {
    const r = (range || '').trim();
    if (r && !/^\d+\s*-\s*\d+$/.test(r)) throw new Error('steps must look like 100-900');
    return encodeURIComponent(name) + (r ? ':' + r.replace(/\s+/g, '') : '');
  }

  /* Levels come with the API's names or with the analysis JSON's (mfu report --json). */
  const modelFlops = (l) => (isNum(l.model_flops_per_second_per_device) ? l.model_flops_per_second_per_device : l.model_flops_per_s_per_device);

  function figureRows(a, b) {
    const iv = (x, f) => (x && isNum(x.value) ? [f(x.value), isNum(x.lo) && isNum(x.hi) ? '[' + f(x.lo) + ', ' + f(x.hi) + ']' : ''] : ['-', '']);
    const plain = (x, f) => [f(x), ''];
    return [
      ['steps', plain(a.first_step, intStr)[0] + '–' + intStr(a.last_step), intStr(b.first_step) + '–' + intStr(b.last_step), null],
      ['tokens/s', iv(a.tokens_per_second, (v) => si(v, '', 4)), iv(b.tokens_per_second, (v) => si(v, '', 4)), [a.tokens_per_second, b.tokens_per_second]],
      ['MFU', iv(a.mfu, (v) => pct(v, 2)), iv(b.mfu, (v) => pct(v, 2)), [a.mfu, b.mfu]],
      ['HFU', iv(a.hfu, (v) => pct(v, 2)), iv(b.hfu, (v) => pct(v, 2)), [a.hfu, b.hfu]],
      ['step time', iv(a.step_time_s, secs), iv(b.step_time_s, secs), [a.step_time_s, b.step_time_s]],
      ['model TFLOP/s/device', plain(modelFlops(a), tflops), plain(modelFlops(b), tflops), null],
      ['devices', plain(a.devices, intStr), plain(b.devices, intStr), null],
      ['sequence', plain(a.seq_len, intStr), plain(b.seq_len, intStr), null],
      ['dtype', [a.dtype || '-', ''], [b.dtype || '-', ''], null],
    ];
  }

  function renderCompare(j, nameA, nameB) {
    $('cmp-result').hidden = false;
    const dec = j.decomposition || {};
    $('cmp-sentence').textContent = dec.sentence || j.sentence || '';
    const v = $('cmp-verdict');
    clear(v);
    const verdict = j.verdict || {};
    v.appendChild(el('span', { class: 'badge ' + (verdict.direction_certain ? 'ok' : 'noise') },
      verdict.direction_certain ? 'direction certain' : 'within noise'));
    v.appendChild(document.createTextNode(' '));
    v.appendChild(el('span', { class: 'badge ' + (verdict.size_known ? 'ok' : 'noise') },
      verdict.size_known ? 'size known' : 'size uncertain'));
    if (dec.config_change) v.appendChild(el('span', { class: 'muted' }, '  configuration: ' + dec.config_change));
    const t = $('cmp-table');
    clear(t);
    t.appendChild(el('thead', null, el('tr', null, el('th', null, ''), el('th', null, 'A: ' + nameA), el('th', null, 'B: ' + nameB), el('th', null, 'B vs A'))));
    const tb = el('tbody');
    for (const [label, ca, cb, pair] of figureRows(j.a || {}, j.b || {})) {
      const cell = (c) => (Array.isArray(c) ? el('td', null, c[0], c[1] ? el('div', { class: 'ci' }, c[1]) : null) : el('td', null, c));
      let change = '';
      let cls = null;
      if (pair && pair[0] && pair[1] && isNum(pair[0].value) && isNum(pair[1].value) && pair[0].value !== 0) {
        const r = pair[1].value / pair[0].value - 1;
        change = spct(r);
        cls = label === 'step time' ? (r > 0 ? 'down' : 'up') : (r >= 0 ? 'up' : 'down');
      }
      tb.appendChild(el('tr', null, el('td', null, label), cell(ca), cell(cb), el('td', { class: cls }, change)));
    }
    t.appendChild(tb);
    waterfall($('cmp-waterfall'), dec);
    drawCompareChart(nameA, nameB);
  }

  function drawCompareChart(a, b) {
    const node = $('chart-cmp');
    Promise.all([api(runPath(a) + '/series?fields=mfu,tokens_per_second&max_points=' + maxPoints()),
      api(runPath(b) + '/series?fields=mfu,tokens_per_second&max_points=' + maxPoints())]).then(([ja, jb]) => {
      /* Two runs on one step axis: uPlot wants one x array, so merge the step numbers. */
      const useMfu = (ja.columns.mfu || []).some(isNum) && (jb.columns.mfu || []).some(isNum);
      const key = useMfu ? 'mfu' : 'tokens_per_second';
      const m = new Map();
      (ja.step || []).forEach((s, i) => m.set(s, [ja.columns[key][i], null]));
      (jb.step || []).forEach((s, i) => { const e = m.get(s) || [null, null]; e[1] = jb.columns[key][i]; m.set(s, e); });
      const xs = Array.from(m.keys()).sort((x, y) => x - y);
      const data = [xs, xs.map((s) => m.get(s)[0]), xs.map((s) => m.get(s)[1])];
      const f = useMfu ? (v) => pct(v, 1) : (v) => si(v, '', 3);
      if (state.charts['chart-cmp']) state.charts['chart-cmp'].destroy();
      clear(node);
      const u = new uPlot({
        title: (useMfu ? 'MFU' : 'tokens/s') + ' by step, A and B',
        width: chartWidth(node), height: 200,
        scales: { x: { time: false } },
        series: [{ label: 'step' },
          { label: 'A: ' + a, stroke: '#2563eb', width: 1.25, spanGaps: true, value: (u, v) => f(v) },
          { label: 'B: ' + b, stroke: '#f59e0b', width: 1.25, spanGaps: true, value: (u, v) => f(v) }],
        axes: [{}, { values: (u, vals) => vals.map(f), size: 60 }],
      }, data, node);
      state.charts['chart-cmp'] = u;
      node.dataset.points = String(xs.length);
    }).catch(() => {});
  }

  function doCompare(a, b, ra, rb) {
    $('cmp-error').hidden = true;
    let q;
    try { q = 'a=' + runSpec(a, ra) + '&b=' + runSpec(b, rb); } catch (e) {
      $('cmp-error').textContent = e.message;
      $('cmp-error').hidden = false;
      return Promise.resolve();
    }
    dash.ready = false;
    return api('api/compare?' + q).then((j) => {
      renderCompare(j, a, b);
      dash.ready = true;
      dash.view = 'compare';
    }).catch((e) => {
      $('cmp-result').hidden = true;
      $('cmp-error').textContent = 'compare: ' + e.message;
      $('cmp-error').hidden = false;
      dash.ready = true;
      dash.view = 'compare';
    });
  }

  /* ---- routing -------------------------------------------------------------------------- */

  function showView(which) {
    for (const v of ['run', 'compare', 'empty']) $('view-' + v).hidden = v !== which;
    $('nav-runs').classList.toggle('active', which !== 'compare');
    $('nav-compare').classList.toggle('active', which === 'compare');
  }

  function route() {
    const h = location.hash || '#/';
    if (h.startsWith('#/run/')) {
      let name;
      try { name = decodeURIComponent(h.slice(6)); } catch (e) { name = h.slice(6); }
      return openRun(name);
    }
    if (h.startsWith('#/compare')) {
      showView('compare');
      state.run = null;
      renderRunList();
      const p = new URLSearchParams(h.split('?')[1] || '');
      if (p.get('a')) $('cmp-a').value = p.get('a');
      if (p.get('b')) { $('cmp-b').value = p.get('b'); $('cmp-b').dataset.touched = '1'; }
      $('cmp-a-range').value = p.get('ra') || '';
      $('cmp-b-range').value = p.get('rb') || '';
      if (p.get('a') && p.get('b')) return doCompare(p.get('a'), p.get('b'), p.get('ra'), p.get('rb'));
      dash.ready = true;
      dash.view = 'compare';
      return Promise.resolve();
    }
    /* "#/": open the first run, live ones first */
    const first = state.runs.slice().sort((a, b) => (b.live ? 1 : 0) - (a.live ? 1 : 0))[0];
    if (first) {
      history.replaceState(null, '', '#/run/' + encodeURIComponent(first.name));
      return openRun(first.name);
    }
    showView('empty');
    dash.ready = true;
    dash.view = 'empty';
    return Promise.resolve();
  }

  $('compare-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    p.set('a', $('cmp-a').value);
    p.set('b', $('cmp-b').value);
    if ($('cmp-a-range').value.trim()) p.set('ra', $('cmp-a-range').value.trim());
    if ($('cmp-b-range').value.trim()) p.set('rb', $('cmp-b-range').value.trim());
    location.hash = '#/compare?' + p.toString();
  });
  $('cmp-b').addEventListener('change', () => { $('cmp-b').dataset.touched = '1'; });

  window.addEventListener('hashchange', () => { route(); });

  /* Charts follow the width of their column. A resize changes the points budget too, but
   * the data already held stays until the next fetch (a zoom or a new run). */
  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const [id, u] of Object.entries(state.charts)) {
        const node = $(id);
        if (node && !node.closest('[hidden]')) u.setSize({ width: chartWidth(node), height: u.height });
      }
    }, 100);
  });

  loadRuns().then(route).catch((e) => { showError('cannot reach the server: ' + e.message); dash.ready = true; })
    .finally(connectEvents);
})();
