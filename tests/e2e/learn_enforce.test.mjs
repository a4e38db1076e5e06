// Learn then enforce, on the real servers of the corpus (server-filesystem, server-memory,
// server-everything), driven by the MCP client SDK:
//   1. two learning runs (`gander run --mode learn`) of the server's exchange, in workspace A;
//   2. `gander policy suggest` (no --workspace: the runs' own, recorded in the audit log) and
//      `--format oci-seccomp` from the same log;
//   3. the exchange enforced under the suggestion in another workspace B gives the same
//      answers, and, with the OCI profile loaded by libseccomp (oci_seccomp_exec), bare too;
//   4. "smaller than default": the suggestion's `syscalls.allow` (enforced by gander's own
//      filter in step 3) and the OCI profile allow fewer syscalls than gander's default filter
//      (every native syscall but the floor), the suggestion adds no network, and only the
//      grants that were used (filesystem: one data directory, not the host's files learn mode
//      showed it);
//   5. a changed behaviour (a new directory read, a new host contacted, a new file read) makes
//      `gander policy suggest --check SUGGESTED` fail and name it.
//
//   GANDER_BIN=... OCI_SECCOMP_EXEC=... node --test learn_enforce.test.mjs
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const GANDER = process.env.GANDER_BIN;
const LOADER = process.env.OCI_SECCOMP_EXEC;
const pkg = (name) => path.join(here, "node_modules", "@modelcontextprotocol", name);
const entry = (name) => {
  const p = JSON.parse(fs.readFileSync(path.join(pkg(name), "package.json"), "utf8"));
  const bin = typeof p.bin === "string" ? p.bin : Object.values(p.bin)[0];
  return path.join(pkg(name), bin);
};
const NODE = fs.realpathSync(process.execPath);

// Outside /tmp: the default profile's /tmp is a private tmpfs, and the filesystem server's data
// directory must be a real outside path.
const scratchRoot = process.env.LEARN_SCRATCH || os.tmpdir();

