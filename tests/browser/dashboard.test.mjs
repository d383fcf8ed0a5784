// dashboard.test.mjs - the dashboard in a real browser: Debian's chromium driven by
// playwright-core (pinned in web/package.json to the version whose browsers.json names
// chromium 156, Debian 12's). Run by tests/e2e/browser.sh with node's built-in runner.
//
// 1. `mfu serve` on a free loopback port follows generated logs; the page must draw every step
//    in each chart, list the findings the API reports, show a run named with HTML as text
//    without running it, draw the steps appended to the log while it is open, and compare two
//    runs. Where this build's server answers 501 for the analysis endpoints (segments,
//    findings, compare), those checks are reported as not run on it.
// 2. The same checks against the mock server (tests/browser/mock-server.mjs), which speaks the
//    same API with plain arithmetic in place of the analysis: the page's own behaviour, every
//    check run whatever the server build has.
// 3. The page on a 10-million-step run (mock API: rows computed on request): it asks for about
//    one point per pixel, draws that many, and is ready within a bound.
// 4. Every control on both servers: the loss chart; smoothing (the EMA against the test's own,
//    the raw points kept faint); the x axis by tokens and by time (their last values against the
//    log's own sums); the log scale; N runs overlaid, each in its colour with a legend, aligned
//    at their start or by step (runs whose step ranges do not overlap); the findings and the
//    waterfall drawn without clipping; no console error and no failed request (a 404) anywhere.
// 5. On mfu serve: every figure the page shows for a run (the cards and their intervals, each
//    chart's points step by step, the boundaries and their sentences, the findings) equals what
//    `mfu report --json` of the same log under the same context says.
// Screenshots (1366x768 and 1920x1080) go to $MFU_TEST_OUT/browser (default build/test-out):
// run-*.png and compare-*.png from mfu serve when it has them all, else from the mock;
// serve-run-1366x768.png always from mfu serve; run-smooth, run-log-tokens, run-findings-1100x700,
// compare-overlay and compare-overlay-by-step for the controls; mock-findings-1366x768.png
// always from the mock (six long findings).
//
// env: MFU_BIN (the CLI), MFU_SOURCE_DIR, MFU_TEST_OUT, MFU_CHROMIUM (default /usr/bin/chromium)
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startMock } from './mock-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const src = process.env.MFU_SOURCE_DIR || path.resolve(here, '../..');
const require = createRequire(path.join(src, 'web/package.json'));
const { chromium } = require('playwright-core');

const bin = process.env.MFU_BIN || path.join(src, 'build/mfu');
const outDir = path.join(process.env.MFU_TEST_OUT || path.join(src, 'build/test-out'), 'browser');
const dist = path.join(src, 'web/dist');
const XSS = '<img src=x onerror=alert(1)>';
const XSS_MODEL = '<script>window.__pwned=1</script>';
const WAIT_MS = 15000; // every wait below is bounded by this
// but a live run's analysis being redone: under the sanitizer build, beside the rest of the
// suite, the server can take longer than WAIT_MS to redo it (seen once in a clean-clone run)
const LIVE_WAIT_MS = 4 * WAIT_MS;

