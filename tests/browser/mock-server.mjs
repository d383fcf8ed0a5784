// mock-server.mjs - a stand-in for `mfu serve` that speaks the same JSON API (docs/internals/web.md)
// from canonical JSON-lines logs, so the page can be developed and its browser test run without
// the C server. It follows its logs (new lines become SSE "steps" events), derives tokens/s, MFU,
// HFU and FLOP/s from each run's context, and splits segments where the caller says. Its figures
// are plain arithmetic, not mfu's analysis: the browser test checks the page, the server's own
// tests check the numbers.
//
//   node tests/browser/mock-server.mjs [--port N] NAME=LOG ...   (serves web/dist on 127.0.0.1)
//
// A "virtual" run (virtual: {steps}) has its rows computed on request, for a 10-million-step
// run that would not fit a test's memory as objects.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const FIELDS = ['mfu', 'hfu', 'tokens_per_second', 'tokens_per_second_per_device', 'step_time_s',
  'model_flops_per_second_per_device', 'hardware_flops_per_second_per_device', 'loss'];

const median = (xs) => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const num = (v) => (Number.isFinite(v) ? v : null);

function derive(raw, ctx) {
  const tps = Number.isFinite(raw.tokens) && raw.step_time_s > 0 ? raw.tokens / raw.step_time_s
    : raw.tokens_per_s_scope === 'global' ? raw.tokens_per_s : NaN;
  const dev = ctx && ctx.devices > 0 ? ctx.devices : 1;
  const cap = ctx && ctx.peak_flops > 0 ? dev * ctx.peak_flops : NaN;
  const mf = ctx ? ctx.model_flops_per_token : NaN;
  const hf = ctx ? ctx.hardware_flops_per_token : NaN;
  return {
    step: raw.step,
    step_time_s: num(raw.step_time_s),
    tokens_per_second: num(tps),
    tokens_per_second_per_device: num(tps / dev),
    mfu: num((tps * mf) / cap),
    hfu: num((tps * hf) / cap),
    model_flops_per_second_per_device: num((tps * mf) / dev),
    hardware_flops_per_second_per_device: num((tps * hf) / dev),
    loss: num(raw.loss),
  };
}

