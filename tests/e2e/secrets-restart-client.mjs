#!/usr/bin/env node
// The client side of the secrets restart test (tests/integration/escape/secrets_test.cc): ONE MCP session
// (the SDK's Client over StdioClientTransport) with token-server.mjs wrapped in `gander run`,
// held open while gander refreshes the environment secret API_TOKEN and restarts the server
// behind its relay. Prints one JSON report on stdout:
//   tokens   the token numbers the server showed, in order, one entry per change (the test's
//            tokens are PREFIX1, PREFIX2, ...; the server shows their sha256 only)
//   raws     the distinct "raw" fields seen (gander's redaction marker, never a value)
//   pids     the distinct server pids seen
//   gaps_ms  per change: from the last answer with the old token to the first with the new one
//   errors   calls that failed (message), with the JSON-RPC code
//   in_flight  how the `sleep` call in flight at the first restart ended
//   stderr   everything gander wrote on its stderr
//   answers  how many `token` calls were answered
//   first_answer_ms  from spawning the command to the first answer (a start-up time)
//
//   node secrets-restart-client.mjs CONFIG.json
// CONFIG: {command, args, env, cwd, prefix, want (distinct tokens to see), limit_s}
import fs from "node:fs";
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const sha = (s) => createHash("sha256").update(s).digest("hex");
const numberOf = new Map();
for (let n = 1; n <= 100; ++n) numberOf.set(sha(config.prefix + n), n);

const transport = new StdioClientTransport({
  command: config.command,
  args: config.args,
  env: config.env,
  cwd: config.cwd,
  stderr: "pipe",
});
const stderr = [];
transport.stderr?.on("data", (d) => stderr.push(d.toString()));
const client = new Client({ name: "gander-secrets-restart", version: "0.1.0" });
const protocolErrors = [];
client.onerror = (e) => protocolErrors.push(String(e?.message ?? e));

const report = { tokens: [], raws: [], pids: [], gaps_ms: [], errors: [], answers: 0 };
const spawned = Date.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  await client.connect(transport, { timeout: 30_000 });
  // A call that is still in flight when the first restart comes.
  const inFlight = client
    .callTool({ name: "sleep", arguments: { ms: 120_000 } }, undefined, { timeout: 180_000 })
    .then(
      (r) => ({ result: r.content?.[0]?.text ?? "" }),
      (e) => ({ code: e.code, message: String(e.message) }),
    );
  const end = Date.now() + config.limit_s * 1000;
  let last = null; // {n, at}
  while (report.tokens.length < config.want && Date.now() < end) {
    try {
      const r = await client.callTool({ name: "token", arguments: {} }, undefined, { timeout: 30_000 });
      const at = Date.now();
      if (++report.answers === 1) report.first_answer_ms = at - spawned;
      const seen = JSON.parse(r.content[0].text);
      const n = numberOf.get(seen.sha256) ?? -1;
      if (!report.raws.includes(seen.raw)) report.raws.push(seen.raw);
      if (!report.pids.includes(seen.pid)) report.pids.push(seen.pid);
      if (!last || last.n !== n) {
        report.tokens.push(n);
        if (last) report.gaps_ms.push(at - last.at);
      }
      last = { n, at };
    } catch (e) {
      report.errors.push({ code: e.code, message: String(e.message) });
    }
    await sleep(20);
  }
  // gander answers it at the first restart (-32603); waiting on that answer, not on a clock.
  // Were it never answered, the tool's own end (120 s) or the request's timeout (180 s) ends
  // the wait with what the test then refuses: a hang bound, not a verdict.
  report.in_flight = await inFlight;
} catch (e) {
  report.fatal = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
report.protocol_errors = protocolErrors;
report.stderr = stderr.join("");
process.stdout.write(JSON.stringify(report) + "\n");