fs.mkdirSync(outDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mfu-browser-'));

/* ---- generated logs (canonical JSON-lines, docs/formats.md) ------------------------------- */

const TOKENS = 524288; // tokens per step, whole job
/* Step time of step s of run "alpha": 0.50 s, 0.40 s from step 201 on (a faster second half),
 * every 50th step 3x slower (a periodic stall); a small deterministic ripple. */
function alphaTime(s) {
  const base = s <= 200 ? 0.5 : 0.4;
  const ripple = 1 + 0.01 * Math.sin(s * 1.7);
  return +(base * ripple * (s % 50 === 0 ? 3 : 1)).toFixed(5);
}
const header = (model) => JSON.stringify({ mfu_run: 1, format: 'mfu', model, seq_len: 2048, world_size: 8, tokens_per_step: TOKENS });
const stepLine = (s, t) => JSON.stringify({ step: s, step_time_s: t, tokens: TOKENS, loss: +(3 + 5 / Math.sqrt(s)).toFixed(4) });
function writeLog(file, model, from, to, timeOf, first = 1) {
  const lines = [];
  if (from === first) lines.push(header(model));
  for (let s = from; s <= to; s++) lines.push(stepLine(s, timeOf(s)));
  fs.appendFileSync(file, lines.join('\n') + '\n');
}

const N_ALPHA = 400, N_BETA = 300, N_EVIL = 60, N_MORE = 25;
/* "late" resumes at step 10001 (a restarted job): its steps never meet alpha's or beta's, the
 * case where an overlay by absolute step squeezes the runs to opposite edges. */
const LATE_FIRST = 10001, N_LATE = 300;
const lateTime = (s) => +(0.45 * (1 + 0.02 * Math.sin(s / 7))).toFixed(5);
/* The logs of one server under test, in a folder of their own (each server sees its own
 * appends): alpha, beta, late, and evil (served under the HTML run name). */
function makeLogs(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const logs = { alpha: path.join(dir, 'alpha.jsonl'), beta: path.join(dir, 'beta.jsonl'), late: path.join(dir, 'late.jsonl'),
    evil: path.join(dir, 'evil.jsonl'), dir };
  writeLog(logs.alpha, 'gpt-test', 1, N_ALPHA, alphaTime);
  writeLog(logs.beta, 'gpt-test', 1, N_BETA, (s) => +(0.55 * (1 + 0.01 * Math.cos(s))).toFixed(5));
  writeLog(logs.late, 'gpt-test', LATE_FIRST, LATE_FIRST + N_LATE - 1, lateTime, LATE_FIRST);
  writeLog(logs.evil, XSS_MODEL, 1, N_EVIL, () => 0.5);
  return logs;
}

/* ---- the server under test ---------------------------------------------------------------- */

const CONTEXT = { model: 'gpt-test', convention: 'exact', model_flops_per_token: 2e9, hardware_flops_per_token: 2.6e9,
  device: 'h100-sxm', dtype: 'bf16', devices: 8, peak_flops: 989e12 };
const hasServe = fs.existsSync(bin) && spawnSync(bin, ['serve', '--help'], { encoding: 'utf8' }).status === 0;

/* Start `mfu serve` following the logs; resolve with its URL once it answers. */
async function startReal() {
  const logs = makeLogs(path.join(tmp, 'serve'));
  const { alpha: ALPHA, beta: BETA, late: LATE, evil: EVIL } = logs;
  const db = path.join(logs.dir, 'runs.db');
  const ing = spawnSync(bin, ['ingest', EVIL, '--run', XSS, '--db', db], { encoding: 'utf8' });
  assert.equal(ing.status, 0, 'mfu ingest: ' + ing.stderr);
  // runs are named after their files: alpha, beta, late
  const args = ['serve', ALPHA, BETA, LATE, '--listen', '127.0.0.1:0', '--db', db,
    '--model', 'gpt2', '--seq', '2048', '--device', 'h100-sxm', '--devices', '8'];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('mfu serve printed no URL in time: ' + out)), WAIT_MS);
    const onData = (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/?/.exec(out);
      if (m) { clearTimeout(t); resolve(m[0].endsWith('/') ? m[0] : m[0] + '/'); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { clearTimeout(t); reject(new Error(`mfu serve exited (${code}): ${out}`)); });
  });
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  return { url, kind: 'mfu serve', logs, close: async () => { child.kill('SIGTERM'); await exited; } };
}

async function startFake() {
  const logs = makeLogs(path.join(tmp, 'mock'));
  const { alpha: ALPHA, beta: BETA, late: LATE, evil: EVIL } = logs;
  /* alpha's findings: the stall, and more with long sentences, so that a panel that cut them
   * (a fixed height, a fixed width) would show in the clipping check */
  const long = (k) => ({ kind: 'roofline', severity: k % 2 ? 'info' : 'warning', steps: [201 + k, 400],
    evidence: [], message: `at micro-batch 1 x 2048 tokens the attention projection and logit products are memory-bound (finding ${k}), yet the shapes allow MFU above 90 %; this sentence is long on purpose so that it wraps over several lines in the side panel`,
    next_step: 'raise the tokens per product (micro-batch x sequence, fewer TP ranks) until the memory-bound products pass the ridge point' });
  const m = await startMock({
    distDir: dist,
    runs: [
      { name: 'alpha', path: ALPHA, live: true, context: CONTEXT, boundaries: [201],
        findings: [{ kind: 'stall', severity: 'warning', steps: [50, 400], evidence: [{ name: 'period_steps', value: 50 }],
          message: 'every 50th step takes 3x as long: 4.8% of the time is lost', next_step: 'look at what runs every 50 steps (checkpoints, evaluation)' },
        ...[1, 2, 3, 4, 5].map(long)] },
      { name: 'beta', path: BETA, live: true, context: CONTEXT },
      { name: 'late', path: LATE, live: true, context: CONTEXT },
      { name: XSS, path: EVIL, context: null, tags: { note: XSS } },
    ],
  });
  return Object.assign(m, { kind: 'mock', logs });
}

/* ---- the browser -------------------------------------------------------------------------- */

const chromiumPath = process.env.MFU_CHROMIUM || '/usr/bin/chromium';
async function launch() {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: WAIT_MS,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

async function openPage(browser, url, viewport) {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(WAIT_MS);
  const dialogs = [];
  const errors = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => errors.push(String(e)));
  /* a console error (a 404 shows as one: "Failed to load resource") or a failed request is a
   * page error too; 501 is how a server without the analysis answers, and the page says so */
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  page.on('response', (r) => { if (r.status() >= 400 && r.status() !== 501) errors.push(`HTTP ${r.status()} ${r.url()}`); });
  page.on('requestfailed', (r) => { if (!/api\/events/.test(r.url())) errors.push('request failed: ' + r.url()); });
  await page.goto(url);
  await page.waitForFunction(() => window.mfuDash && window.mfuDash.ready === true);
  return { page, dialogs, errors };
}