/* A run: rows from a followed canonical log, or computed (virtual). */
class Run {
  constructor(spec) {
    this.name = spec.name;
    this.path = spec.path || null;
    this.context = spec.context || null;
    this.boundaries = spec.boundaries || [];
    this.findings = spec.findings || [];
    this.tags = spec.tags || {};
    this.virtual = spec.virtual || null;
    this.rows = [];
    this.meta = {};
    this.offset = 0;
    this.partial = '';
    this.live = !!spec.live;
  }
  count() { return this.virtual ? this.virtual.steps : this.rows.length; }
  row(i) {
    if (!this.virtual) return this.rows[i];
    const s = i + 1; // a slow drift with a dip every 100k steps: LTTB-worthy shape
    const st = 0.5 * (1 + 0.05 * Math.sin(s / 50000) + (s % 100000 < 500 ? 0.4 : 0));
    return derive({ step: s, step_time_s: st, tokens: 524288, loss: 2 + 1 / Math.sqrt(s) }, this.context);
  }
  /* Read what the log gained; returns the new rows. */
  poll() {
    if (!this.path) return [];
    let fd;
    try { fd = fs.openSync(this.path, 'r'); } catch { return []; }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.offset) { this.offset = 0; this.partial = ''; }
      if (size === this.offset) return [];
      const buf = Buffer.alloc(size - this.offset);
      fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const text = this.partial + buf.toString('utf8');
      const lines = text.split('\n');
      this.partial = lines.pop();
      const added = [];
      for (const line of lines) {
        let o;
        try { o = JSON.parse(line); } catch { continue; }
        if (o && o.mfu_run) { this.meta = o; continue; }
        if (!o || !Number.isInteger(o.step)) continue;
        const r = derive(o, this.context);
        this.rows.push(r);
        added.push(r);
      }
      return added;
    } finally { fs.closeSync(fd); }
  }
  summary() {
    const n = this.count();
    const take = Math.min(n, 20000);
    const rows = [];
    for (let k = 0; k < take; k++) rows.push(this.row(Math.floor((k * n) / take)));
    const s = {};
    for (const f of ['mfu', 'hfu', 'tokens_per_second', 'model_flops_per_second_per_device', 'step_time_s'])
      s[f] = median(rows.map((r) => (r[f] === null ? NaN : r[f])));
    return s;
  }
  listing() {
    const n = this.count();
    return {
      name: this.name, format: this.virtual ? 'mfu' : this.meta.format || 'mfu', steps: n,
      first_step: n ? this.row(0).step : null, last_step: n ? this.row(n - 1).step : null,
      live: this.live, tags: this.tags,
      device: this.context ? { id: this.context.device, count: this.context.devices, peak_flops: this.context.peak_flops } : null,
      summary: this.summary(),
    };
  }
  /* Row indices with from <= step <= to. */
  range(from, to) {
    const n = this.count();
    let a = 0, b = n;
    if (this.virtual) {
      a = Number.isFinite(from) ? Math.max(0, Math.min(n, from - 1)) : 0;
      b = Number.isFinite(to) ? Math.max(a, Math.min(n, to)) : n;
      return [a, b];
    }
    while (a < n && Number.isFinite(from) && this.rows[a].step < from) a++;
    while (b > a && Number.isFinite(to) && this.rows[b - 1].step > to) b--;
    return [a, b];
  }
  series(fields, maxPoints, from, to, axes) {
    const [a, b] = this.range(from, to);
    const total = b - a;
    const idx = [];
    if (total <= maxPoints) for (let i = a; i < b; i++) idx.push(i);
    else for (let k = 0; k < maxPoints; k++) idx.push(a + Math.round((k * (total - 1)) / (maxPoints - 1)));
    const rows = idx.map((i) => this.row(i));
    const columns = {};
    for (const f of fields) columns[f] = rows.map((r) => r[f]);
    const out = { run: this.name, fields, total, downsampled: total > maxPoints, method: total > maxPoints ? 'stride' : 'none',
      step: rows.map((r) => r.step), columns };
    if (axes) {
      /* as mfu serve: running sums from the run's first row of step time and tokens/s x step time */
      out.elapsed_s = [];
      out.tokens_cum = [];
      let el = 0, tok = 0, i = 0;
      for (const k of idx) {
        for (; i <= k; i++) {
          const r = this.row(i);
          if (r.step_time_s > 0) {
            el += r.step_time_s;
            if (r.tokens_per_second > 0) tok += r.tokens_per_second * r.step_time_s;
          }
        }
        out.elapsed_s.push(el);
        out.tokens_cum.push(tok);
      }
    }
    return out;
  }
  level(a, b) {
    const rows = [];
    for (let i = a; i < b; i++) rows.push(this.row(i));
    const sumT = rows.reduce((x, r) => x + (r.step_time_s || 0), 0);
    const sumTok = rows.reduce((x, r) => x + (r.tokens_per_second || 0) * (r.step_time_s || 0), 0);
    const tps = sumT > 0 ? sumTok / sumT : null;
    const c = this.context;
    const mfu = c && tps !== null ? (tps * c.model_flops_per_token) / (c.devices * c.peak_flops) : null;
    const hfu = c && tps !== null ? (tps * c.hardware_flops_per_token) / (c.devices * c.peak_flops) : null;
    const iv = (v) => ({ value: v, lo: null, hi: null });
    return {
      first_step: rows.length ? rows[0].step : null, last_step: rows.length ? rows[rows.length - 1].step : null,
      steps: rows.length, tokens_per_second: iv(tps), mfu: iv(mfu), hfu: iv(hfu),
      step_time_s: iv(rows.length ? sumT / rows.length : null),
      median_step_time_s: median(rows.map((r) => r.step_time_s)),
      model_flops_per_second_per_device: c && tps !== null ? (tps * c.model_flops_per_token) / c.devices : null,
      hardware_flops_per_second_per_device: c && tps !== null ? (tps * c.hardware_flops_per_token) / c.devices : null,
      devices: c ? c.devices : null, peak_flops: c ? c.peak_flops : null, seq_len: null, global_batch: null,
      dtype: c ? c.dtype : '', recompute: '',
    };
  }
}

/* The change between two levels, split as MFU and the rest (the mock knows no capacity or
 * FLOPs-per-token change of its own: what MFU does not explain is put on the workload). */
function decompose(from, to) {
  const ln = (x, y) => (x > 0 && y > 0 ? Math.log(y / x) : null);
  const dt = ln(from.tokens_per_second.value, to.tokens_per_second.value);
  const dm = ln(from.mfu.value, to.mfu.value);
  const term = (d) => ({ dln: d, pct: d === null ? null : Math.expm1(d), lo_pct: null, hi_pct: null,
    share: d !== null && dt ? d / dt : null, direction_certain: d !== null && Math.abs(d) > 0.01, size_known: false });
  return {
    step: to.first_step, from, to,
    terms: { tokens_per_second: term(dt), mfu: term(dm), capacity: term(0),
      flops_per_token: term(dt !== null && dm !== null ? dt - dm : null), padding: term(0) },
    mfu_points: to.mfu.value !== null && from.mfu.value !== null ? to.mfu.value - from.mfu.value : null,
    config_change: '',
    sentence: dt === null ? '' : `tokens/s ${dt >= 0 ? '+' : ''}${(100 * Math.expm1(dt)).toFixed(1)} %`,
  };
}

