// End-to-end: real MCP servers from npm, driven by the real MCP client (the SDK's Client over
// StdioClientTransport), once directly and once through `gander run`. The answers must match,
// except where the sandbox is meant to make a difference: a planted file in $HOME and a planted
// OPENAI_API_KEY are visible without gander and invisible through it.
//
//   GANDER_BIN=/path/to/gander node --test --test-concurrency=1 e2e.test.mjs
//
// The servers' own stderr is collected and printed when a test fails.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, "node_modules", ".bin", name);
const GANDER = process.env.GANDER_BIN;
// The same suite runs against each backend: GANDER_BACKEND=gvisor adds `--backend gvisor`.
const BACKEND = process.env.GANDER_BACKEND || "native";
const PLANTED_KEY = `sk-gander-e2e-${Math.random().toString(16).slice(2)}${Date.now()}`;
const PLANTED_HOME_TEXT = "planted in $HOME: must not be readable through gander\n";

// --- fixture --------------------------------------------------------------------------------

// Two layouts: the workspace beside $HOME, and the usual one for Goose users, a project
// directory inside $HOME (the sandbox's $HOME is an empty tmpfs, the workspace inside it is
// bound from the host).
function makeWorld(layout) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `gander-e2e-${layout}-`));
  const home = path.join(root, "home");
  const ws = layout === "nested" ? path.join(home, "project") : path.join(root, "ws");
  fs.mkdirSync(ws, { recursive: true });
  fs.mkdirSync(path.join(home, ".ssh"), { recursive: true });
  fs.writeFileSync(path.join(home, "secret.txt"), PLANTED_HOME_TEXT);
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "planted key\n", { mode: 0o600 });
  return { root, home, ws };
}

function resetWorkspace(ws) {
  for (const e of fs.readdirSync(ws)) fs.rmSync(path.join(ws, e), { recursive: true, force: true });
}

function env(world) {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: world.home,
    LANG: "C.UTF-8",
    OPENAI_API_KEY: PLANTED_KEY,
  };
}

// Connects a Client to `command args` (directly, or wrapped in `gander run`). Returns the client
// plus the server's collected stderr.
async function connect({ command, args, world, viaGander, name, profile = "default", extraEnv = {} }) {
  let cmd = command;
  let argv = args;
  if (viaGander) {
    assert.ok(GANDER, "GANDER_BIN must name the gander binary");
    assert.ok(fs.existsSync(GANDER), `GANDER_BIN=${GANDER} does not exist`);
    cmd = GANDER;
    argv = ["run", "--collector", "off", "--backend", BACKEND, "--profile", profile, "--name", name, "--workspace", world.ws, "--", command, ...args];
  }
  const transport = new StdioClientTransport({
    command: cmd,
    args: argv,
    env: { ...env(world), ...extraEnv },
    cwd: world.ws,
    stderr: "pipe",
  });
  const stderr = [];
  transport.stderr?.on("data", (d) => stderr.push(d.toString()));
  const client = new Client({ name: "gander-e2e", version: "0.1.0" });
  // Anything on stdout that is not a JSON-RPC message (e.g. a diagnostic gander printed to the
  // wrong stream) shows up here.
  const protocolErrors = [];
  client.onerror = (e) => protocolErrors.push(String(e?.message ?? e));
  const started = Date.now();
  try {
    await client.connect(transport, { timeout: 30_000 });
  } catch (e) {
    await new Promise((r) => setTimeout(r, 200));
    throw new Error(`connect failed: ${cmd} ${argv.join(" ")}: ${e.message}\n--- stderr ---\n${stderr.join("")}`);
  }
  return {
    client,
    transport,
    stderr,
    protocolErrors,
    commandLine: `${cmd} ${argv.join(" ")}`,
    startSeconds: (Date.now() - started) / 1000,
  };
}

// tools/call; a JSON-RPC error becomes {jsonrpcError} so both failure shapes can be compared.
async function call(session, name, args) {
  try {
    return await session.client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
  } catch (e) {
    return { jsonrpcError: { code: e.code, message: e.message } };
  }
}

