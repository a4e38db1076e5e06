#!/usr/bin/env node
// interleave.mjs: the /bin/true columns again, run round-robin (bare, gander, bwrap, ... then
// again), as a cross-check of hyperfine's table on a machine whose load changes.
//
//   node bench/interleave.mjs ROUNDS WARMUP COLUMNS_FILE
//
// hyperfine runs all runs of one column, then all of the next: when a compile starts half-way,
// the columns measured later look slower. Here each round runs every column once, so load
// that comes and goes hits all of them alike. COLUMNS_FILE holds NUL-terminated fields: for
// each column its label, its argument count, then the arguments. Prints a markdown table
// (milliseconds; each time includes node's spawnSync overhead, which the bare column has too),
// the overhead of each column paired per round, and the same overhead ratios as startup.sh.
// Dependency-free.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [rounds, warmup] = process.argv.slice(2, 4).map(Number);
const fields = readFileSync(process.argv[4], 'utf8').split('\0');
const columns = [];
for (let i = 0; i + 1 < fields.length;) {
  const label = fields[i++];
  const argc = Number(fields[i++]);
  columns.push({ label, argv: fields.slice(i, i + argc), times: [] });
  i += argc;
}

for (let r = 0; r < warmup + rounds; r++) {
  for (const c of columns) {
    const t0 = process.hrtime.bigint();
    const res = spawnSync(c.argv[0], c.argv.slice(1), { stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.error || res.status !== 0) {
      console.error(`interleave: ${c.label} failed: ${res.error?.message ?? `exit ${res.status}`}`);
      process.exit(1);
    }
    if (r >= warmup) c.times.push(ms);
  }
}

const stat = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return {
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    median: s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2,
    p10: q(0.1), p90: q(0.9), min: s[0],
  };
};
for (const c of columns) c.stat = stat(c.times);

const f = (x) => x.toFixed(2);
console.log('| Command | Mean [ms] | Median [ms] | p10 [ms] | p90 [ms] | Min [ms] |');
console.log('|:---|---:|---:|---:|---:|---:|');
for (const c of columns) {
  const s = c.stat;
  console.log(`| \`${c.label}\` | ${f(s.mean)} | ${f(s.median)} | ${f(s.p10)} | ${f(s.p90)} | ${f(s.min)} |`);
}

const find = (prefix) => columns.find((c) => c.label.startsWith(prefix));
const bare = find('bare'), gander = find('gander'), bwrap = find('bwrap'), runsc = find('runsc');
// Paired per round: d_i = column_i - bare_i; its mean +- 2 standard errors is the overhead.
const paired = (c) => {
  const d = c.times.map((t, i) => t - bare.times[i]);
  const m = d.reduce((a, b) => a + b, 0) / d.length;
  const sd = Math.sqrt(d.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, d.length - 1));
  return { m, e: (2 * sd) / Math.sqrt(d.length) };
};
const short = (c) => c.label.split(' ')[0];
console.log('');
console.log(`- paired overhead over bare (mean of column - bare per round, +- 2 standard errors): ${
  columns.filter((c) => c !== bare).map((c) => { const p = paired(c); return `${short(c)} ${f(p.m)} ms (+- ${f(p.e)})`; }).join('; ')}`);
for (const k of ['mean', 'median', 'min']) {
  const over = (c) => c.stat[k] - bare.stat[k];
  // A ratio needs a denominator clearly above zero (paired mean beyond its 2 standard errors).
  const ratio = (a, b, name) => {
    const p = paired(b);
    if (!(p.m > p.e) || !(over(b) > 0)) return `${name}: n/a (${short(b)}'s overhead not clearly above zero)`;
    return `${name} **${f(over(a) / over(b))}**`;
  };
  const parts = [];
  if (gander && bwrap) parts.push(ratio(gander, bwrap, 'gander/bwrap overhead ratio'));
  if (gander && runsc) parts.push(ratio(runsc, gander, 'runsc/gander overhead ratio'));
  console.log(`- from the ${k}s: ${parts.length ? parts.join('; ') : 'no ratio (gander, bwrap or runsc missing)'}`);
}
