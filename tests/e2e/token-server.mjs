#!/usr/bin/env node
// A tiny MCP server (the official SDK over stdio) for the secrets tests: it shows what the
// secret API_TOKEN in its environment is without the test having to see the value itself.
//   token: {"sha256": sha256 of $API_TOKEN, "pid": its pid, "raw": $API_TOKEN} — gander's relay
//          replaces "raw" with its redaction marker on the way out
//   sleep: {ms} answers after ms milliseconds (a call still in flight at a restart)
import { createHash } from "node:crypto";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "gander-token-server", version: "0.1.0" });
server.registerTool(
  "token",
  { description: "What API_TOKEN is, as a hash (and raw)", inputSchema: {} },
  async () => {
    const value = process.env.API_TOKEN ?? "";
    const sha256 = createHash("sha256").update(value).digest("hex");
    return { content: [{ type: "text", text: JSON.stringify({ sha256, pid: process.pid, raw: value }) }] };
  },
);
server.registerTool(
  "sleep",
  { description: "Answers after `ms` milliseconds", inputSchema: { ms: z.number() } },
  async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: "text", text: `slept ${ms} ms` }] };
  },
);
await server.connect(new StdioServerTransport());
