// `gander mcp` with a real collector (started on demand, in a private HOME and XDG dirs): each
// sandbox is an extension of its own in `gander status` and the Prometheus metrics, and the
// tools the server runs on the host (sandbox_create, _fork, _export, _renew, _kill) are tool
// calls of that sandbox's extension in the metrics and its audit log, a refused one as a
// failure. The collector exits when its state directory goes (after()).
//
//   GANDER_BIN=build/launcher/gander node --test tests/mcp/collector.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";

const GANDER = process.env.GANDER_BIN;
let root, env, client, exportDir;

async function call(name, args = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  return { ...r, s: r.structuredContent || {}, text: r.content?.[0]?.text ?? "" };
}

before(async () => {
  assert.ok(GANDER, "GANDER_BIN must name the gander binary");
  root = fs.mkdtempSync(path.join(os.tmpdir(), "gander-mcp-collector-"));
  exportDir = path.join(root, "export");
  fs.mkdirSync(exportDir);
  fs.mkdirSync(path.join(root, "run"), { mode: 0o700 });
  env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root, LANG: "C.UTF-8",
          XDG_RUNTIME_DIR: path.join(root, "run"), XDG_STATE_HOME: path.join(root, "state"),
          XDG_CONFIG_HOME: path.join(root, "config"), TMPDIR: root };
  const transport = new StdioClientTransport({
    command: GANDER, args: ["mcp", "--export-dir", exportDir], cwd: root, env, stderr: "pipe" });
  client = new Client({ name: "gander-mcp-collector-test", version: "1.0.0" });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  // The collector notices its state directory gone and exits.
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function metrics() {
  const address = fs.readFileSync(path.join(root, "run", "gander", "collector.sock.metrics"), "utf8").trim();
  return execFileSync("curl", ["-sf", `http://${address}/metrics`], { encoding: "utf8" });
}

function toolCalls(text, extension, tool, outcome) {
  const line = text.split("\n").find((l) => l.startsWith(
    `gander_tool_calls_total{extension="${extension}",tool="${tool}",outcome="${outcome}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

test("each sandbox shows in gander status and the metrics; host-side tools are its tool calls",
  async () => {
    for (const name of ["alpha", "beta"]) {
      const c = await call("sandbox_create", { name });
      assert.equal(c.isError, false, c.text);
      assert.equal(c.s.extension, `gander-mcp.${name}`);
    }
    assert.equal((await call("command_run", { sandbox: "alpha", cmd: "echo hi > out.txt" })).isError, false);
    assert.equal((await call("sandbox_export", { sandbox: "alpha", path: "out.txt" })).isError, false);
    assert.equal((await call("sandbox_export", { sandbox: "alpha", path: "missing" })).isError, true);
    assert.equal((await call("sandbox_renew", { sandbox: "alpha", ttl: "2h" })).isError, false);
    const fork = await call("sandbox_fork", { sandbox: "alpha", name: "alpha-try" });
    assert.equal(fork.isError, false, fork.text);
    assert.equal((await call("sandbox_kill", { sandbox: "beta" })).isError, false);

    // The events travel asynchronously (sandbox -> gander run -> collector): wait on them.
    const want = [["alpha", "sandbox_create", "ok"], ["alpha", "command_run", "ok"],
                  ["alpha", "sandbox_export", "ok"], ["alpha", "sandbox_export", "tool_error"],
                  ["alpha", "sandbox_renew", "ok"], ["alpha", "sandbox_fork", "ok"],
                  ["alpha-try", "sandbox_fork", "ok"], ["beta", "sandbox_create", "ok"],
                  ["beta", "sandbox_kill", "ok"]];
    let text = "";
    for (;;) {
      try { text = metrics(); } catch { text = ""; }
      const missing = want.filter(([s, t, o]) => toolCalls(text, `gander-mcp.${s}`, t, o) !== 1);
      if (missing.length === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    if (promtool.error) {
      console.log("GANDER-SKIP: promtool is not installed: the exposition format is not checked");
      assert.notEqual(process.env.CI, "true", "CI=true: promtool must be installed");
    } else {
      // promtool's lint notes (counters' names, help text) are not errors of the format.
      assert.ok(!/error/i.test(promtool.stderr), promtool.stderr);
    }

    const status = execFileSync(GANDER, ["status"], { env, encoding: "utf8" });
    assert.match(status, /^gander-mcp\.alpha\s+running/m, status);
    assert.match(status, /^gander-mcp\.alpha-try\s+running/m, status);
    assert.match(status, /^gander-mcp\.beta\s+stopped/m, status);

    // The audit log of each sandbox's extension holds its host-side tools, in order. The
    // collector counts an event at once but writes audit lines at its next flush: wait for
    // as many lines as the metrics counted, then check them.
    const audit = (name) => fs.readFileSync(
      path.join(root, "state", "gander", "audit", `gander-mcp.${name}.jsonl`), "utf8")
      .split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.kind === "tool")
      .map((e) => `${e.tool.name}:${e.tool.outcome}`);
    const expected = {
      alpha: ["sandbox_create:ok", "command_run:ok", "sandbox_export:ok",
              "sandbox_export:tool_error", "sandbox_renew:ok", "sandbox_fork:ok"],
      beta: ["sandbox_create:ok", "sandbox_kill:ok"],
    };
    for (const [name, lines] of Object.entries(expected)) {
      while (audit(name).length < lines.length) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(audit(name), lines);
    }
  });
