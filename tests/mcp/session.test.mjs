// End-to-end: `gander mcp` driven by the real MCP client (the SDK's Client over
// StdioClientTransport) through a realistic session: a project copied in and built, python_run
// sharing state, files written and read, a fork changed while the original stays as it was, a
// result exported, a TTL running out, escape attempts through command_run, and the session's
// end leaving no process and no file behind.
//
//   GANDER_BIN=build/launcher/gander node --test tests/mcp/session.test.mjs
//   GANDER_MCP_FLAGS="--no-namespaces"   extra flags for `gander mcp`
//   GANDER_MCP_AS_NOBODY=1               run the server as uid/gid 65534 (setpriv)
//   GANDER_MCP_FLAGS="--backend gvisor"  under gVisor (exit 77, skipped, without runsc; CI: fails)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";

const GANDER = process.env.GANDER_BIN;
const FLAGS = (process.env.GANDER_MCP_FLAGS || "").split(" ").filter(Boolean);
const AS_NOBODY = process.env.GANDER_MCP_AS_NOBODY === "1";
const GVISOR = FLAGS.includes("gvisor");
const here = path.dirname(fileURLToPath(import.meta.url));

if (GVISOR && !process.env.PATH.split(":").some((d) => fs.existsSync(path.join(d, "runsc")))) {
  if (process.env.CI !== "true") {
    console.log("GANDER-SKIP: runsc is not installed: the gVisor variant needs it");
    process.exit(77);
  }
  throw new Error("CI=true: runsc must be installed for the gVisor variant");
}

let root, home, project, exportDir, tmp, client, transport, stderr = "";

function world() {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "gander-mcp-e2e-"));
  fs.chmodSync(root, 0o755);
  home = path.join(root, "home");
  project = path.join(root, "project");
  exportDir = path.join(root, "export");
  tmp = path.join(root, "tmp");
  for (const d of [home, path.join(home, ".ssh"), project, exportDir, tmp]) {
    fs.mkdirSync(d, { recursive: true });
  }
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "PLANTED-HOST-KEY\n", { mode: 0o600 });
  fs.writeFileSync(path.join(project, "hello.c"),
    '#include <stdio.h>\nint main(void) { puts("hello from the sandbox"); return 0; }\n');
  fs.writeFileSync(path.join(project, "Makefile"), "hello: hello.c\n\tcc -O2 -o hello hello.c\n");
  if (AS_NOBODY) {
    for (const d of [root, home, project, exportDir, tmp]) fs.chownSync(d, 65534, 65534);
    for (const f of ["hello.c", "Makefile"]) fs.chownSync(path.join(project, f), 65534, 65534);
  }
}

async function call(name, args = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  return { ...r, s: r.structuredContent || {}, text: r.content?.[0]?.text ?? "" };
}

async function run(cmd, sandbox) {
  return call("command_run", sandbox ? { cmd, sandbox } : { cmd });
}

before(async () => {
  assert.ok(GANDER, "GANDER_BIN must name the gander binary");
  world();
  const args = ["mcp", "--collector", "off", "--export-dir", exportDir, "--files-root", project,
                ...FLAGS];
  const command = AS_NOBODY ? "setpriv" : GANDER;
  const argv = AS_NOBODY
    ? ["--reuid", "65534", "--regid", "65534", "--clear-groups", GANDER, ...args] : args;
  transport = new StdioClientTransport({
    command, args: argv, cwd: root, stderr: "pipe",
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, TMPDIR: tmp, LANG: "C.UTF-8" },
  });
  transport.stderr?.on("data", (d) => { stderr += d; });
  client = new Client({ name: "gander-mcp-e2e", version: "1.0.0" });
  await client.connect(transport);
});

after(() => {
  if (process.exitCode && stderr) console.error("gander mcp stderr:\n" + stderr);
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

test("the tools are listed with situations in their descriptions", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const n of ["command_run", "python_run", "file_write", "file_read", "file_list",
                   "sandbox_create", "sandbox_fork", "sandbox_export", "sandbox_list",
                   "sandbox_kill", "sandbox_renew"]) {
    assert.ok(names.includes(n), n);
  }
  const cmd = tools.find((t) => t.name === "command_run");
  assert.match(cmd.description, /installs packages/);
});

