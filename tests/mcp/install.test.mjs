// sandbox_create's `install`: the commands run with only the package registries reachable
// (here a local PEP 503 index, tests/integration/install/fixtures/make_index.py, served on
// 127.0.0.1 and named by PIP_INDEX_URL as a user's pip.conf would), then the network is
// closed: what was installed works, the index is no longer reachable, and a command that
// reaches anywhere else during the install step is refused.
//
//   GANDER_BIN=build/launcher/gander node --test tests/mcp/install.test.mjs
//   GANDER_MCP_FLAGS="--no-namespaces"
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";

const GANDER = process.env.GANDER_BIN;
const FLAGS = (process.env.GANDER_MCP_FLAGS || "").split(" ").filter(Boolean);
const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, "..", "integration", "install", "fixtures");
let root, client, indexProc, indexUrl, otherProc, otherUrl;

// python3 -m http.server on a free port of 127.0.0.1 serving `dir`: [process, port].
async function serve(dir) {
  const proc = spawn("python3", ["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                                 dir, "0"], { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve(Number(m[1]));
    });
    proc.once("exit", (code) => reject(new Error(`http.server exited (${code})`)));
  });
  return [proc, port];
}

const venv = spawnSync("python3", ["-c", "import ensurepip, venv"]);
if (venv.status !== 0) {
  if (process.env.CI === "true") throw new Error("CI=true: python3-venv must be installed");
  console.log("GANDER-SKIP: python3 with venv and ensurepip is missing (python3-venv)");
  process.exit(77);
}

async function call(name, args = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
  return { ...r, s: r.structuredContent || {}, text: r.content?.[0]?.text ?? "" };
}

before(async () => {
  assert.ok(GANDER, "GANDER_BIN must name the gander binary");
  root = fs.mkdtempSync(path.join(os.tmpdir(), "gander-mcp-install-"));
  fs.chmodSync(root, 0o755);
  const index = path.join(root, "index");
  execFileSync("python3", [path.join(fixtures, "make_index.py"), index, "--mcp-version", "1.0.0"],
               { stdio: ["ignore", "ignore", "inherit"] });
  let port;
  [indexProc, port] = await serve(index);
  let otherPort;
  [otherProc, otherPort] = await serve(fixtures);  // answers, but is not a registry
  otherUrl = `http://127.0.0.1:${otherPort}/`;
  indexUrl = `http://127.0.0.1:${port}/simple/`;
  fs.mkdirSync(path.join(root, "tmp"));
  const transport = new StdioClientTransport({
    command: GANDER, args: ["mcp", "--collector", "off", ...FLAGS], cwd: root, stderr: "inherit",
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root, TMPDIR: path.join(root, "tmp"),
           LANG: "C.UTF-8", PIP_INDEX_URL: indexUrl },
  });
  client = new Client({ name: "gander-mcp-install-test", version: "1.0.0" });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  indexProc?.kill();
  otherProc?.kill();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const reach = (url) => `.venv/bin/python -c "import urllib.request as u; u.urlopen('${url}', timeout=10); print('reached')"`;

test("install from the registry only, then no network", async () => {
  const created = await call("sandbox_create", {
    name: "inst",
    install: ["python3 -m venv .venv", ".venv/bin/pip install gander-mcp-fixture",
              reach(indexUrl)],
  });
  assert.equal(created.isError, false, created.text);
  assert.equal(created.s.install.length, 3);
  assert.match(created.s.install[2].stdout, /reached/);  // the index was reachable then
  const used = await call("command_run", {
    sandbox: "inst", cmd: ".venv/bin/python -c 'import gander_mcp_fixture; print(\"imported\")'" });
  assert.equal(used.s.exit_code, 0, used.text);
  assert.match(used.s.stdout, /imported/);
  const after = await call("command_run", { sandbox: "inst", cmd: reach(indexUrl) });
  assert.notEqual(after.s.exit_code, 0, "the index is reachable after the install step");
  assert.doesNotMatch(after.s.stdout, /reached/);
});

test("during the install step anything but the registries is refused", async () => {
  const refused = await call("sandbox_create", {
    name: "inst2",
    install: ["python3 -m venv .venv", reach(otherUrl)],
  });
  assert.equal(refused.isError, true, refused.text);
  assert.match(refused.text, /install/);
  assert.doesNotMatch(refused.text, /^reached$/m);  // the command text names it; its output not
  const list = await call("sandbox_list");
  assert.ok(!list.s.sandboxes.some((s) => s.sandbox === "inst2"));
});
