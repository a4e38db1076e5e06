// `gander audit` end to end (label e2e): a malicious fixture server (reads the bait SSH key,
// phones home to a listener on this machine, carries a poisoned tool description) must show
// all three and fail; the real server-memory and server-sequential-thinking must come out clean.
//
// The listener is on this machine's first non-loopback IPv4 address; a second one on host
// loopback (127.0.0.2) checks that a connect to an unlisted host-loopback service is reported
// too (nothing listens on it inside the sandbox, so it is refused and logged, see
// docs/audit-log.md, `network`).
//   GANDER_BIN=/path/to/gander node --test audit.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const e2e = path.join(here, "..", "..", "e2e");
const GANDER = process.env.GANDER_BIN;

// The fixture runs as an installed package would: inside the corpus's node_modules, so it
// finds the SDK and gander grants the enclosing node_modules, as for any npm server.
const fixtureDir = path.join(e2e, "node_modules", "gander-audit-fixture");
const fixture = path.join(fixtureDir, "phone-home.mjs");

function audit(args) {
  return new Promise((resolve) => {
    execFile(GANDER, ["audit", ...args], { maxBuffer: 64 << 20, timeout: 240_000 },
      (error, stdout, stderr) => {
        resolve({ status: error ? (error.code ?? -1) : 0, stdout, stderr });
      });
  });
}

