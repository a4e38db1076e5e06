// A stand-in for OSV's query API (api.osv.dev is not reachable from the test machines):
// POST /v1/query answers {"vulns":[{"id":"MAL-2099-4242"}]} for the package names listed in
// STATE_DIR/malicious.json (read at each request), else {}; every query is appended to
// STATE_DIR/queries.jsonl. Prints its port on stdout once it listens on 127.0.0.1.
//   node osv_stub.mjs STATE_DIR
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const state = process.argv[2];
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.method !== "POST" || req.url !== "/v1/query") {
      res.writeHead(404).end();
      return;
    }
    fs.appendFileSync(path.join(state, "queries.jsonl"), body.trim() + "\n");
    let malicious = [];
    try {
      malicious = JSON.parse(fs.readFileSync(path.join(state, "malicious.json"), "utf8"));
    } catch {}
    const name = JSON.parse(body).package?.name;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(malicious.includes(name) ? { vulns: [{ id: "MAL-2099-4242", summary: "malicious code" }] } : {}));
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
process.stdin.on("end", () => process.exit(0)); // the test ends: so do we
process.stdin.resume();
