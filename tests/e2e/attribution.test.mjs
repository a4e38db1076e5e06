// End-to-end attribution: server-everything through `gander run --mode learn` (every file
// access logged), driven by the MCP client SDK with the sampling capability. The audit log must
// name the tool call in flight on each event (one call: its tool and id; several: concurrent),
// and report every tools/call as a `tool` event with its outcome and duration.
//
//   GANDER_BIN=/path/to/gander node --test attribution.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const GANDER = process.env.GANDER_BIN;
const SAMPLING_DELAY_MS = 800;

function readLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

test("server-everything: tool calls are attributed, long-running and sampling in flight", async (t) => {
  assert.ok(GANDER, "GANDER_BIN is not set");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gander-e2e-attr-"));
  const ws = path.join(root, "ws");
  const home = path.join(root, "home");
  fs.mkdirSync(ws, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const audit = path.join(root, "audit.jsonl");
  const transport = new StdioClientTransport({
    command: GANDER,
    args: ["run", "--collector", "off", "--name", "e2e-attr", "--mode", "learn", "--workspace", ws, "--audit-log", audit, "--",
      path.join(here, "node_modules", ".bin", "mcp-server-everything"), "stdio"],
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
    cwd: ws,
    stderr: "pipe",
  });
  const stderr = [];
  transport.stderr?.on("data", (d) => stderr.push(d.toString()));
  const client = new Client({ name: "gander-e2e-attr", version: "0.1.0" }, { capabilities: { sampling: {} } });
  let samplingRequests = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    samplingRequests++;
    await new Promise((r) => setTimeout(r, SAMPLING_DELAY_MS));
    return { model: "e2e-model", role: "assistant", content: { type: "text", text: "sampled by the e2e client" } };
  });
  const protocolErrors = [];
  client.onerror = (e) => protocolErrors.push(String(e?.message ?? e));
  const diag = () => `\n--- gander/server stderr ---\n${stderr.join("")}`;
  const call = (name, args) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 }).catch((e) => ({ jsonrpcError: e.message }));
  // A DNS lookup opens /etc/hosts & co. inside the sandbox: file events during the call.
  const lookup = { name: "x.gz", data: "http://gander-e2e.invalid/x", outputType: "resource" };
  try {
    await client.connect(transport, { timeout: 30_000 });
    const tools = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(tools.includes("trigger-sampling-request"), `no sampling tool in ${tools}${diag()}`);
    assert.ok(tools.includes("trigger-long-running-operation"));

    // 1. One call alone.
    const echo = await call("echo", { message: "attributed" });
    assert.match(JSON.stringify(echo), /attributed/);
    await call("gzip-file-as-resource", lookup);
    // 2. A long-running call and a sampling call in flight together, and a third during both.
    const long = call("trigger-long-running-operation", { duration: 2, steps: 2 });
    const sampled = call("trigger-sampling-request", { prompt: "hello", maxTokens: 10 });
    await new Promise((r) => setTimeout(r, 300));
    await call("gzip-file-as-resource", lookup);
    const [longResult, sampledResult] = await Promise.all([long, sampled]);
    assert.match(JSON.stringify(longResult), /Long running operation completed/, diag());
    assert.match(JSON.stringify(sampledResult), /sampled by the e2e client/, diag());
    assert.equal(samplingRequests, 1);
  } finally {
    await client.close();
  }
  assert.deepEqual(protocolErrors, [], `transport errors through gander${diag()}`);
  // gander writes the log's last lines as it exits.
  for (let i = 0; i < 50 && !readLog(audit).some((e) => e.kind === "lifecycle" && e.lifecycle.what === "stop"); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const events = readLog(audit);
  const toolEvents = events.filter((e) => e.kind === "tool");
  t.diagnostic(`tool events: ${JSON.stringify(toolEvents.map((e) => [e.tool.name, e.tool.request_id, e.tool.outcome, e.tool.duration_us, e.tool.files]))}`);
  const byName = (n) => toolEvents.filter((e) => e.tool.name === n);
  assert.equal(byName("echo").length, 1, `one echo tool event${diag()}`);
  assert.equal(byName("echo")[0].tool.outcome, "ok");
  assert.equal(byName("gzip-file-as-resource").length, 2);
  const longEv = byName("trigger-long-running-operation")[0];
  assert.ok(longEv, "a tool event for the long-running call");
  assert.equal(longEv.tool.outcome, "ok");
  assert.ok(longEv.tool.duration_us >= 1_900_000, `long-running took ${longEv.tool.duration_us} us`);
  const sampEv = byName("trigger-sampling-request")[0];
  assert.ok(sampEv, "a tool event for the sampling call");
  assert.equal(sampEv.tool.outcome, "ok");
  assert.ok(sampEv.tool.duration_us >= SAMPLING_DELAY_MS * 1000, `sampling took ${sampEv.tool.duration_us} us`);
  for (const e of toolEvents) {
    assert.equal(e.tool_call.state, "one");
    assert.equal(e.tool_call.tool, e.tool.name);
  }

  // File events: before the first call `startup`; during the lone gzip call `one` with its id;
  // during the overlapping calls `concurrent`.
  const files = events.filter((e) => e.kind === "file");
  assert.ok(files.some((e) => e.tool_call.state === "startup"), "start-up file events say startup");
  const [gz1, gz2] = byName("gzip-file-as-resource");
  const during = (ev) => {
    const end = Date.parse(ev.time);
    const start = end - ev.tool.duration_us / 1000;
    return files.filter((f) => {
      const t = Date.parse(f.time);
      return t >= start - 1 && t <= end + 1;
    });
  };
  const alone = during(gz1).filter((f) => /hosts|resolv|nsswitch|gai\.conf|host\.conf/.test(f.file.path ?? ""));
  assert.ok(alone.length > 0, `no name-lookup file events during the lone gzip call${diag()}`);
  for (const f of alone) {
    assert.deepEqual(f.tool_call, { state: "one", tool: "gzip-file-as-resource", request_id: gz1.tool.request_id });
  }
  assert.ok(gz1.tool.files >= alone.length, `the call counts its file events (${gz1.tool.files})`);
  // DNS: the lone call's lookup of the name is the call's (not `startup`), and counts as its
  // network (issue 18: it was `startup`, and the tool line said network 0).
  const dns = events.filter((e) => e.kind === "network" && e.network.transport === "dns" && e.network.host === "gander-e2e.invalid");
  assert.ok(dns.length >= 2, `DNS queries of both gzip calls in the log: ${JSON.stringify(dns)}${diag()}`);
  const dnsAlone = dns.filter((e) => e.tool_call.request_id === gz1.tool.request_id);
  assert.ok(dnsAlone.length > 0, `no DNS event names the lone gzip call: ${JSON.stringify(dns.map((e) => e.tool_call))}`);
  for (const e of dnsAlone) {
    assert.deepEqual(e.tool_call, { state: "one", tool: "gzip-file-as-resource", request_id: gz1.tool.request_id });
  }
  assert.ok(dns.every((e) => e.tool_call.state !== "startup"), `a DNS query during a call says startup: ${JSON.stringify(dns)}`);
  assert.ok(gz1.tool.network >= dnsAlone.length, `the call counts its DNS queries as network (${gz1.tool.network})`);
  const overlapped = during(gz2).filter((f) => /hosts|resolv|nsswitch|gai\.conf|host\.conf/.test(f.file.path ?? ""));
  assert.ok(overlapped.length > 0, "file events during the overlapping calls");
  for (const f of overlapped) assert.equal(f.tool_call.state, "concurrent", JSON.stringify(f));
  // Every file event after the first call is never `startup`.
  const firstCall = Date.parse(byName("echo")[0].time);
  assert.ok(files.filter((f) => Date.parse(f.time) > firstCall).every((f) => f.tool_call.state !== "startup"));
  const relay = events.find((e) => e.kind === "lifecycle" && e.lifecycle.what === "relay");
  assert.ok(relay, "the relay's counts at the end");
  t.diagnostic(`relay: ${relay.lifecycle.detail}`);
  fs.rmSync(root, { recursive: true, force: true });
});
