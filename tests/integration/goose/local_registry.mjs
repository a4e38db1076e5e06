// A read-only npm registry on 127.0.0.1 serving the packages installed in a node_modules tree
// (tests/e2e's, pinned by its package-lock.json), so that `npx -y @modelcontextprotocol/...`
// installs through gander's install phase without the network. Every name@version found
// anywhere in the tree is served: a packument per name (dependencies as package.json has
// them, no install scripts) and a tarball per version, packed from its directory on demand.
// Prints its URL on stdout, then serves until stdin closes.
//   node local_registry.mjs NODE_MODULES_DIR
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";

const root = path.resolve(process.argv[2]);
const packages = new Map(); // name -> Map(version -> {dir, manifest})

function scan(dir) {
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith(".")) continue;
    const full = path.join(dir, e.name);
    if (e.name.startsWith("@")) {
      scan(full);
      continue;
    }
    let manifest;
    try {
      manifest = JSON.parse(fs.readFileSync(path.join(full, "package.json"), "utf8"));
    } catch {
      continue;
    }
    if (manifest.name && manifest.version) {
      if (!packages.has(manifest.name)) packages.set(manifest.name, new Map());
      packages.get(manifest.name).set(manifest.version, { dir: full, manifest });
    }
    scan(path.join(full, "node_modules"));
  }
}
scan(root);

function packument(name, base) {
  const versions = {};
  let latest = null;
  for (const [version, { manifest }] of packages.get(name)) {
    versions[version] = {
      name,
      version,
      dependencies: manifest.dependencies ?? {},
      optionalDependencies: manifest.optionalDependencies ?? {},
      peerDependencies: manifest.peerDependencies ?? {},
      peerDependenciesMeta: manifest.peerDependenciesMeta ?? {},
      bin: manifest.bin,
      engines: manifest.engines,
      type: manifest.type,
      dist: { tarball: `${base}/-/tarball/${encodeURIComponent(name)}/${version}.tgz` },
    };
    latest = version; // any: the specs in the tests name no version
  }
  return { name, "dist-tags": { latest }, versions };
}

const server = http.createServer((req, res) => {
  const base = `http://${req.headers.host}`;
  const url = decodeURIComponent(req.url.split("?")[0]);
  const tarball = url.match(/^\/-\/tarball\/(.+)\/([^/]+)\.tgz$/);
  if (tarball) {
    const entry = packages.get(tarball[1])?.get(tarball[2]);
    if (!entry) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/octet-stream" });
    const tar = spawn("tar", ["-czf", "-", "--exclude=./node_modules", "--transform", "s,^\\.,package,", "-C", entry.dir, "."], { stdio: ["ignore", "pipe", "inherit"] });
    tar.stdout.pipe(res);
    return;
  }
  const name = url.slice(1);
  if (!packages.has(name)) return res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(packument(name, base)));
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/\n`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