test("create with the project copied in, then build it", async () => {
  const created = await call("sandbox_create", { name: "proj", files: [project] });
  assert.equal(created.isError, false, created.text);
  assert.ok(["full", "landlock", "seccomp", "gvisor"].includes(created.s.isolation),
            created.s.isolation);
  if (FLAGS.includes("--no-namespaces")) assert.equal(created.s.isolation, "landlock");
  if (GVISOR) assert.equal(created.s.isolation, "gvisor");
  assert.equal(created.s.copied.files, 2);
  const built = await run("cd project && make && ./hello", "proj");
  assert.equal(built.isError, false, built.text);
  assert.equal(built.s.exit_code, 0);
  assert.match(built.s.stdout, /hello from the sandbox/);
  // The original project is untouched: the build happened in the copy.
  assert.ok(!fs.existsSync(path.join(project, "hello")));
});

// The warm spare: started ahead under the name the next unnamed create takes, listed once up.
async function spareFor(name) {
  for (;;) {
    const list = await call("sandbox_list");
    if (list.s.warm_spares?.includes(name)) return;
    await new Promise((r) => setTimeout(r, 200));  // an idle moment: the spare starts in it
  }
}

test("an unnamed create is handed the warm spare, files copied in; so is a fork", async () => {
  await spareFor("default");
  const created = await call("sandbox_create", { files: [project] });
  assert.equal(created.isError, false, created.text);
  assert.equal(created.s.sandbox, "default");
  assert.equal(created.s.warm, true, created.text);
  assert.equal(created.s.extension, "gander-mcp.default");
  assert.equal(created.s.copied.files, 2);
  const seen = await run("cat project/Makefile && echo made > mark");
  assert.equal(seen.s.exit_code, 0, seen.text);
  assert.match(seen.s.stdout, /hello: hello.c/);  // copied in after it started, and seen
  await spareFor("fork-1");
  const fork = await call("sandbox_fork", {});
  assert.equal(fork.isError, false, fork.text);
  assert.equal(fork.s.sandbox, "fork-1");
  assert.equal(fork.s.warm, true, fork.text);
  assert.equal(fork.s.forked_from, "default");
  const inFork = await run("cat mark && echo fork > mark", "fork-1");
  assert.match(inFork.s.stdout, /made/);
  const inParent = await run("cat mark");
  assert.match(inParent.s.stdout, /made/);
  await call("sandbox_kill", { sandbox: "fork-1" });
});

test("python_run keeps its state between calls", async () => {
  const first = await call("python_run", { code: "import math\nx = 41" });
  assert.equal(first.isError, false, first.text);
  const second = await call("python_run", { code: "print('pi', round(math.pi, 2)); x + 1" });
  assert.equal(second.isError, false, second.text);
  assert.equal(second.s.value, "42");
  assert.match(second.s.stdout, /pi 3.14/);
  assert.equal(second.s.fresh_interpreter, false);
});

test("file_write then file_read; paths out of the workspace are refused", async () => {
  const w = await call("file_write", { path: "notes/a.txt", content: "line one\n" });
  assert.equal(w.isError, false, w.text);
  const r = await call("file_read", { path: "notes/a.txt" });
  assert.equal(r.text, "line one\n");
  const list = await call("file_list", { path: "notes" });
  assert.deepEqual(list.s.entries.map((e) => e.name), ["a.txt"]);
  for (const bad of ["../../etc/passwd", "/etc/passwd", "notes/../../x"]) {
    const refused = await call("file_read", { path: bad });
    assert.equal(refused.isError, true, bad);
  }
  // A symlink planted by code in the sandbox does not lead the file tools out.
  await run("ln -s /etc/passwd link && ln -s .. up");
  for (const bad of ["link", "up/ws/link"]) {
    const refused = await call("file_read", { path: bad });
    assert.equal(refused.isError, true, bad + ": " + refused.text);
  }
  // A FIFO planted there is refused at once, not waited on (the server would hang for all).
  await run("mkfifo fifo");
  const fifo = await call("file_write", { path: "fifo", content: "x" });
  assert.equal(fifo.isError, true, fifo.text);
  assert.equal((await call("sandbox_list")).isError, false);
});