const points = (page, id) => page.$eval('#' + id, (e) => Number(e.dataset.points));
const api = async (base, p) => {
  const r = await fetch(new URL(p, base));
  assert.equal(r.status, 200, p);
  return r.json();
};
/* The analysis endpoints of a server build without the analysis answer 501: null then. */
const analysisApi = async (base, p, kind) => {
  const r = await fetch(new URL(p, base));
  if (r.status === 501) {
    console.log(`# ${kind}: ${p} answers 501 (${(await r.json()).error}); not checked on it`);
    return null;
  }
  assert.equal(r.status, 200, p);
  return r.json();
};

let browser;
before(async () => { browser = await launch(); });
after(async () => {
  try { if (browser) await browser.close(); } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

/* Screenshots: from mfu serve when its analysis endpoints answer, else from the mock. */
const shotsFrom = { kind: null };
const shot = async (page, server, name) => {
  if (shotsFrom.kind === null || shotsFrom.kind === server.kind) {
    await page.screenshot({ path: path.join(outDir, name) });
    shotsFrom.kind = server.kind;
  }
};

const backends = [];
if (hasServe) backends.push(startReal);
else console.log('# this build has no `mfu serve`: the page is checked against the mock only');
backends.push(startFake);

for (const start of backends) {
describe(start === startReal ? 'on mfu serve' : 'on the mock API', () => {
let server;
before(async () => {
  server = await start();
  console.log(`# dashboard served by ${server.kind} at ${server.url}`);
  if (server.kind === 'mfu serve') {
    const r = await fetch(new URL('api/runs/alpha/findings', server.url));
    if (r.status === 501) shotsFrom.kind = 'mock'; // screenshots with findings drawn
  }
});
after(async () => { if (server) await server.close(); });

test('run view: every step drawn, findings listed, live appends', async () => {
  const { page, dialogs, errors } = await openPage(browser, server.url + '#/run/alpha', { width: 1366, height: 768 });
  try {
    assert.equal(await page.textContent('#run-title'), 'alpha');
    // one point per step: 400 steps fit in a chart's width, so none is dropped
    for (const id of ['chart-mfu', 'chart-tps', 'chart-step', 'chart-flops', 'chart-loss'])
      assert.equal(await points(page, id), N_ALPHA, id);
    // the MFU chart draws numbers, not an empty frame: its last point matches the API's
    const s = await api(server.url, 'api/runs/alpha/series?fields=mfu&max_points=2000');
    assert.equal(s.total, N_ALPHA);
    const lastMfu = await page.evaluate(() => {
      const u = window.mfuDash; return u && u.points.mfu;
    });
    assert.equal(lastMfu, N_ALPHA);
    // the findings list shows what the API reports, as text
    const f = await analysisApi(server.url, 'api/runs/alpha/findings', server.kind);
    if (f) {
      assert.ok(f.findings.length >= 1, 'the generated stall gives at least one finding');
      const items = await page.$$eval('#findings li .msg', (ns) => ns.map((n) => n.textContent));
      assert.deepEqual(items.slice().sort(), f.findings.map((x) => x.message ?? x.summary).sort());
      assert.ok(await page.isVisible('#findings li .badge'));
    } else {
      assert.match(await page.textContent('#findings-empty'), /^No findings: .*analysis/, 'the panel says why');
    }
    // segments: the faster second half is a boundary, and its waterfall is drawn
    const seg = await analysisApi(server.url, 'api/runs/alpha/segments', server.kind);
    if (seg) {
      assert.ok(seg.decomposition.length >= 1, 'the step-time drop at 201 is a boundary');
      assert.equal(await page.$$eval('#boundaries li', (n) => n.length), seg.decomposition.length);
      assert.ok((await page.$$('#waterfall svg rect')).length >= 2, 'waterfall bars');
    }
    await shot(page, server, 'run-1366x768.png');
    if (server.kind === 'mfu serve') await page.screenshot({ path: path.join(outDir, 'serve-run-1366x768.png') });

    // append steps to the followed log: the page draws them without a reload
    const before = await page.evaluate(() => window.mfuDash.updates);
    writeLog(server.logs.alpha, 'gpt-test', N_ALPHA + 1, N_ALPHA + N_MORE, alphaTime);
    await page.waitForFunction((n) => Number(document.getElementById('chart-mfu').dataset.points) === n, N_ALPHA + N_MORE);
    assert.ok((await page.evaluate(() => window.mfuDash.updates)) > before);
    for (const id of ['chart-tps', 'chart-step', 'chart-flops', 'chart-loss'])
      assert.equal(await points(page, id), N_ALPHA + N_MORE, id);
    await page.waitForFunction((n) => document.querySelector('#run-list li[data-run="alpha"] .steps').textContent === n + ' steps', N_ALPHA + N_MORE);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

/* The report of a log under the server's context, as `mfu report --json` gives it. */
function reportOf(log) {
  const r = spawnSync(bin, ['report', log, '--model', 'gpt2', '--seq', '2048', '--device', 'h100-sxm',
    '--devices', '8', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, 'mfu report: ' + r.stderr);
  return JSON.parse(r.stdout);
}
/* a and b are the same figure: both absent, or equal to 1e-9 (the API's JSON keeps 17 digits) */
function same(a, b, what) {
  const absent = (v) => v === null || v === undefined || Number.isNaN(v);
  if (absent(a) || absent(b)) { assert.ok(absent(a) && absent(b), `${what}: page ${a}, report ${b}`); return; }
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)), `${what}: page ${a}, report ${b}`);
}

test('every figure the page shows for a run equals the report\'s', async (t) => {
  if (server.kind !== 'mfu serve') { t.skip('the mock does arithmetic of its own, not the report'); return; }
  for (const run of ['beta', 'alpha']) {
    const rep = reportOf(server.logs[run]);
    const { page, errors } = await openPage(browser, server.url + '#/run/' + run, { width: 1366, height: 768 });
    try {
      const slow = { timeout: LIVE_WAIT_MS };
      await page.waitForFunction((n) => Number(document.getElementById('chart-mfu').dataset.points) === n,
        rep.steps, slow);
      // the cards show the analysis's steady level once it covers the log's last steady step
      // (a live run's analysis is refreshed a few seconds after its last append)
      await page.waitForFunction((last) => document.getElementById('cards').dataset.lastStep === String(last),
        rep.analysis.steady.last_step, slow);
      // the cards: the headline (steady medians) and its interval, step time, HFU, FLOP/s, steps
      const cards = await page.$$eval('#cards .card', (ns) => Object.fromEntries(ns.map((n) => {
        const v = n.querySelector('.value'), s = n.querySelector('.sub');
        return [n.dataset.card, { value: v.dataset.value === undefined ? null : Number(v.dataset.value), text: v.textContent,
          lo: s && s.dataset.lo !== undefined ? Number(s.dataset.lo) : null, hi: s && s.dataset.hi !== undefined ? Number(s.dataset.hi) : null }];
      })));
      const S = rep.summary, L = rep.analysis.steady;
      same(cards['MFU (median)'].value, S.mfu.median, `${run}: MFU card`);
      same(cards['MFU (median)'].value, L.mfu.value, `${run}: MFU card against the steady level`);
      same(cards['MFU (median)'].lo, L.mfu.lo, `${run}: MFU interval, low`);
      same(cards['MFU (median)'].hi, L.mfu.hi, `${run}: MFU interval, high`);
      same(cards['tokens/s'].value, S.tokens_per_second.median, `${run}: tokens/s card`);
      same(cards['tokens/s'].lo, L.tokens_per_second.lo, `${run}: tokens/s interval, low`);
      same(cards['tokens/s'].hi, L.tokens_per_second.hi, `${run}: tokens/s interval, high`);
      same(cards['step time'].value, S.step_time_s.median, `${run}: step time card`);
      same(cards.HFU.value, S.hfu.median, `${run}: HFU card`);
      same(cards['model FLOP/s/device'].value, S.model_flops_per_second_per_device.median, `${run}: FLOP/s card`);
      // SI-scaled, three significant digits of the same figure ("18.9 TFLOP/s")
      const ft = cards['model FLOP/s/device'].text, fm = /^(\d+(?:\.\d+)?) ([kMGTPE])FLOP\/s$/.exec(ft);
      assert.ok(fm, `${run}: FLOP/s card text ${ft}`);
      const scale = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }[fm[2]];
      const fv = S.model_flops_per_second_per_device.median;
      assert.ok(Math.abs(Number(fm[1]) * scale - fv) <= 0.005 * fv, `${run}: FLOP/s card ${ft} vs ${fv}`);
      assert.equal(fm[1].replace('.', '').replace(/^0+/, '').length, 3, `${run}: 3 digits in ${ft}`);
      // the FLOP/s axis: distinct labels under one prefix, none "0.0"
      const yt = (await page.evaluate(() => window.mfuDash.chart('chart-flops').yticks)).filter((x) => x);
      assert.ok(yt.length >= 2 && new Set(yt).size === yt.length, `${run}: FLOP/s axis ${yt}`);
      assert.ok(yt.every((x) => x === '0' || /^\d+(\.\d+)? [kMGTPE]$/.test(x)), `${run}: FLOP/s axis ${yt}`);
      assert.equal(cards.steps.value, rep.steps, `${run}: steps card`);
      // every chart, step by step: what it draws is the report's series
      const col = (f) => rep.series.map((r) => r[f]);
      const charts = [['chart-mfu', 1, 'hfu'], ['chart-mfu', 3, 'mfu'], ['chart-tps', 1, 'tokens_per_second'],
        ['chart-step', 1, 'step_time_s'], ['chart-flops', 1, 'model_flops_per_second_per_device'],
        ['chart-flops', 3, 'hardware_flops_per_second_per_device'], ['chart-loss', 1, 'loss']];
      for (const [id, k, field] of charts) {
        const d = await page.evaluate(([i, j]) => { const c = window.mfuDash.chart(i); return [c.data[0], c.data[j]]; }, [id, k]);
        assert.deepEqual(d[0], col('step'), `${run}: ${id} steps`);
        const want = col(field);
        for (let i = 0; i < want.length; i++) same(d[1][i], want[i], `${run}: ${id} ${field} at step ${d[0][i]}`);
      }
      // the boundaries and their sentences, the findings
      const at = await page.$$eval('#boundaries li .at', (ns) => ns.map((n) => n.textContent));
      const said = await page.$$eval('#boundaries li .what', (ns) => ns.map((n) => n.textContent));
      assert.deepEqual(at, rep.decomposition.map((d) => 'step ' + d.at_step.toLocaleString('en-US')), `${run}: boundaries`);
      assert.deepEqual(said, rep.decomposition.map((d) => d.sentence), `${run}: boundary sentences`);
      const msgs = await page.$$eval('#findings li .msg', (ns) => ns.map((n) => n.textContent));
      assert.deepEqual(msgs.slice().sort(), rep.findings.map((f) => f.summary).sort(), `${run}: findings`);
      if (run === 'alpha') assert.ok(rep.decomposition.length >= 1 && rep.findings.length >= 1, 'alpha has a boundary and a stall');
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  }
});

test('FLOP/s in SI units: the formatter and the axis ticks, as the C reports print them', async () => {
  const { page, errors } = await openPage(browser, server.url + '#/run/alpha', { width: 1366, height: 768 });
  try {
    // the cases of tests/unit/test_util.c's si_format, through the page's own formatter
    const cases = [[312e12, '312 TFLOP/s'], [1.234e15, '1.23 PFLOP/s'], [45.6e9, '45.6 GFLOP/s'],
      [820e6, '820 MFLOP/s'], [3.2e9, '3.20 GFLOP/s'], [999.4e12, '999 TFLOP/s'],
      [999.96e12, '1.00 PFLOP/s'], [9.996e9, '10.0 GFLOP/s'], [99.96e9, '100 GFLOP/s'],
      [999, '999 FLOP/s'], [0, '0 FLOP/s'], [-2.5e12, '-2.50 TFLOP/s'], [NaN, '-'],
      [Infinity, 'inf FLOP/s'], [-Infinity, '-inf FLOP/s']];
    const got = await page.evaluate((vs) => vs.map((v) => window.mfuDash.fmt.flops(v)), cases.map((c) => c[0]));
    assert.deepEqual(got, cases.map((c) => c[1]));
    // a CPU's few GFLOP/s on an axis: one prefix, the step's decimals, never "0 0 0 0"
    const ticks = await page.evaluate(() => [[0, 1e9, 2e9, 3e9], [3.1e9, 3.15e9, 3.2e9], [0, 2e14, 4e14]]
      .map((t) => window.mfuDash.fmt.ticks(t)));
    assert.deepEqual(ticks, [['0', '1 G', '2 G', '3 G'], ['3.10 G', '3.15 G', '3.20 G'], ['0', '200 T', '400 T']]);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a run named with HTML shows as text and runs nothing', async () => {
  const { page, dialogs, errors } = await openPage(browser, server.url + '#/run/' + encodeURIComponent(XSS), { width: 1366, height: 768 });
  try {
    assert.equal(await page.textContent('#run-title'), XSS);
    const names = await page.$$eval('#run-list .name', (ns) => ns.map((n) => n.firstChild.textContent.trim()));
    assert.ok(names.includes(XSS), 'the run list shows the name as typed');
    assert.equal(await page.$$eval('main img, aside img', (n) => n.length), 0, 'no <img> element was made');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    // the log's model field (HTML too) is shown as text
    assert.ok((await page.textContent('#run-context')).includes(XSS_MODEL));
    assert.equal(await points(page, 'chart-tps'), N_EVIL);
    await page.waitForTimeout(300); // an onerror would fire by now
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('compare view and a wide screen', async () => {
  const { page, errors } = await openPage(browser, server.url + '#/compare?a=beta&b=alpha&rb=201-400', { width: 1920, height: 1080 });
  try {
    // ready is set once the compare request answered, well or not
    const err = await page.$eval('#cmp-error', (e) => (e.hidden ? '' : e.textContent));
    if (await analysisApi(server.url, 'api/compare?a=beta&b=alpha:201-400', server.kind) === null) {
      assert.match(err, /^compare: /, 'the server\'s refusal is shown');
      return;
    }
    assert.equal(err, '', 'the compare view shows an error');
    const rows = await page.$$eval('#cmp-table tbody tr td:first-child', (ns) => ns.map((n) => n.textContent));
    assert.ok(rows.includes('tokens/s') && rows.includes('MFU'));
    // beta runs at 0.55 s/step, alpha's second half at 0.40: B is faster by about 37 %
    const change = await page.$eval('#cmp-table tbody tr:nth-child(2) td:last-child', (n) => n.textContent);
    const v = parseFloat(change);
    assert.ok(v > 30 && v < 45, 'tokens/s change ' + change);
    assert.ok((await page.$$('#cmp-waterfall svg rect')).length >= 2);
    // the overlay shows A and B
    const ov = JSON.parse(await page.$eval('#chart-overlay', (e) => e.dataset.series));
    assert.deepEqual(ov.map((r) => r.run), ['beta', 'alpha']);
    await shot(page, server, 'compare-1920x1080.png');
    await page.goto(server.url + '#/run/alpha');
    await page.waitForFunction(() => window.mfuDash.ready && window.mfuDash.view === 'run');
    await shot(page, server, 'run-1920x1080.png');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

/* alpha's x values as its log has them: the sum of its step times, and TOKENS per step. */
function alphaSums(n) {
  let t = 0;
  for (let st = 1; st <= n; st++) t += alphaTime(st);
  return { time: t, tokens: n * TOKENS };
}
const near = (got, want, rel, what) => assert.ok(Math.abs(got - want) <= rel * Math.abs(want), `${what}: ${got}, want ${want}`);
const setSmooth = (page, v) => page.$eval('#smooth', (e, x) => { e.value = x; e.dispatchEvent(new Event('input', { bubbles: true })); }, String(v));
const RUN_CHARTS = ['chart-mfu', 'chart-tps', 'chart-step', 'chart-flops', 'chart-loss'];

test('chart controls: loss, smoothing, x axis by tokens and time, log scale', async () => {
  const { page, errors } = await openPage(browser, server.url + '#/run/alpha', { width: 1366, height: 768 });
  try {
    assert.ok(await page.isVisible('#chart-controls'));
    const s = await api(server.url, 'api/runs/alpha/series?fields=loss,tokens_per_second&max_points=2000&axes=1');
    const n = s.total; // the first test appended to alpha
    // the loss chart: every point, the log's values (step 1: 3 + 5 / sqrt(1))
    assert.equal(await points(page, 'chart-loss'), n);
    let c = await page.evaluate(() => window.mfuDash.chart('chart-loss'));
    assert.equal(c.data[0].length, n);
    near(c.data[2][0], 8, 1e-12, 'loss at step 1');
    near(c.data[2][n - 1], s.columns.loss[n - 1], 1e-12, 'last loss');
    assert.equal(c.series[1].show, false, 'no raw line under the line while smoothing is off');
    assert.equal(await page.textContent('#smooth-value'), 'off');

    // smoothing 0.9: the smoothed line is the debiased EMA of the raw points, drawn over them
    await setSmooth(page, 0.9);
    for (const id of RUN_CHARTS)
      await page.waitForFunction((x) => document.getElementById(x).dataset.smooth === '0.9', id);
    assert.equal(await page.textContent('#smooth-value'), '0.90');
    c = await page.evaluate(() => window.mfuDash.chart('chart-tps'));
    assert.equal(c.series[1].show, true, 'the raw points stay drawn');
    assert.match(c.series[1].stroke, /^rgba\(\d+,\d+,\d+,0\.28\)$/, 'faint');
    assert.equal(c.series[2].stroke, '#0f9d76');
    const raw = c.data[1], sm = c.data[2];
    let acc = 0, k = 0;
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] === null) { assert.equal(sm[i], null); continue; }
      acc = acc * 0.9 + 0.1 * raw[i];
      k++;
      near(sm[i], acc / (1 - 0.9 ** k), 1e-12, 'EMA at point ' + i);
    }
    const at100 = s.step.indexOf(100);
    assert.ok(sm[at100] > 2 * raw[at100], 'the stall at step 100 is smoothed away');
    await shot(page, server, 'run-smooth-1366x768.png');

    // x axis by tokens: each chart's last x is the tokens of the whole run (TOKENS a step)
    await page.selectOption('#x-axis', 'tokens');
    for (const id of RUN_CHARTS)
      await page.waitForFunction((x) => document.getElementById(x).dataset.x === 'tokens', id);
    const sums = alphaSums(n);
    for (const id of RUN_CHARTS) {
      near(Number(await page.$eval('#' + id, (e) => e.dataset.xMax)), sums.tokens, 1e-9, id + ' tokens');
      assert.equal(await points(page, id), n, id);
    }
    near(Number(await page.$eval('#chart-tps', (e) => e.dataset.xMin)), TOKENS, 1e-9, 'tokens after step 1');
    // and a log scale on it
    await page.check('#log-y');
    for (const id of RUN_CHARTS)
      await page.waitForFunction((x) => document.getElementById(x).dataset.log === '1' && document.getElementById(x).dataset.points > 0, id);
    c = await page.evaluate(() => window.mfuDash.chart('chart-loss'));
    assert.equal(c.distr, 3, 'log distribution');
    assert.equal(await points(page, 'chart-loss'), n);
    await shot(page, server, 'run-log-tokens-1366x768.png');
    await page.uncheck('#log-y');
    await page.waitForFunction(() => document.getElementById('chart-loss').dataset.log === '0');
    assert.notEqual((await page.evaluate(() => window.mfuDash.chart('chart-loss'))).distr, 3);

    // x axis by time: the last x is the sum of the log's step times
    await page.selectOption('#x-axis', 'time');
    for (const id of RUN_CHARTS)
      await page.waitForFunction((x) => document.getElementById(x).dataset.x === 'time', id);
    near(Number(await page.$eval('#chart-step', (e) => e.dataset.xMax)), sums.time, 1e-9, 'elapsed');
    near(Number(await page.$eval('#chart-step', (e) => e.dataset.xMin)), alphaTime(1), 1e-9, 'elapsed after step 1');
    // the controls hold across runs: beta opens by time, smoothed
    await page.goto(server.url + '#/run/beta');
    await page.waitForFunction(() => window.mfuDash.ready && document.getElementById('run-title').textContent === 'beta');
    await page.waitForFunction(() => document.getElementById('chart-tps').dataset.x === 'time');
    assert.equal(await page.$eval('#chart-tps', (e) => e.dataset.smooth), '0.9');
    // back to the defaults
    await page.selectOption('#x-axis', 'step');
    await setSmooth(page, 0);
    await page.waitForFunction(() => document.getElementById('chart-tps').dataset.x === 'step' && document.getElementById('chart-tps').dataset.smooth === '0');
    c = await page.evaluate(() => window.mfuDash.chart('chart-tps'));
    assert.equal(c.series[1].show, false);
    assert.deepEqual(c.data[1], c.data[2], 'smoothing off: the line is the raw points');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('findings and the waterfall are drawn whole, on a laptop and a narrow window', async () => {
  for (const vp of [{ width: 1366, height: 768 }, { width: 1100, height: 700 }]) {
    const { page, errors } = await openPage(browser, server.url + '#/run/alpha', vp);
    try {
      const r = await page.evaluate(() => {
        const ol = document.getElementById('findings');
        const lis = [...ol.querySelectorAll('li')];
        const side = document.querySelector('.side').getBoundingClientRect();
        const cut = lis.filter((li) => [li, ...li.querySelectorAll('p, .head')].some((e) => e.scrollWidth > e.clientWidth + 1));
        const over = [];
        for (const sv of document.querySelectorAll('#waterfall svg')) {
          const w = sv.viewBox.baseVal.width;
          for (const t of sv.querySelectorAll('text')) {
            const b = t.getBBox();
            if (b.x < -0.5 || b.x + b.width > w + 0.5) over.push(t.textContent);
          }
        }
        return { n: lis.length, hidden: ol.scrollHeight - ol.clientHeight, right: side.right, vw: document.documentElement.clientWidth,
          cut: cut.length, over, rects: document.querySelectorAll('#waterfall svg rect').length };
      });
      assert.ok(r.n >= 1, 'findings listed');
      assert.ok(r.hidden <= 1, `${r.hidden} px of the findings hidden inside the panel at ${vp.width}x${vp.height}`);
      assert.ok(r.right <= r.vw + 0.5, `the side panel ends at ${r.right} px of ${r.vw}`);
      assert.equal(r.cut, 0, 'a finding cut at its right edge');
      assert.deepEqual(r.over, [], 'waterfall labels outside the drawing');
      /* the mock's alpha has six findings with long sentences: the case a fixed panel cut */
      if (server.kind === 'mock' && vp.width === 1366) await page.screenshot({ path: path.join(outDir, 'mock-findings-1366x768.png') });
      if (vp.width === 1100) {
        await page.$eval('#findings', (e) => e.closest('.panel').scrollIntoView());
        await shot(page, server, 'run-findings-1100x700.png');
      }
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  }
});

test('compare: N runs overlaid in their colours, aligned at their start or by step', async () => {
  const { page, errors } = await openPage(browser, server.url + '#/compare?runs=alpha,beta,late', { width: 1920, height: 1080 });
  try {
    const info = () => page.$eval('#chart-overlay', (e) => JSON.parse(e.dataset.series));
    assert.ok(await page.isVisible('#chart-controls'));
    let ov = await info();
    assert.deepEqual(ov.map((r) => r.run), ['alpha', 'beta', 'late']);
    assert.equal(new Set(ov.map((r) => r.color)).size, 3, 'a colour each');
    const nA = (await api(server.url, 'api/runs/alpha')).steps;
    // at their start: every run from 0, the x axis as long as the longest (not 1..10300)
    for (const r of ov) assert.equal(r.x_min, 0, r.run);
    assert.equal(Number(await page.$eval('#chart-overlay', (e) => e.dataset.xMax)), nA - 1);
    assert.deepEqual(ov.map((r) => r.points), [nA, N_BETA, N_LATE]);
    // the legend names each run in its colour, and so does the list of runs
    const rgb = (hex) => { const v = parseInt(hex.slice(1), 16); return `rgb(${v >> 16}, ${(v >> 8) & 255}, ${v & 255})`; };
    const legend = await page.$$eval('#chart-overlay .u-legend .u-series', (ns) => ns.map((n) => ({
      label: (n.querySelector('.u-label') || n).textContent, off: n.classList.contains('u-off'),
      color: n.querySelector('.u-marker') ? getComputedStyle(n.querySelector('.u-marker')).borderColor : '' })));
    for (const r of ov) {
      const l = legend.find((x) => x.label === r.run);
      assert.ok(l && !l.off, 'legend entry for ' + r.run);
      assert.equal(l.color, rgb(r.color), 'legend colour of ' + r.run);
      const sw = await page.$eval(`#ov-runs input[data-run="${r.run}"]`, (b) => ({ on: b.checked, color: getComputedStyle(b.parentNode.querySelector('.swatch')).backgroundColor }));
      assert.ok(sw.on);
      assert.equal(sw.color, rgb(r.color));
    }
    assert.equal(await page.$eval('#ov-runs input[data-run="' + XSS.replace(/"/g, '\\"') + '"]', (b) => b.checked), false);
    await shot(page, server, 'compare-overlay-1920x1080.png');

    // by step: late stays at its own steps, 10001-10300, the others from 1
    await page.selectOption('#ov-align', 'step');
    await page.waitForFunction(() => document.getElementById('chart-overlay').dataset.align === 'step');
    ov = await info();
    assert.deepEqual(ov.map((r) => r.x_min), [1, 1, LATE_FIRST]);
    assert.equal(Number(await page.$eval('#chart-overlay', (e) => e.dataset.xMax)), LATE_FIRST + N_LATE - 1);
    await shot(page, server, 'compare-overlay-by-step-1920x1080.png');

    // untick beta; loss by tokens, smoothed
    await page.uncheck('#ov-runs input[data-run="beta"]');
    await page.waitForFunction(() => JSON.parse(document.getElementById('chart-overlay').dataset.series).length === 2);
    await page.selectOption('#ov-metric', 'loss');
    await page.waitForFunction(() => /^loss of 2 runs/.test(document.querySelector('#chart-overlay .u-title').textContent));
    await page.selectOption('#x-axis', 'tokens');
    await page.waitForFunction(() => document.getElementById('chart-overlay').dataset.x === 'tokens');
    assert.equal(await page.isDisabled('#ov-align'), true, 'align applies to the step axis only');
    ov = await info();
    near(ov[0].x_max, nA * TOKENS, 1e-9, 'alpha tokens');
    near(ov[1].x_max, N_LATE * TOKENS, 1e-9, 'late tokens');
    await setSmooth(page, 0.5);
    await page.waitForFunction(() => document.getElementById('chart-overlay').dataset.smooth === '0.5');
    const c = await page.evaluate(() => window.mfuDash.chart('chart-overlay'));
    assert.equal(c.series.length, 1 + 2 * 2, 'x, then raw and smoothed per run');
    assert.equal(c.series[1].show, true);
    await page.selectOption('#x-axis', 'step');
    await setSmooth(page, 0);
    await page.waitForFunction(() => document.getElementById('chart-overlay').dataset.x === 'step');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

});
}

test('a 10-million-step run: about one point per pixel, ready in time', async () => {
  const big = await startMock({ distDir: dist, runs: [{ name: 'big', virtual: { steps: 10_000_000 }, context: CONTEXT }] });
  const t0 = Date.now();
  const { page, errors } = await openPage(browser, big.url + '#/run/big', { width: 1366, height: 768 });
  try {
    const ms = Date.now() - t0;
    const total = await page.$eval('#chart-mfu', (e) => Number(e.dataset.total));
    const n = await points(page, 'chart-mfu');
    const width = await page.$eval('#chart-mfu', (e) => e.getBoundingClientRect().width);
    assert.equal(total, 10_000_000);
    assert.ok(n >= 200 && n <= width, `points ${n} for a chart ${width}px wide`);
    assert.ok(ms < 10000, `ready in ${ms} ms`);
    // a zoom asks for the range at the same resolution
    const t1 = Date.now();
    const box = await page.$eval('#chart-mfu .u-over', (e) => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; });
    await page.mouse.move(box[0] + box[2] * 0.4, box[1] + box[3] / 2);
    await page.mouse.down();
    await page.mouse.move(box[0] + box[2] * 0.45, box[1] + box[3] / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction((t) => Number(document.getElementById('chart-mfu').dataset.total) < t, 10_000_000);
    const zt = await page.$eval('#chart-mfu', (e) => Number(e.dataset.total));
    assert.ok(zt > 100000 && zt < 1_000_000, 'zoomed range rows ' + zt);
    assert.ok(Date.now() - t1 < 5000);
    console.log(`# 10M steps: ready in ${ms} ms with ${n} points; zoom to ${zt} rows in ${Date.now() - t1} ms`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await big.close();
  }
});
