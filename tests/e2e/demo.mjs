// Drives @modelcontextprotocol/server-filesystem with the official MCP client SDK, bare and
// through `gander run`, and prints what each call returned. Used by `make demo`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import path from "node:path";
import { fileURLToPath } from "node:url";

const e2e = path.dirname(fileURLToPath(import.meta.url));
const server = path.join(e2e, "node_modules", ".bin", "mcp-server-filesystem");
const { GANDER: gander, DEMO_WS: ws, DEMO_HOME: home } = process.env;
const env = { PATH: process.env.PATH, HOME: home, OPENAI_API_KEY: "sk-demo-not-a-real-key" };
// gander (not the extension, which gets an empty environment) reports to the user's own
// collector: the same one for the bare run's HOME and the demo's.
const ganderEnv = { ...env };
if (process.env.DEMO_XDG_STATE_HOME) ganderEnv.XDG_STATE_HOME = process.env.DEMO_XDG_STATE_HOME;
if (process.env.DEMO_XDG_RUNTIME_DIR) ganderEnv.XDG_RUNTIME_DIR = process.env.DEMO_XDG_RUNTIME_DIR;

async function session(label, command, args, sessionEnv = env) {
  const transport = new StdioClientTransport({ command, args, env: sessionEnv, cwd: ws, stderr: "pipe" });
  const client = new Client({ name: "gander-demo", version: "1" });
  const started = Date.now();
  await client.connect(transport);
  const tools = await client.listTools();
  console.log(`\n-- ${label}: ${tools.tools.length} tools after ${Date.now() - started} ms`);
  const call = async (name, args) => {
    try {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content ?? []).map((c) => c.text ?? "").join(" ").replace(/\s+/g, " ");
      return `${r.isError ? "ERROR " : ""}${text.slice(0, 110)}`;
    } catch (e) {
      return `ERROR ${e.message.slice(0, 110)}`;
    }
  };
  console.log("   write_file  workspace/out.txt  ->", await call("write_file", { path: `${ws}/out.txt`, content: "hi" }));
  console.log("   read_text_file workspace/notes ->", await call("read_text_file", { path: `${ws}/notes.txt` }));
  console.log("   read_text_file ~/.ssh/id_ed25519 ->", await call("read_text_file", { path: `${home}/.ssh/id_ed25519` }));
  console.log("   list_directory ~               ->", await call("list_directory", { path: home }));
  await client.close();
}

await session("bare", server, [ws, home]);
await session("through gander", gander, ["run", "--name", "filesystem", "--", server, ws, home], ganderEnv);