test("binary files cross in base64 both ways", async () => {
  const bytes = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 0xff, 0xfe, 0x80, 10]);
  const w = await call("file_write", { path: "bin/blob", content: bytes.toString("base64"),
                                       encoding: "base64" });
  assert.equal(w.isError, false, w.text);
  assert.equal(w.s.bytes_written, bytes.length);
  const sum = await run("od -An -tx1 bin/blob | tr -d ' \\n'");
  assert.equal(sum.s.stdout.trim(), bytes.toString("hex"));
  const r = await call("file_read", { path: "bin/blob" });
  assert.equal(r.s.encoding, "base64", "not text: it comes base64'd without being asked");
  assert.deepEqual(Buffer.from(r.s.content, "base64"), bytes);
  const bad = await call("file_write", { path: "x", content: "not base64!", encoding: "base64" });
  assert.equal(bad.isError, true);
});

test("output is cut and the cut is said", async () => {
  const r = await call("command_run", { cmd: "head -c 100000 /dev/zero | tr '\\0' x",
                                        max_output_bytes: 1000 });
  assert.equal(r.s.stdout_bytes, 100000);
  assert.equal(r.s.stdout_cut, 99000);
  assert.match(r.text, /99000 of 100000 bytes cut/);
});

test("a fork is changed; the original stays as it was", async () => {
  const fork = await call("sandbox_fork", { sandbox: "proj", name: "proj-try" });
  assert.equal(fork.isError, false, fork.text);
  assert.equal(fork.s.forked_from, "proj");
  const changed = await run("cd project && echo risky > hello.c && ls", "proj-try");
  assert.match(changed.s.stdout, /hello/);  // the build output came with the fork
  const original = await run("cat project/hello.c", "proj");
  assert.match(original.s.stdout, /hello from the sandbox/);
  await call("sandbox_kill", { sandbox: "proj-try" });
});

test("export copies a result to the configured directory only", async () => {
  const e = await call("sandbox_export", { sandbox: "proj", path: "project/hello" });
  assert.equal(e.isError, false, e.text);
  const out = path.join(exportDir, "proj", "hello");
  assert.ok(fs.existsSync(out));
  assert.ok(fs.statSync(out).mode & 0o100, "the exported program keeps its exec bit");
  const refused = await call("sandbox_export", { sandbox: "proj", path: "../.." });
  assert.equal(refused.isError, true);
});

test("escape attempts through command_run fail", async () => {
  const key = await run(`cat ${home}/.ssh/id_rsa ~/.ssh/id_rsa; cat /proc/1/root${home}/.ssh/id_rsa`);
  assert.doesNotMatch(key.s.stdout, /PLANTED-HOST-KEY/);
  const outside = path.join(root, "escaped");
  await run(`echo x > ${outside}; echo x > /tmp/../${outside}; touch ${project}/escaped`);
  assert.ok(!fs.existsSync(outside));
  assert.ok(!fs.existsSync(path.join(project, "escaped")));
  const net = await call("python_run", { code: [
    "import socket",
    "try:",
    "    socket.create_connection(('1.1.1.1', 80), timeout=5); r = 'connected'",
    "except OSError as e:",
    "    r = 'refused'",
    "r"].join("\n") });
  assert.equal(net.s.value, "'refused'", net.text);
  const ptrace = await call("python_run", { code: [
    "import ctypes, os",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "libc.ptrace(16, os.getppid(), 0, 0)"].join("\n") });  // PTRACE_ATTACH to the executor
  assert.equal(ptrace.s.value, "-1", ptrace.text);
});

test("a TTL runs out", async () => {
  const short = await call("sandbox_create", { name: "short", ttl: 1 });
  assert.equal(short.isError, false, short.text);
  // Wait on the event (the sandbox listed as ended), not a fixed sleep.
  for (;;) {
    const list = await call("sandbox_list");
    if (list.s.ended?.short) {
      assert.match(list.s.ended.short, /TTL/);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const after = await run("true", "short");
  assert.equal(after.isError, true);
  assert.match(after.text, /TTL/);
});

// Waits for a file the sandbox writes (through its workspace, seen from the host): the
// command that writes it is running.
async function appears(file) {
  while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 50));
}

