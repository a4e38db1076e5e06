// The install phase for package runners (launcher/install/), end to end:
//  - a malicious fixture package (tests/integration/install/fixtures/evil-package, packed with `npm pack`;
//    its postinstall reads ~/.ssh/id_rsa and appends to ~/.bashrc) installed through
//    `gander run -- npx -y TARBALL`: neither happens to the real home, both attempts are in the
//    audit log; as the current user and (when root) as uid 65534;
//  - OSV: a stand-in endpoint (an HTTP server in this process) naming the package MAL- refuses
//    the install; an unreachable endpoint warns on stderr and in the audit log;
//  - uvx and pipx run from a local PEP 503 index (fixtures/make_index.py): the fixture MCP
//    server installed from the index only, then initialize/tools/list with the index closed; a
//    malicious sdist whose setup.py reads ~/.ssh/id_rsa and appends to ~/.bashrc; OSV (PyPI)
//    refusing; `gander update` picking up a new version; unknown runner options refused; with
//    a collector running, the install events reach the audit log through it, in order;
//  - the real registry: `npx -y @modelcontextprotocol/server-memory` configured as Goose would,
//    driven by the MCP client SDK: the first start installs through the registry-only sandbox,
//    the second works from the cache with the registry unreachable. Skipped (with the reason)
//    when registry.npmjs.org cannot be reached, except under CI=true.
//
//   GANDER_BIN=/path/to/gander node --test --test-concurrency=1 tests/integration/install/install.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "..", "..", "e2e", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const GANDER = process.env.GANDER_BIN;
const CI = process.env.CI === "true";
const IS_ROOT = process.getuid() === 0;
const KEY = "planted key: must never leave the home directory\n";
const BASHRC = "# the user's own .bashrc\n";

// --- the OSV stand-in (tests/integration/install/osv_stub.mjs, a process of its own: gander runs here
// through spawnSync, which blocks this process's event loop) ----------------------------------
const osv = { proc: null, url: "", dir: "" };
osv.queries = () => {
  const file = path.join(osv.dir, "queries.jsonl");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
};
osv.setMalicious = (names) => fs.writeFileSync(path.join(osv.dir, "malicious.json"), JSON.stringify(names));

before(async () => {
  assert.ok(GANDER && fs.existsSync(GANDER), `GANDER_BIN=${GANDER} must name the gander binary`);
  osv.dir = fs.mkdtempSync(path.join(os.tmpdir(), "gander-osv-"));
  osv.proc = spawn(process.execPath, [path.join(here, "osv_stub.mjs"), osv.dir], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    osv.proc.stdout.once("data", (d) => resolve(Number(String(d).trim())));
    osv.proc.once("exit", (code) => reject(new Error(`osv_stub.mjs exited (${code})`)));
  });
  osv.url = `http://127.0.0.1:${port}`;
});

after(() => {
  osv.proc?.stdin.end();
  osv.proc?.kill();
  if (osv.dir) fs.rmSync(osv.dir, { recursive: true, force: true });
});

// --- fixture --------------------------------------------------------------------------------

// The fixture packed once for the whole file (`npm pack` takes seconds), copied into each world.
let packedTarball;
function packedFixture() {
  if (!packedTarball) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gander-install-pack-"));
    process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
      cwd: path.join(here, "fixtures", "evil-package"),
      stdio: ["ignore", "ignore", "inherit"],
    });
    packedTarball = path.join(dir, "gander-evil-fixture-1.0.0.tgz");
  }
  return packedTarball;
}

// A world: a home with a planted key and .bashrc, the gander binary and the packed fixture in a
// 0755 directory (so uid 65534 can use them), owned by whoever runs gander.
function makeWorld(who, { pack = true } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `gander-install-${who}-`));
  fs.chmodSync(root, 0o755);
  const home = path.join(root, "home");
  const ws = path.join(root, "ws");
  const bin = path.join(root, "bin");
  for (const d of [home, ws, bin, path.join(home, ".ssh")]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), KEY, { mode: 0o600 });
  fs.writeFileSync(path.join(home, ".bashrc"), BASHRC);
  fs.copyFileSync(GANDER, path.join(bin, "gander"));
  fs.chmodSync(path.join(bin, "gander"), 0o755);
  const tarball = path.join(bin, "gander-evil-fixture-1.0.0.tgz");
  if (pack) {
    fs.copyFileSync(packedFixture(), tarball);
    fs.chmodSync(tarball, 0o644);
  }
  if (who === "uid65534") execFileSync("chown", ["-R", "65534:65534", home, ws]);
  return { root, home, ws, gander: path.join(bin, "gander"), tarball, who };
}