function gander(args, { ok = [0] } = {}) {
  const r = spawnSync(GANDER, args, { encoding: "utf8" });
  assert.ok(ok.includes(r.status), `gander ${args.join(" ")} -> ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r;
}

async function connect({ argv, env, cwd }) {
  const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env, cwd, stderr: "pipe" });
  const stderr = [];
  transport.stderr?.on("data", (d) => stderr.push(d.toString()));
  const client = new Client({ name: "gander-learn-e2e", version: "0.1.0" });
  const protocolErrors = [];
  client.onerror = (e) => protocolErrors.push(String(e?.message ?? e));
  try {
    await client.connect(transport, { timeout: 60_000 });
  } catch (e) {
    await new Promise((r) => setTimeout(r, 200));
    throw new Error(`connect failed: ${argv.join(" ")}: ${e.message}\n--- stderr ---\n${stderr.join("")}`);
  }
  return { client, stderr, protocolErrors, argv };
}

async function call(s, name, args) {
  try {
    return await s.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  } catch (e) {
    return { jsonrpcError: { code: e.code, message: e.message } };
  }
}

const text = (r) =>
  r.jsonrpcError ? `JSON-RPC error ${r.jsonrpcError.code}` : (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const failed = (r) => Boolean(r.jsonrpcError) || r.isError === true;

// The three servers: how to start them in a workspace, the exchange, the drift.
function servers(world) {
  return {
    filesystem: {
      argv: (ws, extra = []) => [NODE, entry("server-filesystem"), ws, world.data, ...extra],
      // Learned under plain `--mode learn`, which shows the host's files (the whole scratch
      // root readable); the suggestion must keep only the data directory the server read.
      base: "default",
      async exchange(s, ws) {
        const out = {};
        out.tools = (await s.client.listTools()).tools.map((t) => t.name);
        out.write = await call(s, "write_file", { path: path.join(ws, "notes.txt"), content: "learned\n" });
        out.read = await call(s, "read_text_file", { path: path.join(ws, "notes.txt") });
        out.data = await call(s, "read_text_file", { path: path.join(world.data, "reference.txt") });
        out.list = await call(s, "list_directory", { path: world.data });
        return out;
      },
      // A new directory in the server's command line, and a read of it.
      drift: {
        argv: (ws) => [NODE, entry("server-filesystem"), ws, world.data, world.data2],
        async exchange(s) {
          await call(s, "read_text_file", { path: path.join(world.data2, "new.txt") });
        },
        expect: new RegExp(`not covered: read ${world.data2}`),
      },
    },
    memory: {
      argv: (ws) => [NODE, entry("server-memory")],
      env: (ws) => ({ MEMORY_FILE_PATH: path.join(ws, "memory.jsonl") }),
      learnProfile: "memory",
      base: "memory",
      async exchange(s) {
        const out = {};
        out.tools = (await s.client.listTools()).tools.map((t) => t.name);
        out.create = await call(s, "create_entities", {
          entities: [{ name: "gander", entityType: "project", observations: ["sandboxes MCP servers"] }],
        });
        out.read = await call(s, "read_graph", {});
        out.search = await call(s, "search_nodes", { query: "sandbox" });
        return out;
      },
      // The same server with a dependency that phones home (a TEST-NET-3 address, port 8443).
      drift: {
        argv: (ws) => [NODE, `--import=${inWorkspace(world.phoneHome, ws)}`, entry("server-memory")],
        async exchange(s) {
          await call(s, "read_graph", {});
          await new Promise((r) => setTimeout(r, 300));
        },
        expect: /not covered: connect 203\.0\.113\.7:8443/,
        // ... and the syscalls its socket needs, outside the learned allowlist.
        alsoExpect: /not covered: syscall (socket|connect) /,
      },
    },
    everything: {
      argv: () => [NODE, entry("server-everything"), "stdio"],
      base: "default",
      async exchange(s) {
        const out = {};
        out.tools = (await s.client.listTools()).tools.map((t) => t.name);
        const names = out.tools;
        out.echo = await call(s, "echo", { message: "learned" });
        out.sum = await call(s, names.find((n) => n === "get-sum" || n === "add"), { a: 19, b: 23 });
        return out;
      },
      // The same server reading a file it never read before (a new dependency's config).
      drift: {
        argv: (ws) => [NODE, `--import=${inWorkspace(world.readsMore, ws)}`, entry("server-everything"), "stdio"],
        async exchange(s) {
          await call(s, "echo", { message: "drift" });
        },
        expect: new RegExp(`not covered: read ${world.data2}/new.txt`),
      },
    },
  };
}

// The drift fixtures are loaded with node's --import=FILE from the workspace (readable under
// every policy; `--import=` keeps gander's command resolution on the server's own script).
function inWorkspace(file, ws) {
  const to = path.join(ws, path.basename(file));
  fs.copyFileSync(file, to);
  return to;
}

function makeWorld() {
  fs.mkdirSync(scratchRoot, { recursive: true });
  const root = fs.realpathSync(fs.mkdtempSync(path.join(scratchRoot, "gander-learn-")));
  const w = {
    root,
    home: path.join(root, "home"),
    data: path.join(root, "data"),
    data2: path.join(root, "data2"),
    phoneHome: path.join(root, "phone-home.mjs"),
    readsMore: path.join(root, "reads-more.mjs"),
  };
  for (const d of [w.home, w.data, w.data2]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(w.data, "reference.txt"), "reference data\n");
  fs.writeFileSync(path.join(w.data2, "new.txt"), "new data\n");
  fs.writeFileSync(
    w.phoneHome,
    `import net from "node:net";\nconst s = net.connect({ host: "203.0.113.7", port: 8443 });\ns.on("error", () => {});\n`,
  );
  fs.writeFileSync(w.readsMore, `import fs from "node:fs";\ntry { fs.readFileSync(${JSON.stringify(path.join(w.data2, "new.txt"))}); } catch {}\n`);
  return w;
}

function env(world, extra = {}) {
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: world.home, LANG: "C.UTF-8", ...extra };
}

// One session: through gander (`ganderArgs`) or bare (`wrap`: a command prefix, e.g. the loader).
async function session(server, world, { ws, ganderArgs, wrap = [], argv, exchange }) {
  const cmd = argv ?? server.argv(ws);
  const full = ganderArgs ? [GANDER, "run", "--collector", "off", "--workspace", ws, ...ganderArgs, "--", ...cmd] : [...wrap, ...cmd];
  const s = await connect({ argv: full, env: env(world, server.env?.(ws) ?? {}), cwd: ws });
  try {
    const out = await (exchange ?? server.exchange)(s, ws);
    // Answers name the workspace: compare them without it.
    return { out: out && JSON.parse(JSON.stringify(out).replaceAll(ws, "<WS>")), s };
  } finally {
    await s.client.close();
  }
}

// Syscalls allowed by an OCI profile without conditions, and the default filter's count.
function allowedSyscalls(profile) {
  return new Set(profile.syscalls.filter((s) => s.action === "SCMP_ACT_ALLOW").flatMap((s) => s.names));
}

describe("learn then enforce on real servers", () => {
  let world;
  before(() => {
    assert.ok(GANDER && fs.existsSync(GANDER), "GANDER_BIN must name the gander binary");
    world = makeWorld();
  });
  after(() => process.env.LEARN_KEEP || fs.rmSync(world.root, { recursive: true, force: true }));

  for (const name of ["filesystem", "memory", "everything"]) {
    test(`server-${name}`, async (t) => {
      const server = servers(world)[name];
      const dir = path.join(world.root, name);
      const wsLearn = path.join(dir, "ws-learn");
      const wsEnforce = path.join(dir, "ws-enforce");
      for (const d of [wsLearn, wsEnforce]) fs.mkdirSync(d, { recursive: true });
      const log = path.join(dir, "learn.jsonl");
      const learnArgs = ["--mode", "learn", "--name", `learn-${name}`, "--audit-log", log];
      if (server.learnProfile) learnArgs.push("--profile", server.learnProfile);

      // 1. Two learning runs (they accumulate in the one log).
      let learned;
      for (let i = 0; i < 2; i++) {
        for (const e of fs.readdirSync(wsLearn)) fs.rmSync(path.join(wsLearn, e), { recursive: true });
        learned = (await session(server, world, { ws: wsLearn, ganderArgs: learnArgs })).out;
      }
      for (const [k, v] of Object.entries(learned)) {
        if (k !== "tools") assert.ok(!failed(v), `${k} failed while learning: ${text(v)}`);
      }

      // 2. The suggestion, from another directory and without --workspace.
      const suggested = path.join(dir, "suggested.yaml");
      const r = spawnSync(GANDER, ["policy", "suggest", `learn-${name}`, "--from", log, "--base", server.base], {
        encoding: "utf8",
        cwd: world.root,
      });
      assert.equal(r.status, 0, r.stderr);
      fs.writeFileSync(suggested, r.stdout);
      t.diagnostic(`suggested policy:\n${r.stdout}`);
      assert.match(r.stdout, /\(2 learning runs\)/);
      gander(["policy", "check", suggested]);
      assert.ok(!r.stdout.includes(wsLearn), "a workspace path was written literally, not as ${WORKSPACE}");
      assert.ok(!/^network:/m.test(r.stdout), "no network was used: none may be suggested");
      const diff = gander(["policy", "diff", server.base, suggested], { ok: [0, 1] }).stdout;
      // The syscall allowlist: the census, far smaller than what gander allows without one.
      const listed = /syscalls\.allow lists (\d+) syscalls; gander's default filter allows (\d+)/.exec(r.stderr);
      assert.ok(listed, `no syscalls.allow summary from suggest: ${r.stderr}`);
      const [allowCount, filterCount] = [Number(listed[1]), Number(listed[2])];
      assert.match(r.stdout, /^syscalls:\n(  #.*\n)*  allow:\n/m);
      const allowLines = diff.split("\n").filter((l) => /^\+ syscalls\.allow [a-z]/.test(l) && !l.includes("("));
      assert.equal(allowLines.length, allowCount, "policy diff lists every allowed syscall");
      assert.ok(allowCount < filterCount / 2, `syscalls.allow: ${allowCount} of ${filterCount}`);
      t.diagnostic(`syscalls: ${allowCount} in the suggestion's syscalls.allow, ${filterCount} allowed by default`);
      const added = diff.split("\n").filter((l) => l.startsWith("+ ") && !l.startsWith("+ syscalls.allow"));
      assert.ok(!diff.split("\n").some((l) => l.startsWith("- ")), `the suggestion removes rules?\n${diff}`);
      t.diagnostic(`rules added to ${server.base}: ${added.length}\n${added.join("\n")}`);
      // Besides node's own probes of /sys (cgroup memory limit, CPU list; absent under default,
      // node does without them), only what the server used. server-filesystem learned with the
      // host's files visible (learn mode) and keeps only the data directory it read.
      const expected = name === "filesystem" ? [`+ filesystem.read ${world.data}`] : [];
      assert.deepEqual(added.filter((l) => !l.startsWith("+ filesystem.read /sys/")), expected);

      // The OCI profile, and how much narrower it is than the default filter.
      const oci = spawnSync(GANDER, ["policy", "suggest", `learn-${name}`, "--from", log, "--format", "oci-seccomp"], {
        encoding: "utf8",
      });
      assert.equal(oci.status, 0, oci.stderr);
      const profile = JSON.parse(oci.stdout);
      const profilePath = path.join(dir, "profile.json");
      fs.writeFileSync(profilePath, oci.stdout);
      const m = /(\d+) syscalls allowed; gander's default filter allows (\d+)/.exec(oci.stderr);
      assert.ok(m, `no summary from --format oci-seccomp: ${oci.stderr}`);
      const [learnedCount, defaultCount] = [Number(m[1]), Number(m[2])];
      assert.equal(learnedCount, allowedSyscalls(profile).size);
      assert.ok(learnedCount < defaultCount / 2, `${learnedCount} of ${defaultCount}`);
      t.diagnostic(`syscalls: ${learnedCount} allowed by the learned OCI profile, ${defaultCount} by the default filter`);

      // 3. Enforced under the suggestion (its syscall allowlist included), in another
      //    workspace: the same answers.
      assert.match(gander(["policy", "show", suggested]).stdout, /^syscalls:\n  allow: \[/m);
      const enforced = await session(server, world, { ws: wsEnforce, ganderArgs: ["--name", `enforce-${name}`, "--policy", suggested] });
      assert.deepEqual(enforced.s.protocolErrors, []);
      assert.deepEqual(enforced.out, learned, `answers differ under the suggestion\n${enforced.s.stderr.join("")}`);
      if (LOADER) {
        for (const e of fs.readdirSync(wsEnforce)) fs.rmSync(path.join(wsEnforce, e), { recursive: true });
        // The server's stdio as pipes, as under gander (and runc): node's child_process gives
        // socketpairs, on which node calls getsockname, a syscall it never made while learning.
        const errFile = path.join(dir, "oci.stderr");
        const wrap = ["/bin/sh", "-c", 'cat | "$@" 2>>"$0" | cat', errFile, LOADER, profilePath];
        const bare = await session(server, world, { ws: wsEnforce, wrap }).catch((e) => {
          throw new Error(`${e.message}\n--- server stderr ---\n${fs.readFileSync(errFile, "utf8")}`);
        });
        assert.deepEqual(bare.out, learned, `answers differ under the OCI profile\n${fs.readFileSync(errFile, "utf8")}`);
      } else {
        t.diagnostic("OCI_SECCOMP_EXEC not set: the OCI profile is not loaded");
      }
      gander(["policy", "suggest", "--check", suggested, `learn-${name}`, "--from", log]);

      // 5. Drift: a changed behaviour, learned, is not covered by the suggestion.
      const driftLog = path.join(dir, "drift.jsonl");
      await session(server, world, {
        ws: wsLearn,
        ganderArgs: [...learnArgs.slice(0, 4), "--audit-log", driftLog, ...learnArgs.slice(6)],
        argv: server.drift.argv(wsLearn),
        exchange: server.drift.exchange,
      });
      const check = gander(["policy", "suggest", "--check", suggested, `learn-${name}`, "--from", driftLog], { ok: [1] });
      assert.match(check.stdout, server.drift.expect);
      if (server.drift.alsoExpect) assert.match(check.stdout, server.drift.alsoExpect);
      t.diagnostic(`drift: ${check.stdout.split("\n").filter((l) => l.startsWith("not covered")).join("; ")}`);
    });
  }
});