// Runs until killed: a call in flight for as long as the test wants.
const FOREVER = "echo up > started; while :; do sleep 0.1; done";

test("a long command_run holds up neither another sandbox nor sandbox_list; kill answers it",
     async () => {
  const long = await call("sandbox_create", { name: "long" });
  assert.equal(long.isError, false, long.text);
  assert.equal((await call("sandbox_create", { name: "other" })).isError, false);
  const running = call("command_run", { sandbox: "long", cmd: FOREVER, timeout: 3000 });
  await appears(path.join(long.s.workspace, "started"));
  const quick = await run("echo quick", "other");
  assert.equal(quick.isError, false, quick.text);
  assert.equal(quick.s.stdout, "quick\n");
  const list = await call("sandbox_list");
  assert.ok(list.s.sandboxes.some((s) => s.sandbox === "long"), list.text);
  // A second call to the same sandbox waits its turn behind the running one.
  const queued = run("echo second > second", "long");
  const killed = await call("sandbox_kill", { sandbox: "long" });
  assert.equal(killed.isError, false, killed.text);
  const answered = await running;
  assert.equal(answered.isError, true, answered.text);
  assert.match(answered.text, /ended during this call \(killed by sandbox_kill\)/);
  const after = await queued;
  assert.equal(after.isError, true, after.text);
  assert.match(after.text, /killed by sandbox_kill/);
  assert.ok(!fs.existsSync(long.s.workspace), "its workspace is gone");
  assert.deepEqual(processesOf(path.dirname(long.s.workspace)), []);
  await call("sandbox_kill", { sandbox: "other" });
});

test("a cancelled command_run is stopped; the sandbox goes on", async () => {
  const ws = (await call("sandbox_list")).s.sandboxes.find((s) => s.sandbox === "proj").workspace;
  fs.rmSync(path.join(ws, "started"), { force: true });
  const abort = new AbortController();
  const running = client.callTool(
    { name: "command_run", arguments: { sandbox: "proj", cmd: FOREVER, timeout: 3000 } },
    undefined, { signal: abort.signal, timeout: 3000000 });
  await appears(path.join(ws, "started"));
  abort.abort("the test cancels it");  // notifications/cancelled
  await assert.rejects(running);
  // Were it still running, this call would wait behind it (one call at a time per sandbox).
  const next = await run("cat project/hello.c", "proj");
  assert.equal(next.isError, false, next.text);
  assert.match(next.s.stdout, /hello from the sandbox/);
});

test("calls to one sandbox sent together run in the order they were sent", async () => {
  const calls = [];
  for (let i = 1; i <= 4; i++) calls.push(run(`echo ${i} >> order.log`, "proj"));
  calls.push(call("file_read", { sandbox: "proj", path: "order.log" }));
  const answers = await Promise.all(calls);
  for (const a of answers) assert.equal(a.isError, false, a.text);
  assert.equal(answers[4].text, "1\n2\n3\n4\n");
});

function processesOf(dir) {
  const found = [];
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (cmd.includes(dir) || cwd.startsWith(dir)) found.push(`${pid}: ${cmd}`);
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

test("the end of the session, a call in flight, leaves no process and no file", async () => {
  const pid = transport.pid;
  const server = transport._process;
  const exited = new Promise((r) => server.once("exit", (code, signal) => r({ code, signal })));
  const last = await call("sandbox_create", { name: "last" });
  const inFlight = call("command_run", { sandbox: "last", cmd: FOREVER, timeout: 3000 })
    .catch((e) => ({ isError: true, text: String(e) }));
  await appears(path.join(last.s.workspace, "started"));
  assert.ok(processesOf(tmp).length > 0, "sandboxes run before the end");
  server.stdin.end();  // stdin EOF, and nothing else: the server ends the session itself
  assert.deepEqual(await exited, { code: 0, signal: null }, stderr);
  assert.equal((await inFlight).isError, true);
  await client.close();
  for (;;) {
    let alive = true;
    try { process.kill(pid, 0); } catch { alive = false; }
    if (!alive && processesOf(tmp).length === 0 && fs.readdirSync(tmp).length === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(processesOf(tmp), []);
  assert.deepEqual(fs.readdirSync(tmp), []);
});
