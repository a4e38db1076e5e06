#!/usr/bin/env node
// mcp_roundtrip.mjs: one MCP stdio session, start -> tools/list answer -> exit, for benchmarks.
//
//   node bench/mcp_roundtrip.mjs [--verbose] [--timeout-ms N] [--exit-grace-ms N] [--calls N] -- CMD ARGS...
//
// --calls N: after the first tools/list, N more tools/list requests one at a time, each timed
// from write to answer, and one line `mcp_roundtrip calls=N p50_us=.. p90_us=.. p99_us=..` on
// stderr: the round trip through a running server (and its sandbox), without start-up.
//
// Spawns CMD, speaks newline-delimited JSON-RPC on its stdin/stdout:
//   -> initialize (no client capabilities: advertising `roots` would make some servers wait
//      for a roots/list answer), <- its result,
//   -> notifications/initialized, -> tools/list, <- its result (must hold a `tools` array),
// then closes the server's stdin and waits for the server (and the sandbox around it) to exit.
//
// Why close stdin and wait, rather than kill at once: that is how Goose stops an extension
// (close stdin, wait, then SIGKILL), and the time a sandbox takes to tear down (pid-namespace
// init, gVisor's sandbox and gofer processes, firejail's parent) is part of what the
// benchmark compares. server-filesystem exits on stdin EOF by itself (its event loop empties).
// Why a bound: a server that ignores EOF would otherwise hang the benchmark. After
// --exit-grace-ms (default 2000, under Goose's 3 s) the client sends SIGTERM, 1 s later
// SIGKILL, and exits with status 3 so hyperfine stops and says so: a run that needed the kill
// path measures the grace period, not start-up, and must not be averaged in silently.
//
// Exit status: 0 ok; 2 protocol error, timeout or server died early; 3 server had to be killed.
// Dependency-free: node's child_process and readline only.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
let timeoutMs = 120000;
let exitGraceMs = 2000;
let verbose = false;
let calls = 0;
while (argv.length && argv[0] !== '--') {
  const a = argv.shift();
  if (a === '--verbose') verbose = true;
  else if (a === '--timeout-ms') timeoutMs = Number(argv.shift());
  else if (a === '--exit-grace-ms') exitGraceMs = Number(argv.shift());
  else if (a === '--calls') calls = Number(argv.shift());
  else fail(`unknown option ${a}`, 64);
}
argv.shift();
if (!argv.length) fail('usage: mcp_roundtrip.mjs [--verbose] [--timeout-ms N] [--exit-grace-ms N] [--calls N] -- CMD ARGS...', 64);

const t0 = process.hrtime.bigint();
const ms = () => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1);
const log = (m) => { if (verbose) process.stderr.write(`mcp_roundtrip [${ms()} ms] ${m}\n`); };

function fail(message, code = 2) {
  process.stderr.write(`mcp_roundtrip: ${message}\n`);
  process.exit(code);
}

const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
let phase = 'starting';
let killed = false;

const overall = setTimeout(() => {
  killed = true;
  child.kill('SIGKILL');
  fail(`timed out after ${timeoutMs} ms while ${phase}`);
}, timeoutMs);

child.on('error', (e) => fail(`cannot start ${argv[0]}: ${e.message}`));
child.stdin.on('error', () => {}); // EPIPE if the server dies; reported by the exit handler
child.on('exit', (code, signal) => {
  clearTimeout(overall);
  log(`server exited code=${code} signal=${signal}`);
  if (phase !== 'draining') fail(`server exited while ${phase} (code ${code}, signal ${signal})`);
  if (killed) fail(`server did not exit within ${exitGraceMs} ms of stdin EOF; killed`, 3);
  process.exit(0);
});

const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');

createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    fail(`unparsable line on the server's stdout: ${line.slice(0, 200)}`);
  }
  if (msg.method !== undefined) {
    // A request or notification from the server (logging, ping...). Answer requests politely.
    if (msg.id !== undefined) {
      send(msg.method === 'ping' ? { id: msg.id, result: {} }
                                 : { id: msg.id, error: { code: -32601, message: 'not supported' } });
    }
    return;
  }
  if (msg.error) fail(`server answered id ${msg.id} with error ${JSON.stringify(msg.error)}`);
  if (msg.id === 1 && phase === 'initializing') {
    log(`initialize answered by ${msg.result?.serverInfo?.name} ${msg.result?.serverInfo?.version}`);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list', params: {} });
    phase = 'listing tools';
  } else if (msg.id === 2 && phase === 'listing tools') {
    const tools = msg.result?.tools;
    if (!Array.isArray(tools)) fail(`tools/list result has no tools array: ${line.slice(0, 200)}`);
    log(`tools/list answered: ${tools.length} tools`);
    if (calls > 0) {
      phase = 'timing calls';
      nextCall();
      return;
    }
    drain();
  } else if (phase === 'timing calls' && msg.id === 2 + timings.length + 1) {
    timings.push(Number(process.hrtime.bigint() - callStart) / 1e3);
    if (timings.length < calls) {
      nextCall();
      return;
    }
    timings.sort((a, b) => a - b);
    const at = (q) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))].toFixed(1);
    process.stderr.write(`mcp_roundtrip calls=${calls} p50_us=${at(0.5)} p90_us=${at(0.9)} p99_us=${at(0.99)}\n`);
    drain();
  }
});

const timings = [];
let callStart = 0n;
function nextCall() {
  callStart = process.hrtime.bigint();
  send({ id: 2 + timings.length + 1, method: 'tools/list', params: {} });
}

function drain() {
  log('closing stdin');
  phase = 'draining';
  child.stdin.end();
  setTimeout(() => {
    killed = true;
    log('grace period over: SIGTERM');
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 1000).unref();
  }, exitGraceMs).unref();
}

phase = 'initializing';
send({
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'gander-bench', version: '0.1.0' },
  },
});
