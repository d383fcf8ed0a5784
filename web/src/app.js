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
 * Chart controls (one toolbar for the run and the compare view): the x axis (step, time as the
 * sum of step times, or tokens so far: the series API's axes=1), smoothing (an exponential
 * moving average with a slider, debiased as TensorBoard's; the raw points stay drawn faint),
 * and a log y scale. The compare view overlays any number of runs, each in its own colour,
 * aligned at their start or by step.
 *
 * For tests: window.mfuDash exposes read-only state (ready, updates, point counts), and every
 * chart container carries data-points (the points it draws), data-total (rows on the server),
 * data-x-min/data-x-max (the x range of its data), data-smooth and data-log.
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
  /* Numbers in SI units (FLOP/s, tokens/s, FLOP/token), as the text and HTML reports print
   * them (mfu__fmt_si of src/util): `digits` significant digits, the prefix chosen after
   * rounding (999.96 T is 1.00 P), so a CPU's few GFLOP/s read "3.16 GFLOP/s", never "0.0
   * TFLOP/s"; '-' for unknown. */
  const SI = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  function si(v, unit = '', digits = 3) {
    if (typeof v !== 'number' || Number.isNaN(v)) return '-';
    const sp = unit ? ' ' : '';
    if (!Number.isFinite(v)) return (v < 0 ? '-' : '') + 'inf' + sp + unit;
    if (v === 0) return '0' + sp + unit;
    if (Math.abs(v) < 1) return +v.toPrecision(digits) + sp + unit;
    let a = Math.abs(v), k = 0;
    while (a >= 1000 && k < SI.length - 1) { a /= 1000; k++; }
    for (;;) {
      const e = a < 10 ? 0 : a < 100 ? 1 : 2;
      const dec = Math.max(0, digits - 1 - e);
      const s = a.toFixed(dec), r = Number(s);
      const er = r < 10 ? 0 : r < 100 ? 1 : 2;
      if (r >= 1000 && k < SI.length - 1) { a = r / 1000; k++; } else if (er > e && dec > 0) a = r;
      else return (v < 0 ? '-' : '') + s + (unit || SI[k] ? ' ' : '') + SI[k] + unit;
    }
  }
  const flops = (v) => si(v, 'FLOP/s');
  const peakFlops = (v) => si(v, 'FLOP/s', 4);
  /* An axis's tick labels with one SI prefix for the whole axis (from its largest tick) and
   * the decimals its tick spacing needs: "0", "1.5 G", "3.0 G", ... (never "0 0 0 0"). */
  function siTicks(vals) {
    const fin = vals.filter(isNum);
    const ref = fin.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    let k = 0;
    while (k < SI.length - 1 && ref >= 1000 ** (k + 1)) k++;
    const f = 1000 ** k;
    let step = Infinity;
    for (let i = 1; i < fin.length; i++) step = Math.min(step, Math.abs(fin[i] - fin[i - 1]));
    const s = step / f;
    const d = Number.isFinite(s) && s > 0 ? Math.min(6, Math.max(0, Math.ceil(-Math.log10(s) - 1e-9))) : 0;
    return vals.map((v) => (!isNum(v) ? '' : v === 0 ? '0' : (v / f).toFixed(d) + (SI[k] ? ' ' + SI[k] : '')));
  }
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
    'model_flops_per_second_per_device', 'hardware_flops_per_second_per_device', 'loss'];
  const MAX_POINTS_LIMIT = 20000;

  const state = {
    runs: [],
    run: null,          // name of the open run
    detail: null,       // /api/runs/{run}
    data: null,         // {step: [], elapsed: [] | null, tokens: [] | null, columns: {...}, total, downsampled}
    range: null,        // [from, to] steps when zoomed, else null
    xrange: null,       // the same range in x units
    segments: null,
    findings: [],
    boundary: 0,        // selected decomposition index
    charts: {},         // id -> uPlot
    fetchSeq: 0,
    pendingRefresh: null,
    analysisError: null, // why segments/findings could not be had
  };
  /* The chart controls, shared by the run and the compare view. */
  const view = {
    x: 'step',          // 'step' | 'time' | 'tokens'
    smooth: 0,          // EMA weight 0..0.99 (0: off)
    log: false,         // log y scale
    align: 'start',     // overlay: 'start' (steps since each run's first) | 'step'
    metric: 'mfu',      // overlay metric
    overlay: [],        // overlaid run names, in order
  };
  const dash = { ready: false, updates: 0, appended: 0, points: {}, total: 0, view: '', errors: 0,
    controls: view, overlay: null,
    /* for tests: what a chart draws (uPlot's data arrays), its series' labels, colours and
     * visibility, and its y scale's distribution (3: log) */
    chart: (id) => {
      const u = state.charts[id];
      return u ? { data: u.data, series: u.series.map((x) => ({ label: x.label, stroke: typeof x.stroke === 'function' ? x.stroke(u, 1) : x.stroke, show: x.show })),
        distr: u.scales.y && u.scales.y.distr, xmin: u.scales.x.min, xmax: u.scales.x.max,
        yticks: u.axes[1] && u.axes[1]._values ? u.axes[1]._values.slice() : null } : null;
    },
    /* the number formats, shared with trace.js (loaded after this file) and the tests */
    fmt: { si, flops, ticks: siTicks } };
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
    renderOverlayList();
  }

  function loadRuns() {
    return api('api/runs').then((j) => {
      state.runs = (j && Array.isArray(j.runs)) ? j.runs : [];
      renderRunList();
    });
  }

  /* ---- x axes, smoothing, log scale ---------------------------------------------------- */

  const X_LABEL = { step: 'step', time: 'time (sum of step times)', tokens: 'tokens' };

  /* Exponential moving average of ys with weight w, debiased (TensorBoard's smoothing): the
   * first points are not pulled toward 0. Gaps stay gaps and do not reset the average. On a
   * downsampled series it averages the points drawn, not every step. */
  function ema(ys, w) {
    if (!(w > 0)) return ys;
    const out = new Array(ys.length);
    let last = 0, k = 0;
    for (let i = 0; i < ys.length; i++) {
      const v = ys[i];
      if (!isNum(v)) { out[i] = null; continue; }
      last = last * w + (1 - w) * v;
      k++;
      out[i] = last / (1 - Math.pow(w, k));
    }
    return out;
  }
  /* On a log axis a value <= 0 cannot be drawn: a gap. */
  const forLog = (ys) => (view.log ? ys.map((v) => (isNum(v) && v > 0 ? v : null)) : ys);

  /* Seconds as an axis label: 45 s, 12 min, 3.5 h, 2.1 d. */
  function duration(v) {
    if (!isNum(v)) return '';
    const a = Math.abs(v);
    if (a < 120) return +v.toPrecision(3) + ' s';
    if (a < 7200) return +(v / 60).toPrecision(3) + ' min';
    if (a < 172800) return +(v / 3600).toPrecision(3) + ' h';
    return +(v / 86400).toPrecision(3) + ' d';
  }
  function xAxisValues(kind) {
    if (kind === 'time') return (u, vals) => vals.map(duration);
    if (kind === 'tokens') return (u, vals) => vals.map((v) => (isNum(v) ? si(v, '', 3) : ''));
    return (u, vals) => vals.map((v) => (!isNum(v) ? '' : Math.abs(v) >= 1e4 ? si(v, '', 3) : intStr(v)));
  }
  function xLegend(kind) {
    if (kind === 'time') return (u, v) => (isNum(v) ? duration(v) : '-');
    if (kind === 'tokens') return (u, v) => (isNum(v) ? si(v, '', 4) : '-');
    return (u, v) => (isNum(v) ? intStr(v) : '-');
  }

  /* The x values of the open run's data under the chosen axis. */
  function xOf(d) {
    if (view.x === 'time' && d.elapsed) return d.elapsed;
    if (view.x === 'tokens' && d.tokens) return d.tokens;
    return d.step;
  }
  /* Step -> x and x -> step on the open run's data (steps ascend): interpolated between the
   * points held; identity on the step axis. */
  function interp(from, to, v) {
    const n = from.length;
    if (!n || !isNum(v)) return v;
    if (v <= from[0]) return to[0];
    if (v >= from[n - 1]) return to[n - 1];
    let lo = 0, hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (from[mid] <= v) lo = mid; else hi = mid;
    }
    const f = from[hi] === from[lo] ? 0 : (v - from[lo]) / (from[hi] - from[lo]);
    return to[lo] + f * (to[hi] - to[lo]);
  }
  function stepToX(s) {
    const d = state.data;
    if (!d || view.x === 'step') return s;
    return interp(d.step, xOf(d), s);
  }
  function xToStep(x) {
    const d = state.data;
    if (!d || view.x === 'step') return x;
    return interp(xOf(d), d.step, x);
  }

  /* ---- charts --------------------------------------------------------------------------- */

  /* Overlays drawn on every run chart: warm-up band, segment boundaries, finding markers. */
  function drawOverlays(u) {
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    const xmin = u.scales.x.min, xmax = u.scales.x.max;
    if (!isNum(xmin) || !isNum(xmax)) return;
    const X = (s) => u.valToPos(stepToX(s), 'x', true);
    const inX = (s) => { const x = stepToX(s); return x >= xmin && x <= xmax; };
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    const seg = state.segments;
    if (seg && seg.warmup && seg.warmup.steps > 0 && isNum(seg.warmup.last_step)) {
      const x0 = Math.max(left, X(seg.warmup.first_step)), x1 = Math.min(left + width, X(seg.warmup.last_step));
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
        if (!isNum(s) || !inX(s)) continue;
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
        if (!isNum(a) || stepToX(b) < xmin || stepToX(a) > xmax) continue;
        const color = sevColor(f.severity);
        const x0 = Math.max(left, X(a)), x1 = Math.min(left + width, X(b));
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

  /* Faint: the raw points under their smoothed line. */
  function faint(hex) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},0.28)`;
  }

  /* The run charts: each line is two uPlot series, raw (faint, shown while smoothing) and
   * smoothed (the EMA; the raw values themselves when smoothing is off). */
  const RUN_CHARTS = [
    { id: 'chart-mfu', title: 'MFU', height: 170, markers: true, zero: 0.05, axis: (v) => pct(v, 0),
      lines: [['HFU', 'hfu', '#93c5fd', (v) => pct(v, 2)], ['MFU', 'mfu', '#2563eb', (v) => pct(v, 2)]] },
    { id: 'chart-tps', title: 'tokens/s (whole job)', height: 150, markers: true, axis: (v) => si(v, '', 3),
      lines: [['tokens/s', 'tokens_per_second', '#0f9d76', (v) => si(v, '', 4)]] },
    { id: 'chart-step', title: 'step time', height: 130, markers: true, axis: secsAxis,
      lines: [['step time', 'step_time_s', '#8b5cf6', secs]] },
    { id: 'chart-flops', title: 'FLOP/s per device: model vs hardware', height: 140, markers: true, zero: 1,
      ticks: siTicks,
      lines: [['model', 'model_flops_per_second_per_device', '#2563eb', flops],
        ['hardware', 'hardware_flops_per_second_per_device', '#f59e0b', flops]] },
    { id: 'chart-loss', title: 'loss', height: 150, markers: true, axis: (v) => (isNum(v) ? +v.toPrecision(3) + '' : ''),
      lines: [['loss', 'loss', '#dc2626', (v) => (isNum(v) ? v.toPrecision(5) : '-')]] },
  ];

  function lineSeries(lines) {
    const out = [];
    for (const [label, , color, value] of lines) {
      out.push({ label: label + ' (raw)', stroke: faint(color), width: 1, show: view.smooth > 0,
        value: (u, v) => value(v), spanGaps: false });
      out.push({ label, stroke: color, width: view.smooth > 0 ? 1.6 : 1.25, value: (u, v) => value(v), spanGaps: false });
    }
    return out;
  }

  function makeChart(spec) {
    const node = $(spec.id);
    clear(node);
    const series = lineSeries(spec.lines);
    const y = view.log ? { distr: 3 } : spec.zero ? { range: (u, min, max) => [0, Math.max(spec.zero, max * 1.08)] } : {};
    const opts = {
      title: spec.title,
      width: chartWidth(node),
      height: spec.height,
      cursor: {
        sync: { key: 'mfu-run', setSeries: false },
        drag: { x: true, y: false, setScale: true },
      },
      scales: { x: { time: false }, y },
      legend: { live: true },
      series: [{ label: X_LABEL[view.x], value: xLegend(view.x) }].concat(series),
      axes: [
        { values: xAxisValues(view.x), size: 28 },
        { values: (u, vals) => (spec.ticks ? spec.ticks(vals) : vals.map((v) => (isNum(v) ? spec.axis(v) : ''))),
          size: 62, space: 22 },
      ],
      hooks: {
        draw: [drawOverlays],
        setScale: [onSetScale],
        setSelect: [(u) => { if (u.select.width > 0) u.mfuUserZoom = true; }],
      },
    };
    const u = new uPlot(opts, emptyData(series.length), node);
    u.mfuRun = true;
    u.mfuMarkers = !!spec.markers;
    u.mfuSpec = spec;
    node.ondblclick = () => resetZoom();
    node.dataset.log = view.log ? '1' : '0';
    state.charts[spec.id] = u;
    return u;
  }
  function emptyData(n) {
    const d = [[]];
    for (let i = 0; i < n; i++) d.push([]);
    return d;
  }

  function buildRunCharts() {
    for (const [id, c] of Object.entries(state.charts))
      if (c.mfuRun) { c.destroy(); delete state.charts[id]; }
    for (const spec of RUN_CHARTS) makeChart(spec);
  }

  /* uPlot data arrays (x, then raw and smoothed per line) for one run chart. */
  function chartData(spec) {
    const d = state.data;
    const out = [xOf(d)];
    for (const [, field] of spec.lines) {
      const raw = forLog(padTo((d.columns && d.columns[field]) || [], d.step.length));
      out.push(raw, ema(raw, view.smooth));
    }
    return out;
  }

  function pushData(resetScales) {
    if (!state.data) return;
    for (const [id, u] of Object.entries(state.charts)) {
      if (!u.mfuRun) continue;
      const data = chartData(u.mfuSpec);
      u.setData(data, resetScales);
      if (!resetScales && state.xrange) u.setScale('x', { min: state.xrange[0], max: state.xrange[1] });
      const node = $(id);
      const xs = data[0];
      node.dataset.points = String(xs.length);
      node.dataset.total = String(state.data.total);
      node.dataset.xMin = xs.length ? String(xs[0]) : '';
      node.dataset.xMax = xs.length ? String(xs[xs.length - 1]) : '';
      node.dataset.smooth = String(view.smooth);
      node.dataset.x = view.x;
      dash.points[node.dataset.field || id] = xs.length;
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

  /* Smoothing changed: new data for every chart, the raw series shown under it or not. */
  function applySmoothing() {
    for (const u of Object.values(state.charts)) {
      if (!u.mfuRun) continue;
      for (let i = 1; i < u.series.length; i += 2) u.setSeries(i, { show: view.smooth > 0 });
      for (let i = 2; i < u.series.length; i += 2) u.series[i].width = view.smooth > 0 ? 1.6 : 1.25;
    }
    pushData(false);
    if ($('view-compare') && !$('view-compare').hidden) drawOverlay();
  }

  function maxPoints() {
    const node = $('chart-mfu');
    const w = node && node.getBoundingClientRect().width > 0 ? chartWidth(node) : chartWidth($('chart-overlay'));
    return Math.min(MAX_POINTS_LIMIT, Math.max(200, Math.round(w)));
  }

  /* axes=1 only when the x axis needs it: the server sums from the run's start for it. */
  function seriesUrl(name, from, to, fields, axes) {
    let q = 'fields=' + (fields || FIELDS).join(',') + '&max_points=' + maxPoints();
    if (isNum(from)) q += '&from=' + Math.floor(from);
    if (isNum(to)) q += '&to=' + Math.ceil(to);
    if (axes === undefined ? view.x !== 'step' : axes) q += '&axes=1';
    return runPath(name) + '/series?' + q;
  }

  function normaliseSeries(j, fields) {
    const step = Array.isArray(j.step) ? j.step : [];
    const columns = {};
    for (const f of fields || FIELDS) {
      const c = j.columns && Array.isArray(j.columns[f]) ? j.columns[f] : [];
      columns[f] = c.length === step.length ? c : padTo(c, step.length);
    }
    const axis = (a) => (Array.isArray(a) && a.length === step.length ? a : null);
    return { step, columns, elapsed: axis(j.elapsed_s), tokens: axis(j.tokens_cum),
      total: isNum(j.total) ? j.total : step.length, downsampled: !!j.downsampled };
  }

  let rangeTimer = null;
  function scheduleRangeFetch(min, max) {
    clearTimeout(rangeTimer);
    rangeTimer = setTimeout(() => {
      const name = state.run;
      const from = xToStep(min), to = xToStep(max);
      state.range = [from, to];
      state.xrange = [min, max];
      const seq = ++state.fetchSeq;
      api(seriesUrl(name, from, to)).then((j) => {
        if (seq !== state.fetchSeq || name !== state.run) return;
        state.data = normaliseSeries(j);
        pushData(false);
      }).catch((e) => showError('series: ' + e.message));
    }, 150);
  }

  function resetZoom() {
    if (!state.run) return;
    state.range = null;
    state.xrange = null;
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

  /* ---- the controls --------------------------------------------------------------------- */

  function syncControls() {
    $('x-axis').value = view.x;
    $('smooth').value = String(view.smooth);
    $('smooth-value').textContent = view.smooth > 0 ? view.smooth.toFixed(2) : 'off';
    $('log-y').checked = view.log;
    $('ov-align').value = view.align;
    $('ov-align').disabled = view.x !== 'step';
    $('ov-metric').value = view.metric;
  }

  /* The x axis or the log scale changed: the charts are made again (their axes differ), with
   * data that has the x values (axes=1 when not by step). */
  function rebuildCharts() {
    syncControls();
    if (!$('view-compare').hidden) return drawOverlay();
    if (!state.run) return Promise.resolve();
    state.range = null;
    state.xrange = null;
    buildRunCharts();
    const d = state.data;
    if (d && (view.x === 'step' || (view.x === 'time' ? d.elapsed : d.tokens))) {
      pushData(true);
      return Promise.resolve();
    }
    return loadSeries(state.run);
  }

  function wireControls() {
    $('x-axis').addEventListener('change', () => { view.x = $('x-axis').value; rebuildCharts(); });
    $('log-y').addEventListener('change', () => { view.log = $('log-y').checked; rebuildCharts(); });
    $('smooth').addEventListener('input', () => {
      const v = Number($('smooth').value);
      view.smooth = isNum(v) ? Math.min(0.99, Math.max(0, v)) : 0;
      syncControls();
      applySmoothing();
    });
    $('ov-align').addEventListener('change', () => { view.align = $('ov-align').value; drawOverlay(); });
    $('ov-metric').addEventListener('change', () => { view.metric = $('ov-metric').value; drawOverlay(); });
    syncControls();
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
    if (view.overlay.includes(name) && !$('view-compare').hidden) scheduleOverlayRefresh();
    if (name !== state.run || !state.data) return;
    const d = state.data;
    const last = d.step.length ? d.step[d.step.length - 1] : -Infinity;
    for (const row of rows) {
      if (row.step <= last) continue; /* a repeat of what the series already holds */
      d.step.push(row.step);
      for (const f of FIELDS) d.columns[f].push(isNum(row[f]) ? row[f] : null);
      /* the running sums of the x axes, as the server makes them (series?axes=1) */
      const st = isNum(row.step_time_s) && row.step_time_s > 0 ? row.step_time_s : 0;
      const tps = isNum(row.tokens_per_second) && row.tokens_per_second > 0 ? row.tokens_per_second : 0;
      if (d.elapsed) d.elapsed.push((d.elapsed.length ? d.elapsed[d.elapsed.length - 1] : 0) + st);
      if (d.tokens) d.tokens.push((d.tokens.length ? d.tokens[d.tokens.length - 1] : 0) + (st ? tps * st : 0));
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
  let overlayTimer = null;
  function scheduleOverlayRefresh() {
    if (overlayTimer) return;
    overlayTimer = setTimeout(() => { overlayTimer = null; drawOverlay(); }, 1000);
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

  /* A card: its label, its value as shown, the interval under it; raw (the number shown, as
   * the API gave it) goes into data-value, and the interval's ends into data-lo / data-hi. */
  function card(label, value, sub, raw, iv) {
    const v = el('div', { class: 'value' }, value);
    if (isNum(raw)) v.dataset.value = String(raw);
    const s = sub ? el('div', { class: 'sub' }, sub) : null;
    if (s && iv && isNum(iv.lo) && isNum(iv.hi)) { s.dataset.lo = String(iv.lo); s.dataset.hi = String(iv.hi); }
    return el('div', { class: 'card', 'data-card': label }, el('div', { class: 'label' }, label), v, s);
  }

  function renderCards() {
    const box = $('cards');
    if (!state.run) return;
    clear(box);
    const r = state.runs.find((x) => x.name === state.run) || state.detail || {};
    /* The steady level of the analysis when there is one (refreshed as a live run grows, with
     * its intervals); else the run list's summary. Both are the medians of the steady steps. */
    const st = state.segments && state.segments.steady;
    const val = (iv) => (iv && typeof iv === 'object' ? iv.value : iv);
    const s = st ? { mfu: val(st.mfu), hfu: val(st.hfu), tokens_per_second: val(st.tokens_per_second),
      step_time_s: val(st.step_time_s), model_flops_per_second_per_device: st.model_flops_per_s_per_device }
      : (r.summary || {});
    const perDevice = st && state.segments.unit === 'tokens per device';
    const ci = (iv, f) => (iv && isNum(iv.lo) && isNum(iv.hi) ? f(iv.lo) + ' – ' + f(iv.hi) : null);
    box.dataset.lastStep = st && isNum(st.last_step) ? String(st.last_step) : '';
    box.appendChild(card('MFU (median)', pct(s.mfu, 1), st ? ci(st.mfu, (v) => pct(v, 1)) : null, s.mfu, st && st.mfu));
    box.appendChild(card(perDevice ? 'tokens/s per device' : 'tokens/s', si(s.tokens_per_second, '', 4),
      st ? ci(st.tokens_per_second, (v) => si(v, '', 3)) : null, s.tokens_per_second, st && st.tokens_per_second));
    box.appendChild(card('step time', secs(s.step_time_s), null, s.step_time_s));
    box.appendChild(card('HFU', pct(s.hfu, 1), null, s.hfu));
    box.appendChild(card('model FLOP/s/device', flops(s.model_flops_per_second_per_device),
      null, s.model_flops_per_second_per_device));
    box.appendChild(card('steps', intStr(r.steps), isNum(r.first_step) ? 'steps ' + intStr(r.first_step) + '–' + intStr(r.last_step) : null, r.steps));
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
      if (isNum(c.peak_flops)) dev.push('peak ' + peakFlops(c.peak_flops));
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
    u.setScale('x', { min: stepToX(a - pad), max: stepToX(b + pad) });
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
    const W = 560, rowH = 24, labelW = 170, valueW = 200, top = 6; // the value column holds "+25.0% [+19.1%, +32.2%] ~"
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

  /* A live run's analysis is cached a few seconds: one older than the run's last step (the
   * steps drawn, or the run's detail when the series has not arrived yet: the two requests
   * race) is asked for again, so the cards and boundaries catch up without another append. */
  function refreshIfStale() {
    const seg = state.segments;
    if (!seg || !seg.steps || !isNum(seg.steps.last)) return;
    const drawn = state.data && state.data.step.length ? state.data.step[state.data.step.length - 1] : null;
    const listed = state.detail && isNum(state.detail.last_step) ? state.detail.last_step : null;
    const last = Math.max(isNum(drawn) ? drawn : -Infinity, isNum(listed) ? listed : -Infinity);
    if (seg.steps.last < last) scheduleAnalysisRefresh();
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
      refreshIfStale();
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
      if (name === state.run) { refreshIfStale(); dash.ready = true; dash.view = 'run'; showError(''); }
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
      ['model FLOP/s/device', plain(modelFlops(a), flops), plain(modelFlops(b), flops), null],
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
  }

  function doCompare(a, b, ra, rb) {
    $('cmp-error').hidden = true;
    let q;
    try { q = 'a=' + runSpec(a, ra) + '&b=' + runSpec(b, rb); } catch (e) {
      $('cmp-error').textContent = e.message;
      $('cmp-error').hidden = false;
      return Promise.resolve();
    }
    return api('api/compare?' + q).then((j) => {
      renderCompare(j, a, b);
    }).catch((e) => {
      $('cmp-result').hidden = true;
      $('cmp-error').textContent = 'compare: ' + e.message;
      $('cmp-error').hidden = false;
    });
  }

  /* ---- overlay: N runs on one chart ------------------------------------------------------ */

  const PALETTE = ['#2563eb', '#f59e0b', '#16a34a', '#dc2626', '#9333ea', '#0891b2', '#db2777',
    '#65a30d', '#ea580c', '#475569'];
  const METRICS = {
    mfu: ['MFU', (v) => pct(v, 1), (v) => pct(v, 2)],
    tokens_per_second: ['tokens/s', (v) => si(v, '', 3), (v) => si(v, '', 4)],
    step_time_s: ['step time', secsAxis, secs],
    loss: ['loss', (v) => (isNum(v) ? +v.toPrecision(3) + '' : ''), (v) => (isNum(v) ? v.toPrecision(5) : '-')],
  };
  const colorOf = (name) => PALETTE[Math.max(0, state.runs.findIndex((r) => r.name === name)) % PALETTE.length];

  /* One checkbox per run, in its colour; the checked ones are overlaid. */
  function renderOverlayList() {
    const ul = $('ov-runs');
    if (!ul) return;
    clear(ul);
    view.overlay = view.overlay.filter((n) => state.runs.some((r) => r.name === n));
    for (const r of state.runs) {
      const box = el('input', { type: 'checkbox', 'data-run': r.name });
      box.checked = view.overlay.includes(r.name);
      box.addEventListener('change', () => {
        if (box.checked && !view.overlay.includes(r.name)) view.overlay.push(r.name);
        if (!box.checked) view.overlay = view.overlay.filter((n) => n !== r.name);
        drawOverlay();
      });
      const li = el('li', null, el('label', { title: r.name }, box,
        el('span', { class: 'swatch', style: 'background:' + colorOf(r.name) }),
        el('span', { class: 'ov-name' }, r.name),
        el('span', { class: 'muted' }, ' ' + intStr(r.first_step) + '–' + intStr(r.last_step))));
      ul.appendChild(li);
    }
  }

  /* x of one run's points: steps (absolute, or since its first step), time or tokens so far. */
  function overlayX(d) {
    if (view.x === 'time' && d.elapsed) return d.elapsed;
    if (view.x === 'tokens' && d.tokens) return d.tokens;
    if (view.align === 'start' && d.step.length) return d.step.map((s) => s - d.step[0]);
    return d.step;
  }

  let overlaySeq = 0;
  function drawOverlay() {
    const node = $('chart-overlay');
    const names = view.overlay.slice();
    const metric = METRICS[view.metric] ? view.metric : 'mfu';
    const seq = ++overlaySeq;
    $('ov-empty').hidden = names.length > 0;
    if (!names.length) {
      if (state.charts['chart-overlay']) { state.charts['chart-overlay'].destroy(); delete state.charts['chart-overlay']; }
      clear(node);
      node.dataset.points = '0';
      node.dataset.series = '[]';
      dash.overlay = { runs: [], metric, points: 0 };
      return Promise.resolve();
    }
    const axes = view.x !== 'step';
    return Promise.all(names.map((n) => api(seriesUrl(n, NaN, NaN, [metric], axes)).then((j) => normaliseSeries(j, [metric]))))
      .then((all) => {
        if (seq !== overlaySeq) return;
        /* uPlot draws on one x array: the union of every run's x, each run null elsewhere
         * (lines span those gaps) */
        const per = all.map((d) => ({ x: overlayX(d), y: forLog(d.columns[metric]) }));
        const xs = Array.from(new Set(per.flatMap((p) => p.x))).sort((a, b) => a - b);
        const at = new Map(xs.map((x, i) => [x, i]));
        const data = [xs];
        const series = [{ label: view.x === 'step' ? (view.align === 'start' ? 'steps from start' : 'step') : X_LABEL[view.x],
          value: xLegend(view.x) }];
        const info = [];
        per.forEach((p, k) => {
          const raw = new Array(xs.length).fill(null);
          p.x.forEach((x, i) => { raw[at.get(x)] = isNum(p.y[i]) ? p.y[i] : null; });
          const own = p.y.map((v) => (isNum(v) ? v : null));
          const sm = ema(own, view.smooth);
          const smooth = new Array(xs.length).fill(null);
          p.x.forEach((x, i) => { smooth[at.get(x)] = sm[i]; });
          const color = colorOf(names[k]);
          data.push(raw, smooth);
          series.push({ label: names[k] + ' (raw)', stroke: faint(color), width: 1, spanGaps: true,
            show: view.smooth > 0, value: (u, v) => METRICS[metric][2](v) });
          series.push({ label: names[k], stroke: color, width: view.smooth > 0 ? 1.6 : 1.25, spanGaps: true,
            value: (u, v) => METRICS[metric][2](v) });
          info.push({ run: names[k], color, points: p.x.length, x_min: p.x.length ? p.x[0] : null,
            x_max: p.x.length ? p.x[p.x.length - 1] : null });
        });
        if (state.charts['chart-overlay']) state.charts['chart-overlay'].destroy();
        clear(node);
        const u = new uPlot({
          title: METRICS[metric][0] + ' of ' + names.length + ' run' + (names.length === 1 ? '' : 's'),
          width: chartWidth(node), height: 260,
          scales: { x: { time: false }, y: view.log ? { distr: 3 } : {} },
          cursor: { drag: { x: true, y: false, setScale: true } },
          series,
          axes: [{ values: xAxisValues(view.x), size: 28 },
            { values: (u, vals) => vals.map((v) => (isNum(v) ? METRICS[metric][1](v) : '')), size: 62 }],
        }, data, node);
        state.charts['chart-overlay'] = u;
        node.dataset.points = String(xs.length);
        node.dataset.series = JSON.stringify(info);
        node.dataset.xMin = xs.length ? String(xs[0]) : '';
        node.dataset.xMax = xs.length ? String(xs[xs.length - 1]) : '';
        node.dataset.smooth = String(view.smooth);
        node.dataset.log = view.log ? '1' : '0';
        node.dataset.x = view.x;
        node.dataset.align = view.align;
        dash.overlay = { runs: info, metric, points: xs.length };
      }).catch((e) => {
        if (seq !== overlaySeq) return;
        $('ov-empty').textContent = 'overlay: ' + e.message;
        $('ov-empty').hidden = false;
      });
  }

  /* ---- routing -------------------------------------------------------------------------- */

  function showView(which) {
    for (const v of ['run', 'compare', 'empty']) $('view-' + v).hidden = v !== which;
    $('chart-controls').hidden = which === 'empty';
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
      /* the overlay: ?runs=x,y,z, else A and B, else the first two runs */
      const known = (n) => state.runs.some((r) => r.name === n);
      let ov = p.get('runs') !== null ? p.get('runs').split(',').filter(known)
        : [p.get('a'), p.get('b')].filter((n) => n && known(n));
      if (!ov.length && p.get('runs') === null) ov = state.runs.slice(0, 2).map((r) => r.name);
      view.overlay = Array.from(new Set(ov));
      if (['start', 'step'].includes(p.get('align'))) view.align = p.get('align');
      if (METRICS[p.get('metric')]) view.metric = p.get('metric');
      if (['step', 'time', 'tokens'].includes(p.get('x'))) view.x = p.get('x');
      syncControls();
      renderOverlayList();
      dash.ready = false;
      const cmp = p.get('a') && p.get('b') ? doCompare(p.get('a'), p.get('b'), p.get('ra'), p.get('rb'))
        : Promise.resolve();
      /* ready once the compare request and the overlay answered, well or not */
      return Promise.all([drawOverlay(), cmp]).then(() => { dash.ready = true; dash.view = 'compare'; });
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

  wireControls();
  loadRuns().then(route).catch((e) => { showError('cannot reach the server: ' + e.message); dash.ready = true; })
    .finally(connectEvents);
})();