function json(run) {
  try {
    return JSON.parse(run.stdout);
  } catch (e) {
    assert.fail(`not JSON (${e}): status ${run.status}\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
}

const find = (report, category, needle) =>
  report.findings.filter((f) => f.category === category && f.summary.includes(needle));

// The test host: an address of this machine the sandbox cannot reach and the broker logs.
function testHostAddress() {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === "IPv4" && !a.internal) return a.address;
    }
  }
  return null;
}
const HOST = testHostAddress();

let listener;
let received = [];
let port;

before(async () => {
  fs.mkdirSync(fixtureDir, { recursive: true });
  fs.copyFileSync(path.join(here, "fixtures", "phone-home.mjs"), fixture);
  listener = net.createServer((socket) => {
    const chunks = [];
    socket.on("data", (d) => chunks.push(d));
    socket.on("end", () => received.push(Buffer.concat(chunks).toString()));
    socket.on("error", () => {});
  });
  await new Promise((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(0, HOST ?? "127.0.0.2", resolve);
  });
  port = listener.address().port;
});

after(() => {
  listener?.close();
  fs.rmSync(fixtureDir, { recursive: true, force: true });
});

test("the phone-home fixture: bait read, host attempted, poisoned description; exit 1", async (t) => {
  const run = await audit(["--format", "json", "--exercise", "--", "node", fixture, HOST ?? "127.0.0.2", String(port)]);
  const r = json(run);
  const diag = `\n${JSON.stringify(r.findings, null, 1)}\nstderr:\n${run.stderr}`;
  assert.equal(run.status, 1, `exit status${diag}`);
  assert.equal(r.failed, true);
  assert.equal(r.highest, "high");
  assert.deepEqual(r.tools, ["add", "get_weather"]);

  const key = find(r, "bait", "~/.ssh/id_rsa");
  assert.equal(key.length, 1, `bait key not reported${diag}`);
  assert.equal(key[0].severity, "high");
  assert.match(key[0].tool, /\(startup\)/);
  const aws = find(r, "bait", "~/.aws/credentials");
  assert.equal(aws.length, 1, `the tool's bait read not reported${diag}`);
  assert.equal(aws[0].tool, "get_weather", "attributed to the tool call");

  if (HOST) {
    const home = find(r, "network", `connect to ${HOST}:${port}/tcp`);
    assert.equal(home.length, 1, `phone home not reported${diag}`);
    assert.match(home[0].detail, /denied/);
    assert.equal(find(r, "network", "possible exfiltration")[0]?.severity, "high", diag);
  } else {
    assert.notEqual(process.env.CI, "true", "no non-loopback IPv4 address: the phone home cannot be checked");
    t.diagnostic("SKIPPED the phone-home check: this machine has no non-loopback IPv4 address");
  }

  const poisoned = r.findings.filter((f) => f.category === "description" && f.summary.startsWith("tool get_weather:"));
  assert.ok(poisoned.some((f) => f.severity === "high" && f.summary.includes("secret file")), diag);
  assert.ok(poisoned.some((f) => f.summary.includes("concealment")), diag);
  assert.ok(poisoned.some((f) => f.summary.includes("instruction tag")), diag);
  assert.equal(r.findings.filter((f) => f.category === "description" && f.summary.startsWith("tool add:")).length, 0);

  assert.deepEqual(r.calls.map((c) => c.tool), ["add", "get_weather"]);
  assert.deepEqual(r.calls[1].arguments, { city: "a" });
  assert.match(r.calls[1].outcome, /^ok: sunny in a/);
  // The sandbox held: nothing reached the listener.
  assert.deepEqual(received, [], "bytes reached the test host through gander");
});

test("a phone home to host loopback (127.0.0.2) is reported, and refused", async () => {
  const local = net.createServer((socket) => {
    socket.on("data", (d) => received.push(d.toString()));
    socket.on("error", () => {});
  });
  await new Promise((resolve, reject) => {
    local.once("error", reject);
    local.listen(0, "127.0.0.2", resolve);
  });
  const localPort = local.address().port;
  try {
    const run = await audit(["--format", "json", "--", "node", fixture, "127.0.0.2", String(localPort)]);
    const r = json(run);
    const diag = `\n${JSON.stringify(r.findings, null, 1)}\nstderr:\n${run.stderr}`;
    assert.equal(run.status, 1, `exit status${diag}`);
    const home = find(r, "network", `connect to 127.0.0.2:${localPort}/tcp`);
    assert.equal(home.length, 1, `host-loopback phone home not reported${diag}`);
    assert.match(home[0].detail, /denied/);
    assert.deepEqual(received, [], "bytes reached the host-loopback listener");
  } finally {
    local.close();
  }
});

test("text and Markdown say the same; --fail-on is honoured", async () => {
  const text = await audit(["--", "node", fixture, HOST ?? "127.0.0.2", String(port)]);
  assert.equal(text.status, 1, text.stderr);
  assert.match(text.stdout, /\[HIGH\] read ~\/\.ssh\/id_rsa/);
  if (HOST) assert.ok(text.stdout.includes(`connect to ${HOST}:${port}/tcp`), text.stdout);
  assert.match(text.stdout, /tool get_weather: secret file/);
  assert.match(text.stdout, /Verdict: FAIL/);
  const md = await audit(["--format", "markdown", "--", "node", fixture, HOST ?? "127.0.0.2", String(port)]);
  assert.equal(md.status, 1, md.stderr);
  assert.match(md.stdout, /^# gander audit: /);
  assert.match(md.stdout, /\| high \| read ~\/\.ssh\/id_rsa \|/);
});

for (const [name, bin] of [
  ["server-memory", "@modelcontextprotocol/server-memory/dist/index.js"],
  ["server-sequential-thinking", "@modelcontextprotocol/server-sequential-thinking/dist/index.js"],
]) {
  test(`${name} is clean`, async () => {
    const server = path.join(e2e, "node_modules", bin);
    const run = await audit(["--format", "json", "--fail-on", "low", "--", "node", server]);
    const r = json(run);
    const diag = `\n${JSON.stringify(r.findings, null, 1)}\nstderr:\n${run.stderr}`;
    assert.equal(run.status, 0, `exit status${diag}`);
    assert.equal(r.complete, true, diag);
    assert.ok(r.tools.length > 0, `no tools listed${diag}`);
    assert.deepEqual(r.findings.filter((f) => f.severity !== "info"), [], diag);
    assert.deepEqual(received, []);
  });

  test(`${name} --exercise passes at the default threshold`, async () => {
    const server = path.join(e2e, "node_modules", bin);
    const run = await audit(["--format", "json", "--exercise", "--", "node", server]);
    const r = json(run);
    const diag = `\n${JSON.stringify(r, null, 1)}\nstderr:\n${run.stderr}`;
    assert.equal(run.status, 0, `exit status${diag}`);
    assert.equal(r.calls.length, r.tools.length, diag);
    assert.equal(find(r, "bait", "").length, 0, diag);
    assert.equal(r.findings.filter((f) => f.category === "network").length, 0, diag);
  });
}

test("bad input: exit 2, nothing started", async () => {
  for (const args of [
    ["--fail-on", "extreme", "--", "node", fixture],
    ["--format", "yaml", "--", "node", fixture],
    ["--workspace", "/nonexistent/gander-audit", "--", "node", fixture],
    [],
    ["--", "/nonexistent/gander-audit-server"],
  ]) {
    const run = await audit(args);
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    assert.equal(run.stdout, "");
  }
});

// The escape suite's rule: sandbox tests also run unprivileged (uid 65534), where gander
// builds the sandbox from an ordinary user's rights.
test("as uid 65534: the same findings", { skip: process.getuid() !== 0 && "not root: already unprivileged" }, async () => {
  const run = await new Promise((resolve) => {
    execFile("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/nonexistent",
      GANDER, "audit", "--format", "json", "--", "node", fixture, HOST ?? "127.0.0.2", String(port)],
    { maxBuffer: 64 << 20, timeout: 240_000 },
    (error, stdout, stderr) => resolve({ status: error ? (error.code ?? -1) : 0, stdout, stderr }));
  });
  const r = json(run);
  const diag = `\n${JSON.stringify(r.findings, null, 1)}\nstderr:\n${run.stderr}`;
  assert.equal(run.status, 1, `exit status${diag}`);
  assert.equal(find(r, "bait", "~/.ssh/id_rsa")[0]?.severity, "high", diag);
  if (HOST) assert.equal(find(r, "network", `connect to ${HOST}:${port}/tcp`).length, 1, diag);
  assert.ok(find(r, "description", "tool get_weather: secret file").length === 1, diag);
  assert.deepEqual(received, []);
});