export function startMock({ distDir, runs, port = 0, pollMs = 200 }) {
  const all = new Map(runs.map((s) => [s.name, new Run(s)]));
  const clients = new Set();
  for (const r of all.values()) r.poll();
  const timer = setInterval(() => {
    for (const r of all.values()) {
      const added = r.poll();
      if (added.length) {
        const msg = `event: steps\ndata: ${JSON.stringify({ run: r.name, steps: added })}\n\n`;
        for (const c of clients) c.write(msg);
      }
    }
  }, pollMs);

  const send = (res, code, obj) => {
    const body = JSON.stringify(obj);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const p = url.pathname;
    if (p === '/' || p.startsWith('/assets/')) {
      const file = p === '/' ? 'index.html' : p.slice(8);
      if (!/^[a-z.]+$/.test(file)) return send(res, 404, { error: 'no such asset' });
      fs.readFile(path.join(distDir, file), (err, data) => {
        if (err) return send(res, 404, { error: 'no such asset' });
        res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
        res.end(data);
      });
      return;
    }
    if (p === '/api/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
      res.write(': hello\n\n');
      clients.add(res);
      req.on('close', () => clients.delete(res));
      return;
    }
    if (p === '/api/runs') return send(res, 200, { runs: [...all.values()].map((r) => r.listing()) });
    if (p === '/api/compare') {
      const side = (spec) => {
        const m = /^(.*?)(?::(\d+)-(\d+))?$/.exec(spec || '');
        const r = m && all.get(m[1]);
        if (!r) return null;
        const [a, b] = r.range(m[2] ? +m[2] : NaN, m[3] ? +m[3] : NaN);
        return r.level(a, b);
      };
      const A = side(url.searchParams.get('a')), B = side(url.searchParams.get('b'));
      if (!A || !B) return send(res, 404, { error: 'no such run; see /api/runs' });
      const d = decompose(A, B);
      return send(res, 200, { a: A, b: B, decomposition: d, sentence: d.sentence,
        verdict: { direction_certain: d.terms.tokens_per_second.direction_certain, size_known: false } });
    }
    const m = /^\/api\/runs\/([^/]+)(?:\/(series|segments|findings|trace))?$/.exec(p);
    if (m) {
      let name;
      try { name = decodeURIComponent(m[1]); } catch { return send(res, 400, { error: 'bad run name' }); }
      const r = all.get(name);
      if (!r) return send(res, 404, { error: `no run '${name}'; see /api/runs` });
      if (!m[2]) return send(res, 200, Object.assign(r.listing(), { meta: r.meta, context: r.context, lines: r.count() }));
      if (m[2] === 'series') {
        const fields = (url.searchParams.get('fields') || 'mfu,tokens_per_second').split(',').filter((f) => FIELDS.includes(f));
        const mp = Math.min(20000, Math.max(2, +(url.searchParams.get('max_points') || 2000)));
        const from = url.searchParams.has('from') ? +url.searchParams.get('from') : NaN;
        const to = url.searchParams.has('to') ? +url.searchParams.get('to') : NaN;
        const axes = url.searchParams.get('axes');
        if (axes !== null && axes !== '0' && axes !== '1') return send(res, 400, { error: 'axes: 0 or 1' });
        return send(res, 200, r.series(fields, mp, from, to, axes === '1'));
      }
      if (m[2] === 'findings') return send(res, 200, { findings: r.findings });
      if (m[2] === 'trace') return send(res, 200, { run: name, trace: null, how: 'no trace attached' });
      const n = r.count();
      const cuts = [0, ...r.boundaries.map((s) => r.range(s, NaN)[0]), n];
      const segs = [];
      for (let i = 0; i + 1 < cuts.length; i++) {
        const lv = r.virtual ? null : r.level(cuts[i], cuts[i + 1]);
        if (lv) segs.push({ start_step: lv.first_step, end_step: lv.last_step, cause: i ? 'level' : 'start', settle_steps: 0, level: lv });
      }
      const decs = [];
      for (let i = 0; i + 1 < segs.length; i++) decs.push(decompose(segs[i].level, segs[i + 1].level));
      return send(res, 200, { warmup: { steps: 0, first_step: null, last_step: null, slowdown: null },
        steady: r.virtual ? null : r.level(0, n), segments: segs, decomposition: decs });
    }
    send(res, 404, { error: 'not found' });
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/`,
        close: () => new Promise((r) => {
          clearInterval(timer);
          for (const c of clients) c.end();
          server.close(() => r());
          server.closeAllConnections?.();
        }),
      });
    });
  });
}

/* Command line: NAME=LOG pairs; the context of a model with 1e9 FLOPs/token on 8 x 1e15. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let port = 8080;
  const runs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--port') port = +args[++i];
    else if (args[i].includes('=')) {
      const [name, p] = args[i].split('=');
      runs.push({ name, path: p, live: true, context: { model: 'demo', convention: 'exact', model_flops_per_token: 2e9,
        hardware_flops_per_token: 2.6e9, device: 'h100-sxm', dtype: 'bf16', devices: 8, peak_flops: 989e12 } });
    }
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  startMock({ distDir: path.join(here, '../../web/dist'), runs, port }).then((s) => console.log(s.url));
}