function env(world, extra = {}) {
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: world.home, LANG: "C.UTF-8", ...extra };
}

// `gander run` with stdin closed at once (the fixture's bin exits by itself), or after `input`.
function gander(world, args, extra = {}, input = "") {
  const prefix = world.who === "uid65534" ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : [];
  const argv = [...prefix, world.gander, ...args];
  const r = spawnSync(argv[0], argv.slice(1), { cwd: world.ws, env: env(world, extra), encoding: "utf8", timeout: 300_000, input });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, diag: `\n$ ${argv.join(" ")}\n--- stderr ---\n${r.stderr}` };
}

function auditLog(world, name) {
  const file = path.join(world.home, ".local", "state", "gander", "audit", `${name}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

const installEvents = (log) => log.filter((e) => e.kind === "lifecycle" && e.lifecycle.what === "install");
const cache = (world, name) => path.join(world.home, ".local", "share", "gander", "packages", name);

function assertHomeUntouched(world, diag) {
  assert.equal(fs.readFileSync(path.join(world.home, ".bashrc"), "utf8"), BASHRC, `~/.bashrc changed${diag}`);
  assert.deepEqual(fs.readdirSync(world.home).sort(), [".bashrc", ".local", ".ssh"], `new files in ~${diag}`);
  assert.deepEqual(fs.readdirSync(path.join(world.home, ".local")).sort(), ["share", "state"], `new files in ~/.local${diag}`);
}

const whos = IS_ROOT ? ["current_user", "uid65534"] : ["current_user"];

// --- the malicious tarball and OSV --------------------------------------------------------

for (const who of whos) {
  test(`${who}: a malicious install script cannot touch the home directory, and the audit log shows it trying`, () => {
    const world = makeWorld(who);
    const r = gander(world, ["run", "--collector", "off", "--name", "evil", "--osv-endpoint", osv.url, "--", "npx", "-y", world.tarball]);
    assert.equal(r.status, 0, r.diag);
    assert.equal(r.stdout, "", `gander wrote to stdout${r.diag}`);
    assert.match(r.stderr, /installing .*gander-evil-fixture-1\.0\.0\.tgz/, r.diag);

    // What the script itself saw: no key; its .bashrc line went to the private, discarded home.
    const report = JSON.parse(fs.readFileSync(path.join(cache(world, "evil"), "node_modules", "gander-evil-fixture", "postinstall-report.json"), "utf8"));
    assert.equal(report.id_rsa, undefined, `the script read the key${r.diag}`);
    assert.equal(report.id_rsa_error, "ENOENT", r.diag);
    assertHomeUntouched(world, r.diag);

    // Run from the cache, the extension cannot write into it: neither a new file in its own
    // package directory nor a change to its own code.
    const pkg = path.join(cache(world, "evil"), "node_modules", "gander-evil-fixture");
    assert.doesNotMatch(r.stderr, /cache write: ok/, `the extension wrote into its install cache${r.diag}`);
    assert.equal((r.stderr.match(/cache write: E(ROFS|ACCES|PERM) /g) ?? []).length, 2, r.diag);
    assert.ok(!fs.existsSync(path.join(pkg, "written-at-run-time")), r.diag);
    assert.equal(fs.readFileSync(path.join(pkg, "server.js"), "utf8"), fs.readFileSync(path.join(here, "fixtures", "evil-package", "server.js"), "utf8"), r.diag);

    // Both attempts are in the audit log, from the install run, with the real paths.
    const log = auditLog(world, "evil");
    const files = log.filter((e) => e.kind === "file");
    const key = files.find((e) => e.file.path === path.join(world.home, ".ssh", "id_rsa"));
    assert.ok(key, `no audit line for ~/.ssh/id_rsa${r.diag}`);
    assert.equal(key.file.class, "denied");
    assert.equal(key.file.path_label, "~/.ssh");
    const rc = files.find((e) => e.file.path === path.join(world.home, ".bashrc"));
    assert.ok(rc, `no audit line for ~/.bashrc${r.diag}`);
    assert.equal(rc.file.class, "private");
    assert.notEqual(rc.file.access, "read");
    // The workspace (the cache) is not news, even with every home access logged.
    assert.ok(!files.some((e) => e.file.path_label === "${WORKSPACE}"), "cache writes logged");

    // OSV was asked about the tarball's package and version.
    assert.ok(osv.queries().some((q) => q.package.name === "gander-evil-fixture" && q.version === "1.0.0" && q.package.ecosystem === "npm"));
    const details = installEvents(log).map((e) => e.lifecycle.detail);
    assert.ok(details.some((d) => d.startsWith("osv clean: gander-evil-fixture@1.0.0")), details.join("\n"));
    assert.ok(details.some((d) => d.startsWith("installed gander-evil-fixture@1.0.0")), details.join("\n"));

    // The second start comes from the cache: no install, no new OSV query.
    const queries = osv.queries().length;
    const again = gander(world, ["run", "--collector", "off", "--name", "evil", "--osv-endpoint", osv.url, "--", "npx", "-y", world.tarball]);
    assert.equal(again.status, 0, again.diag);
    assert.doesNotMatch(again.stderr, /installing/, again.diag);
    assert.equal(osv.queries().length, queries);
    assert.equal(installEvents(auditLog(world, "evil")).length, installEvents(log).length);

    // `gander update` installs again (OSV asked again), and says what changed.
    const update = gander(world, ["update", "evil", "--collector", "off", "--osv-endpoint", osv.url]);
    assert.equal(update.status, 0, update.diag);
    assert.equal(update.stdout, "evil: gander-evil-fixture 1.0.0 -> 1.0.0\n", update.diag);
    assert.equal(osv.queries().length, queries + 1);
    assertHomeUntouched(world, update.diag);
    fs.rmSync(world.root, { recursive: true, force: true });
  });

  test(`${who}: OSV naming the package malicious refuses the install`, () => {
    const world = makeWorld(who);
    osv.setMalicious(["gander-evil-fixture"]);
    let r;
    try {
      r = gander(world, ["run", "--collector", "off", "--name", "evil", "--osv-endpoint", osv.url, "--", "npx", "-y", world.tarball]);
    } finally {
      osv.setMalicious([]);
    }
    assert.equal(r.status, 125, r.diag);
    assert.match(r.stderr, /refusing to install gander-evil-fixture@1\.0\.0: OSV .* lists it as malicious: MAL-2099-4242/, r.diag);
    assert.ok(!fs.existsSync(path.join(cache(world, "evil"), "node_modules")), `installed anyway${r.diag}`);
    const details = installEvents(auditLog(world, "evil")).map((e) => e.lifecycle.detail);
    assert.ok(details.some((d) => d.includes("osv malicious") && d.includes("MAL-2099-4242")), details.join("\n"));
    assert.ok(!auditLog(world, "evil").some((e) => e.kind === "lifecycle" && e.lifecycle.what === "start"), "a sandbox started");
    fs.rmSync(world.root, { recursive: true, force: true });
  });

  test(`${who}: an unreachable OSV endpoint is a warning and an audit event, not a silent pass`, () => {
    const world = makeWorld(who);
    // A port nothing listens on (the discard port on loopback): refused at once.
    const r = gander(world, ["run", "--collector", "off", "--name", "evil", "--", "npx", "-y", world.tarball], {
      GANDER_OSV_ENDPOINT: "http://127.0.0.1:9",
    });
    assert.equal(r.status, 0, r.diag);
    assert.match(r.stderr, /warning: evil: could not check gander-evil-fixture@1\.0\.0 against OSV/, r.diag);
    const details = installEvents(auditLog(world, "evil")).map((e) => e.lifecycle.detail);
    assert.ok(details.some((d) => d.startsWith("osv unreachable: gander-evil-fixture@1.0.0 not checked")), details.join("\n"));
    assertHomeUntouched(world, r.diag);
    fs.rmSync(world.root, { recursive: true, force: true });
  });
}

test("the policy's `install: off` turns the install phase off; --install auto wins over it", () => {
  const world = makeWorld("current_user");
  const policy = path.join(world.root, "no-install.yaml");
  fs.writeFileSync(policy, "version: 1\nextends: default\ninstall: off\n");
  const args = ["run", "--collector", "off", "--name", "noinstall", "--policy", policy, "--osv-endpoint", osv.url];
  const off = gander(world, [...args, "--", "npx", "-y", world.tarball]);
  assert.doesNotMatch(off.stderr, /installing/, `installed despite install: off${off.diag}`);
  assert.ok(!fs.existsSync(cache(world, "noinstall")), `a cache was made despite install: off${off.diag}`);
  const auto = gander(world, [...args, "--install", "auto", "--", "npx", "-y", world.tarball]);
  assert.equal(auto.status, 0, auto.diag);
  assert.match(auto.stderr, /installing .*gander-evil-fixture-1\.0\.0\.tgz/, auto.diag);
  assert.ok(fs.existsSync(cache(world, "noinstall")), auto.diag);
  const bad = path.join(world.root, "bad.yaml");
  fs.writeFileSync(bad, "version: 1\ninstall: later\n");
  const refused = gander(world, ["run", "--collector", "off", "--name", "bad", "--policy", bad, "--", "npx", "-y", world.tarball]);
  assert.equal(refused.status, 2, refused.diag);
  assert.match(refused.stderr, new RegExp(`${bad.replace(/[.]/g, "\\.")}:2:10: install: 'later': expected one of: auto, off`), refused.diag);
  fs.rmSync(world.root, { recursive: true, force: true });
});

test("the extension's policy can name the OSV endpoint (monitor.osv_endpoint)", () => {
  const world = makeWorld("current_user");
  const policy = path.join(world.root, "policy.yaml");
  fs.writeFileSync(policy, `version: 1\nextends: default\nmonitor: {osv_endpoint: "${osv.url}"}\n`);
  osv.setMalicious(["gander-evil-fixture"]);
  let r;
  try {
    r = gander(world, ["run", "--collector", "off", "--name", "evil", "--policy", policy, "--", "npx", "-y", world.tarball]);
  } finally {
    osv.setMalicious([]);
  }
  assert.equal(r.status, 125, r.diag);
  assert.match(r.stderr, /lists it as malicious: MAL-2099-4242/, r.diag);
  fs.rmSync(world.root, { recursive: true, force: true });
});

// --- the real registry --------------------------------------------------------------------

async function registryReachable() {
  try {
    const res = await fetch("https://registry.npmjs.org/@modelcontextprotocol%2fserver-memory", {
      signal: AbortSignal.timeout(15_000),
    });
    return res.ok ? "" : `registry.npmjs.org answered ${res.status}`;
  } catch (e) {
    return `registry.npmjs.org is unreachable: ${e.cause?.code ?? e.message}`;
  }
}

async function connect(world, args, extra) {
  const { Client } = await import(pathToFileURL(path.join(sdk, "index.js")));
  const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, "stdio.js")));
  const transport = new StdioClientTransport({ command: world.gander, args, env: env(world, extra), cwd: world.ws, stderr: "pipe" });
  const stderr = [];
  transport.stderr?.on("data", (d) => stderr.push(d.toString()));
  const client = new Client({ name: "gander-install-test", version: "0.1.0" });
  try {
    await client.connect(transport, { timeout: 240_000 });
    const tools = await client.listTools(undefined, { timeout: 30_000 });
    return { names: tools.tools.map((t) => t.name).sort(), stderr: () => stderr.join("") };
  } catch (e) {
    await new Promise((r) => setTimeout(r, 200));
    throw new Error(`${e.message}\n$ gander ${args.join(" ")}\n--- stderr ---\n${stderr.join("")}`);
  } finally {
    await client.close();
  }
}

test("npx -y @modelcontextprotocol/server-memory: installed through the registry-only sandbox, then run offline from the cache", async (t) => {
  if (!fs.existsSync(path.join(sdk, "index.js"))) {
    const why = "the MCP client SDK is missing: run tests/e2e/install.sh";
    if (CI) assert.fail(why);
    t.skip(why);
    console.error(`SKIPPED: ${why}`);
    return;
  }
  const unreachable = await registryReachable();
  if (unreachable) {
    if (CI) assert.fail(`${unreachable} (CI=true: the registry must be reachable)`);
    t.skip(unreachable);
    console.error(`SKIPPED: ${unreachable}`);
    return;
  }
  const world = makeWorld("current_user");
  // As Goose's config would have it, wrapped: gander run --name memory --profile memory -- npx ...
  const args = ["run", "--collector", "off", "--name", "memory", "--profile", "memory", "--osv-endpoint", osv.url, "--", "npx", "-y", "@modelcontextprotocol/server-memory"];
  const first = await connect(world, args, { MEMORY_FILE_PATH: path.join(world.ws, "memory.jsonl") });
  assert.ok(first.names.includes("create_entities") && first.names.includes("read_graph"), first.names.join(",") + first.stderr());
  assert.match(first.stderr(), /installing @modelcontextprotocol\/server-memory from https:\/\/registry\.npmjs\.org\//, first.stderr());
  let log = auditLog(world, "memory");
  // The install reached the registry (through the broker) and nothing else.
  const net = log.filter((e) => e.kind === "network");
  assert.ok(net.some((e) => JSON.stringify(e).includes("registry.npmjs.org")), JSON.stringify(net.slice(0, 3)));
  assert.ok(!net.some((e) => e.network?.result === "allowed" && !JSON.stringify(e).includes("registry.npmjs.org")), "a connection elsewhere was allowed");
  assert.ok(osv.queries().some((q) => q.package.name === "@modelcontextprotocol/server-memory" && q.version === undefined));
  assertHomeUntouched(world, first.stderr());
  const installs = installEvents(log).length;
  const lines = log.length;

  // Second start: the registry unreachable (any attempt would fail), the OSV endpoint too.
  const second = await connect(world, args.map((a) => (a === osv.url ? "http://127.0.0.1:9" : a)), {
    MEMORY_FILE_PATH: path.join(world.ws, "memory.jsonl"),
    npm_config_registry: "http://127.0.0.1:9/",
  });
  assert.deepEqual(second.names, first.names, second.stderr());
  assert.doesNotMatch(second.stderr(), /installing|OSV/, second.stderr());
  log = auditLog(world, "memory");
  assert.equal(installEvents(log).length, installs, "the second start installed again");
  assert.ok(!log.slice(lines).some((e) => e.kind === "network"), "the second start used the network");
  // The extension ran from the cache, read-only: its start names the cached bin.
  const starts = log.slice(lines).filter((e) => e.kind === "lifecycle" && e.lifecycle.what === "start");
  assert.equal(starts.length, 1);
  assert.ok(starts[0].lifecycle.detail.includes(cache(world, "memory")), starts[0].lifecycle.detail);
  assertHomeUntouched(world, second.stderr());
  fs.rmSync(world.root, { recursive: true, force: true });
});

// --- uvx and pipx run, from a local package index ----------------------------------------
// PyPI is not reachable from the test machines: tests/integration/install/fixtures/make_index.py builds a
// PEP 503 index offline (the fixture MCP server as a wheel, the malicious sdist, Debian's
// setuptools and wheel wheels for pip's isolated build) and python3's http.server serves it on
// 127.0.0.1. gander installs both runners' packages itself (a venv in the cache, pip), so
// neither uv nor pipx is needed.

const PYTHON = "/usr/bin/python3";
const index = { proc: null, url: "", dir: "" };

function pythonMissing() {
  const r = spawnSync(PYTHON, ["-c", "import ensurepip, venv"], { encoding: "utf8" });
  if (r.status !== 0) return `${PYTHON} with venv and ensurepip is missing (python3-venv)`;
  if (!fs.readdirSync("/usr/share/python-wheels").some((f) => f.startsWith("wheel-"))) {
    return "Debian's wheel wheel is missing (python3-wheel-whl)";
  }
  return "";
}

function buildIndex(versions) {
  execFileSync(PYTHON, [path.join(here, "fixtures", "make_index.py"), index.dir, ...versions.flatMap((v) => ["--mcp-version", v])], { stdio: ["ignore", "ignore", "inherit"] });
}

async function startIndex() {
  index.dir = fs.mkdtempSync(path.join(os.tmpdir(), "gander-pyindex-"));
  fs.chmodSync(index.dir, 0o755);
  buildIndex(["1.0.0"]);
  index.proc = spawn(PYTHON, ["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", index.dir, "0"], { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    index.proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve(Number(m[1]));
    });
    index.proc.once("exit", (code) => reject(new Error(`http.server exited (${code})`)));
  });
  index.url = `http://127.0.0.1:${port}/simple`;
}

after(() => {
  index.proc?.kill();
  if (index.dir) fs.rmSync(index.dir, { recursive: true, force: true });
});

async function needPython(t) {
  const why = pythonMissing();
  if (why) {
    if (CI) assert.fail(why);
    t.skip(why);
    console.error(`SKIPPED: ${why}`);
    return false;
  }
  if (!index.proc) await startIndex();
  return true;
}

const MCP_INPUT = [
  { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "gander-install-test", version: "0" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
].map((m) => JSON.stringify(m) + "\n").join("");

// initialize + tools/list through `gander run`; stdin closes after them, the server exits.
function mcpSession(world, args, extra) {
  const r = gander(world, args, extra, MCP_INPUT);
  assert.equal(r.status, 0, r.diag);
  const replies = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(replies.map((m) => m.id), [1, 2], `stdout: ${r.stdout}${r.diag}`);
  assert.equal(replies[0].result.serverInfo.name, "gander-mcp-fixture", r.diag);
  assert.deepEqual(replies[1].result.tools.map((t) => t.name), ["echo"], r.diag);
  return { ...r, version: replies[0].result.serverInfo.version };
}

const indexEnv = (runner, url) => (runner === "uvx" ? { UV_INDEX_URL: url } : { PIP_INDEX_URL: url });
const pyRunners = [
  { runner: "pipx", command: ["pipx", "run", "gander-mcp-fixture"], spec: "gander-mcp-fixture", version: undefined },
  { runner: "uvx", command: ["uvx", "--from", "gander-mcp-fixture==1.0.0", "gander-mcp-fixture"], spec: "gander-mcp-fixture==1.0.0", version: "1.0.0" },
];

for (const who of whos) {
  for (const { runner, command, spec, version } of pyRunners) {
    test(`${who}: ${command.join(" ")}: installed from the index only, then run offline from the cache`, async (t) => {
      if (!(await needPython(t))) return;
      const world = makeWorld(who, { pack: false });
      const args = ["run", "--collector", "off", "--name", "py", "--osv-endpoint", osv.url, "--", ...command];
      const first = mcpSession(world, args, indexEnv(runner, index.url));
      assert.match(first.stderr, new RegExp(`installing ${spec.replace(/[.=]/g, "\\$&")} from ${index.url}`), first.diag);
      let log = auditLog(world, "py");
      const port = Number(new URL(index.url).port);
      const net = log.filter((e) => e.kind === "network");
      assert.ok(net.length > 0, `no network events${first.diag}`);
      for (const e of net) {
        assert.ok(e.network.ip === "127.0.0.1" && e.network.port === port && e.network.result === "allowed", `not the index: ${JSON.stringify(e)}`);
      }
      const details = installEvents(log).map((e) => e.lifecycle.detail);
      assert.ok(details.some((d) => d === "installed gander-mcp-fixture==1.0.0 (console script gander-mcp-fixture)"), details.join("\n"));
      // OSV was asked, in the PyPI ecosystem (about the pinned version when there is one).
      assert.ok(osv.queries().some((q) => q.package.ecosystem === "PyPI" && q.package.name === "gander-mcp-fixture" && q.version === version), JSON.stringify(osv.queries().slice(-2)));
      assert.ok(fs.existsSync(path.join(cache(world, "py"), "venv", "bin", "gander-mcp-fixture")));
      assertHomeUntouched(world, first.diag);

      // Second start: the index and OSV closed (any attempt would fail).
      const lines = log.length;
      const second = mcpSession(world, args.map((a) => (a === osv.url ? "http://127.0.0.1:9" : a)), indexEnv(runner, "http://127.0.0.1:9/simple"));
      assert.doesNotMatch(second.stderr, /installing|OSV/, second.diag);
      log = auditLog(world, "py");
      assert.ok(!log.slice(lines).some((e) => e.kind === "network"), "the second start used the network");
      assert.equal(installEvents(log).length, details.length, "the second start installed again");
      const starts = log.slice(lines).filter((e) => e.kind === "lifecycle" && e.lifecycle.what === "start");
      assert.equal(starts.length, 1);
      assert.ok(starts[0].lifecycle.detail.startsWith(path.join(cache(world, "py"), "venv", "bin", "gander-mcp-fixture")), starts[0].lifecycle.detail);
      assertHomeUntouched(world, second.diag);
      fs.rmSync(world.root, { recursive: true, force: true });
    });
  }

  test(`${who}: a malicious sdist's setup.py cannot touch the home directory, and the audit log shows it trying`, async (t) => {
    if (!(await needPython(t))) return;
    const world = makeWorld(who, { pack: false });
    const r = gander(world, ["run", "--collector", "off", "--name", "evil", "--osv-endpoint", osv.url, "--", "uvx", "gander-evil-fixture"], indexEnv("uvx", index.url));
    assert.equal(r.status, 0, r.diag);
    assert.equal(r.stdout, "", `gander wrote to stdout${r.diag}`);
    assert.match(r.stderr, /Building wheel for gander-evil-fixture/, r.diag);
    // What setup.py saw (its report, installed with the package and printed by its script).
    const report = JSON.parse(r.stderr.split("\n").find((l) => l.startsWith('{"')));
    assert.equal(report.id_rsa, undefined, `setup.py read the key${r.diag}`);
    assert.equal(report.id_rsa_error, "FileNotFoundError", r.diag);
    assert.equal(report.home, world.home);
    assertHomeUntouched(world, r.diag);

    const files = auditLog(world, "evil").filter((e) => e.kind === "file");
    const key = files.find((e) => e.file.path === path.join(world.home, ".ssh", "id_rsa"));
    assert.ok(key, `no audit line for ~/.ssh/id_rsa${r.diag}`);
    assert.equal(key.file.class, "denied");
    assert.equal(key.file.path_label, "~/.ssh");
    assert.match(key.exe, /python/);
    const rc = files.find((e) => e.file.path === path.join(world.home, ".bashrc"));
    assert.ok(rc, `no audit line for ~/.bashrc${r.diag}`);
    assert.equal(rc.file.class, "private");
    assert.notEqual(rc.file.access, "read");
    fs.rmSync(world.root, { recursive: true, force: true });
  });
}

test("uvx and pipx run: options gander does not understand are refused, naming the option", async (t) => {
  const world = makeWorld("current_user", { pack: false });
  for (const [command, option] of [[["uvx", "--with", "x", "y"], "uvx option --with"], [["pipx", "run", "--python", "3.12", "y"], "pipx run option --python"]]) {
    const r = gander(world, ["run", "--collector", "off", "--name", "py", "--", ...command]);
    assert.equal(r.status, 2, r.diag);
    assert.ok(r.stderr.includes(option), r.diag);
    assert.ok(!fs.existsSync(cache(world, "py")), `a cache was made${r.diag}`);
  }
  fs.rmSync(world.root, { recursive: true, force: true });
});

test("pipx run: OSV naming the package malicious refuses the install; gander update installs the newest version", async (t) => {
  if (!(await needPython(t))) return;
  const world = makeWorld("current_user", { pack: false });
  const args = ["run", "--collector", "off", "--name", "py", "--osv-endpoint", osv.url, "--", "pipx", "run", "gander-mcp-fixture"];
  osv.setMalicious(["gander-mcp-fixture"]);
  let r;
  try {
    r = gander(world, args, indexEnv("pipx", index.url), MCP_INPUT);
  } finally {
    osv.setMalicious([]);
  }
  assert.equal(r.status, 125, r.diag);
  assert.match(r.stderr, /refusing to install gander-mcp-fixture \(every version\): OSV .* MAL-2099-4242/, r.diag);
  assert.ok(!fs.existsSync(path.join(cache(world, "py"), "venv")), `installed anyway${r.diag}`);

  assert.equal(mcpSession(world, args, indexEnv("pipx", index.url)).version, "1.0.0");
  buildIndex(["1.0.0", "1.0.1"]);
  const update = gander(world, ["update", "py", "--collector", "off", "--osv-endpoint", osv.url], indexEnv("pipx", index.url));
  assert.equal(update.status, 0, update.diag);
  assert.equal(update.stdout, "py: gander-mcp-fixture 1.0.0 -> 1.0.1\n", update.diag);
  assert.equal(mcpSession(world, args, indexEnv("pipx", "http://127.0.0.1:9/simple")).version, "1.0.1");
  assertHomeUntouched(world, update.diag);
  fs.rmSync(world.root, { recursive: true, force: true });
});

test("with a collector running, the install events go through it, in order, once each", async (t) => {
  if (!(await needPython(t))) return;
  if (!fs.existsSync(path.join(path.dirname(GANDER), "gander-collect"))) {
    const why = "gander-collect is not built next to GANDER_BIN";
    if (CI) assert.fail(why);
    t.skip(why);
    console.error(`SKIPPED: ${why}`);
    return;
  }
  const world = makeWorld("current_user", { pack: false });
  const runtime = path.join(world.root, "run");
  fs.mkdirSync(runtime, { mode: 0o700 });
  const extra = { XDG_RUNTIME_DIR: runtime, ...indexEnv("pipx", index.url) };
  // A private collector: its socket under this world's XDG_RUNTIME_DIR, its state in its home.
  const collector = spawn(GANDER, ["collect", "--listen", "none"], { env: env(world, extra), stdio: ["ignore", "ignore", "pipe"] });
  let collectorLog = "";
  collector.stderr.on("data", (d) => (collectorLog += d));
  try {
    const socket = path.join(runtime, "gander", "collector.sock");
    while (!fs.existsSync(socket)) {
      assert.equal(collector.exitCode, null, `the collector exited: ${collectorLog}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // spawnSync would block this event loop, not the collector (a process of its own).
    const r = mcpSession(world, ["run", "--collector", "connect", "--name", "py", "--osv-endpoint", osv.url, "--", "pipx", "run", "gander-mcp-fixture"], extra);
    assert.doesNotMatch(r.stderr, /no collector|collector:/, r.diag);
  } finally {
    collector.kill("SIGTERM");
    await new Promise((r) => (collector.exitCode !== null ? r() : collector.once("exit", r)));
  }
  const phases = auditLog(world, "py")
    .filter((e) => e.kind === "lifecycle" && ["install", "start", "stop"].includes(e.lifecycle.what))
    .map((e) => (e.lifecycle.what === "install" ? e.lifecycle.detail.split(/[ =]/).slice(0, 2).join(" ") : e.lifecycle.what));
  assert.deepEqual(phases, ["osv clean:", "installing gander-mcp-fixture", "start", "stop", "installed gander-mcp-fixture", "start", "stop"], collectorLog);
  fs.rmSync(world.root, { recursive: true, force: true });
});

// The install phase's events count in the metrics under phase="install" (issue 16): the evil
// fixture's postinstall reads the planted ~/.ssh/id_rsa, which shows in
// gander_file_access_outside_workspace_total{path="~/.ssh",phase="install"} and in the denials,
// the series GanderSensitiveFileAccess matches; the extension is started once (the install
// sandbox's own start is not counted); nothing of the install is under phase="run".
test("a postinstall that reads ~/.ssh is counted under phase=\"install\"; the extension's starts stay 1", async (t) => {
  if (!fs.existsSync(path.join(path.dirname(GANDER), "gander-collect"))) {
    const why = "gander-collect is not built next to GANDER_BIN";
    if (CI) assert.fail(why);
    t.skip(why);
    return;
  }
  const world = makeWorld("current_user");
  const runtime = path.join(world.root, "run");
  fs.mkdirSync(runtime, { mode: 0o700 });
  const extra = { XDG_RUNTIME_DIR: runtime };
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const collector = spawn(GANDER, ["collect", "--listen", `127.0.0.1:${port}`], { env: env(world, extra), stdio: ["ignore", "ignore", "pipe"] });
  let collectorLog = "";
  collector.stderr.on("data", (d) => (collectorLog += d));
  let metrics = "";
  let r;
  try {
    const socket = path.join(runtime, "gander", "collector.sock");
    while (!fs.existsSync(socket)) {  // bounded by the test's timeout, not a fixed wait
      assert.equal(collector.exitCode, null, `the collector exited: ${collectorLog}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    r = gander(world, ["run", "--collector", "connect", "--name", "evil", "--osv-endpoint", osv.url, "--", "npx", "-y", world.tarball], extra);
    assert.equal(r.status, 0, r.diag);
    assert.doesNotMatch(r.stderr, /no collector|refused/, r.diag);
    // gander acknowledged every event before it exited: the metrics hold them all now.
    metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  } finally {
    collector.kill("SIGTERM");
    await new Promise((res) => (collector.exitCode !== null ? res() : collector.once("exit", res)));
  }
  const series = (name) => metrics.split("\n").filter((l) => l.startsWith(`${name}{`) && l.includes('extension="evil"'));
  const value = (l) => Number(l.slice(l.lastIndexOf(" ") + 1));
  const ssh = series("gander_file_access_outside_workspace_total").filter((l) => l.includes('path="~/.ssh"'));
  const sshInstall = ssh.filter((l) => l.includes('phase="install"'));
  assert.ok(sshInstall.length > 0 && sshInstall.every((l) => value(l) > 0), `no install-phase ~/.ssh series:\n${ssh.join("\n")}\n${r.diag}`);
  assert.ok(sshInstall.some((l) => l.includes('path_class="denied"')), sshInstall.join("\n"));
  assert.deepEqual(ssh.filter((l) => l.includes('phase="run"') && value(l) > 0), [], "the install's read charged to the run");
  const fileDenials = series("gander_denials_total").filter((l) => l.includes('domain="file"') && l.includes('phase="install"'));
  assert.ok(fileDenials.some((l) => value(l) > 0), `no install-phase file denial:\n${series("gander_denials_total").join("\n")}`);
  assert.deepEqual(series("gander_extension_starts_total").map(value), [1], metrics);
  fs.rmSync(world.root, { recursive: true, force: true });
});