function text(result) {
  if (result.jsonrpcError) return `JSON-RPC error ${result.jsonrpcError.code}: ${result.jsonrpcError.message}`;
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function failed(result) {
  return Boolean(result.jsonrpcError) || result.isError === true;
}

function diag(session) {
  return `\ncommand: ${session.commandLine}\n--- server stderr ---\n${session.stderr.join("")}`;
}

// out.diag: the command line and the server's stderr so far, read when a message needs it.
function withDiag(out, session) {
  Object.defineProperty(out, "diag", { get: () => diag(session), enumerable: false });
  return out;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Closes the client the way Goose does (stdin EOF; the SDK escalates to SIGTERM after 2 s and
// SIGKILL after 4 s) and records how long the server (or gander) took to go.
async function close(session, out) {
  if (!session) return;
  const pid = session.transport.pid;
  const started = Date.now();
  await session.client.close();
  if (out) {
    out.protocolErrors = session.protocolErrors;
    out.closeSeconds = (Date.now() - started) / 1000;
    // Give the 'close' event a moment if the SDK had to escalate.
    for (let i = 0; i < 20 && pid && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    out.aliveAfterClose = pid ? alive(pid) : false;
  }
}

// Through gander, stdin EOF alone must end everything: gander forwards it, SIGTERMs the sandbox
// about 1 s later and SIGKILLs it before 3 s, so the SDK never needs its own SIGTERM (at 2 s).
function assertClosedCleanly(t, g) {
  t.diagnostic(`through gander, close() took ${g.closeSeconds} s`);
  assert.equal(g.aliveAfterClose, false, `gander still runs after close()${g.diag}`);
  assert.ok(g.closeSeconds < 3.5, `close() took ${g.closeSeconds} s through gander${g.diag}`);
}

// --- server-filesystem ------------------------------------------------------------------------

for (const layout of ["beside", "nested"]) {
  describe(`server-filesystem (workspace ${layout} $HOME)`, () => {
    let world;
    const results = {};

    before(() => {
      world = makeWorld(layout);
    });
    after(() => {
      fs.rmSync(world.root, { recursive: true, force: true });
    });

    // The same script for both runs, from an empty workspace; returns comparable results.
    async function script(viaGander) {
      resetWorkspace(world.ws);
      const session = await connect({
        command: bin("mcp-server-filesystem"),
        args: [world.ws, world.home],
        world,
        viaGander,
        name: "e2e-filesystem",
      });
      const out = withDiag({}, session);
      try {
        out.tools = (await session.client.listTools()).tools;
        out.allowed = await call(session, "list_allowed_directories", {});
        const file = path.join(world.ws, "notes", "hello.txt");
        out.mkdir = await call(session, "create_directory", { path: path.join(world.ws, "notes") });
        out.write = await call(session, "write_file", { path: file, content: "hello from the e2e suite\nline 2\n" });
        out.read = await call(session, "read_text_file", { path: file });
        out.readHead = await call(session, "read_text_file", { path: file, head: 1 });
        out.edit = await call(session, "edit_file", {
          path: file,
          edits: [{ oldText: "line 2", newText: "line two" }],
        });
        out.readAfterEdit = await call(session, "read_file", { path: file });
        out.list = await call(session, "list_directory", { path: world.ws });
        out.listNotes = await call(session, "list_directory", { path: path.join(world.ws, "notes") });
        out.search = await call(session, "search_files", { path: world.ws, pattern: "*.txt" });
        out.hostContent = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
        out.planted = await call(session, "read_text_file", { path: path.join(world.home, "secret.txt") });
        out.plantedKey = await call(session, "read_text_file", { path: path.join(world.home, ".ssh", "id_rsa") });
        out.listHome = await call(session, "list_directory", { path: world.home });
        return out;
      } finally {
        await close(session, out);
      }
    }

    test("directly", async () => {
      results.direct = await script(false);
      const r = results.direct;
      assert.ok(r.tools.some((t) => t.name === "write_file"), "tools/list has write_file");
      for (const k of ["mkdir", "write", "read", "edit", "readAfterEdit", "list", "search"]) {
        assert.ok(!failed(r[k]), `${k} failed directly: ${text(r[k])}${r.diag}`);
      }
      assert.equal(text(r.read), "hello from the e2e suite\nline 2\n");
      assert.equal(text(r.readAfterEdit), "hello from the e2e suite\nline two\n");
      assert.match(text(r.list), /\[DIR\] notes/);
      assert.equal(r.hostContent, "hello from the e2e suite\nline two\n");
      // Control: without a sandbox the planted files are readable.
      assert.ok(!failed(r.planted), `planted file unreadable even directly: ${text(r.planted)}`);
      assert.equal(text(r.planted), PLANTED_HOME_TEXT);
      assert.ok(!failed(r.plantedKey));
      assert.match(text(r.listHome), /secret\.txt/);
    });

    test("through gander: same answers inside the workspace, no $HOME", async (t) => {
      if (!results.direct) return t.skip("the direct run failed");
      assert.ok(GANDER, "GANDER_BIN is not set: cannot run the gander half of the e2e suite");
      results.gander = await script(true);
      const d = results.direct;
      const g = results.gander;
      assert.deepEqual(g.protocolErrors, [], `non-MCP output or transport errors through gander${g.diag}`);
      assert.deepEqual(g.tools, d.tools, `tools/list differs through gander${g.diag}`);
      for (const k of ["mkdir", "write", "read", "readHead", "edit", "readAfterEdit", "list", "listNotes", "search"]) {
        assert.deepEqual(g[k], d[k], `${k} differs through gander: ${text(g[k])}${g.diag}`);
      }
      assert.equal(g.hostContent, "hello from the e2e suite\nline two\n", "the write must land in the host workspace");
      // The planted files are outside the sandbox's view: an error result or a JSON-RPC error.
      assert.ok(failed(g.planted), `the planted $HOME file was readable through gander: ${text(g.planted)}${g.diag}`);
      assert.ok(!text(g.planted).includes(PLANTED_HOME_TEXT.trim()), "planted content leaked");
      assert.ok(failed(g.plantedKey), `~/.ssh/id_rsa was readable through gander: ${text(g.plantedKey)}${g.diag}`);
      assert.ok(!/secret\.txt/.test(text(g.listHome)), `$HOME listing shows the planted file: ${text(g.listHome)}${g.diag}`);
      t.diagnostic(`through gander, reading $HOME/secret.txt -> ${text(g.planted)}`);
      assertClosedCleanly(t, g);
      t.diagnostic(`through gander, listing $HOME -> ${JSON.stringify(text(g.listHome))}`);
    });
  });
}

// --- server-everything ------------------------------------------------------------------------

describe("server-everything", () => {
  let world;
  const results = {};

  before(() => {
    world = makeWorld("beside");
  });
  after(() => {
    fs.rmSync(world.root, { recursive: true, force: true });
  });

  async function script(viaGander) {
    const session = await connect({
      command: bin("mcp-server-everything"),
      args: ["stdio"],
      world,
      viaGander,
      name: "e2e-everything",
    });
    const out = withDiag({}, session);
    try {
      out.server = session.client.getServerVersion();
      out.tools = (await session.client.listTools()).tools;
      const names = out.tools.map((t) => t.name);
      // Tool names changed across releases (echo/add/printEnv -> echo/get-sum/get-env).
      out.sumTool = names.find((n) => n === "get-sum" || n === "add");
      out.envTool = names.find((n) => n === "get-env" || n === "printEnv");
      out.echo = await call(session, "echo", { message: "hello through the sandbox" });
      out.sum = await call(session, out.sumTool, { a: 19, b: 23 });
      out.env = await call(session, out.envTool, {});
      out.unknown = await call(session, "no-such-tool", {});
      return out;
    } finally {
      await close(session, out);
    }
  }

  test("directly", async () => {
    results.direct = await script(false);
    const r = results.direct;
    assert.ok(r.sumTool, `no sum tool in ${r.tools.map((t) => t.name)}`);
    assert.ok(r.envTool, `no env tool in ${r.tools.map((t) => t.name)}`);
    assert.ok(!failed(r.echo));
    assert.match(text(r.echo), /hello through the sandbox/);
    assert.match(text(r.sum), /42/);
    // Control: the planted key is in the server's environment when nothing scrubs it.
    assert.ok(text(r.env).includes(PLANTED_KEY), `planted OPENAI_API_KEY missing from ${r.envTool} even directly`);
    assert.ok(failed(r.unknown));
  });

  test("through gander: same answers, no planted key", async (t) => {
    if (!results.direct) return t.skip("the direct run failed");
    assert.ok(GANDER, "GANDER_BIN is not set: cannot run the gander half of the e2e suite");
    results.gander = await script(true);
    const d = results.direct;
    const g = results.gander;
    assert.deepEqual(g.protocolErrors, [], `non-MCP output or transport errors through gander${g.diag}`);
    assert.deepEqual(g.server, d.server);
    assert.deepEqual(g.tools, d.tools, `tools/list differs through gander${g.diag}`);
    for (const k of ["echo", "sum", "unknown"]) {
      assert.deepEqual(g[k], d[k], `${k} differs through gander: ${text(g[k])}${g.diag}`);
    }
    assert.ok(!failed(g.env), `${g.envTool} failed through gander: ${text(g.env)}${g.diag}`);
    assert.ok(!text(g.env).includes(PLANTED_KEY), `the planted OPENAI_API_KEY reached the sandbox${g.diag}`);
    assert.ok(!text(g.env).includes("OPENAI_API_KEY"), `OPENAI_API_KEY is named in the sandbox's environment${g.diag}`);
    let names = "?";
    try {
      names = Object.keys(JSON.parse(text(g.env))).sort().join(" ");
    } catch {}
    t.diagnostic(`through gander, ${g.envTool} shows: ${names}`);
    assertClosedCleanly(t, g);
  });
});

// --- server-memory ----------------------------------------------------------------------------

// Its knowledge graph is one file: MEMORY_FILE_PATH in the workspace (the shipped `memory`
// profile passes that variable; without it the server writes into its read-only package).
describe("server-memory", () => {
  let world;
  const results = {};

  before(() => {
    world = makeWorld("beside");
  });
  after(() => {
    fs.rmSync(world.root, { recursive: true, force: true });
  });

  async function script(viaGander) {
    resetWorkspace(world.ws);
    const memoryFile = path.join(world.ws, "memory.jsonl");
    const session = await connect({
      command: bin("mcp-server-memory"),
      args: [],
      world,
      viaGander,
      name: "e2e-memory",
      profile: "memory",
      extraEnv: { MEMORY_FILE_PATH: memoryFile },
    });
    const out = withDiag({}, session);
    try {
      out.server = session.client.getServerVersion();
      out.tools = (await session.client.listTools()).tools;
      out.create = await call(session, "create_entities", {
        entities: [{ name: "gander", entityType: "project", observations: ["sandboxes MCP servers"] }],
      });
      out.observe = await call(session, "add_observations", {
        observations: [{ entityName: "gander", contents: ["runs under gVisor too"] }],
      });
      out.search = await call(session, "search_nodes", { query: "gVisor" });
      out.graph = await call(session, "read_graph", {});
      return out;
    } finally {
      await close(session, out);
      out.file = fs.existsSync(memoryFile) ? fs.readFileSync(memoryFile, "utf8") : null;
    }
  }

  test("directly", async () => {
    results.direct = await script(false);
    const r = results.direct;
    for (const k of ["create", "observe", "search", "graph"]) assert.ok(!failed(r[k]), `${k}: ${text(r[k])}`);
    assert.match(text(r.search), /runs under gVisor too/);
    assert.match(r.file ?? "", /sandboxes MCP servers/);
  });

  test(`through gander (${BACKEND}): same answers, the graph written in the workspace`, async (t) => {
    if (!results.direct) return t.skip("the direct run failed");
    assert.ok(GANDER, "GANDER_BIN is not set: cannot run the gander half of the e2e suite");
    results.gander = await script(true);
    const d = results.direct;
    const g = results.gander;
    assert.deepEqual(g.protocolErrors, [], `non-MCP output or transport errors through gander${g.diag}`);
    assert.deepEqual(g.server, d.server);
    assert.deepEqual(g.tools, d.tools, `tools/list differs through gander${g.diag}`);
    for (const k of ["create", "observe", "search", "graph"]) {
      assert.deepEqual(g[k], d[k], `${k} differs through gander: ${text(g[k])}${g.diag}`);
    }
    assert.equal(g.file, d.file, `the memory file differs through gander${g.diag}`);
    assertClosedCleanly(t, g);
  });
});
