// `gander mcp`: an MCP server on stdio (newline-delimited JSON-RPC; nothing but MCP on stdout)
// whose tools run code in sandboxes it holds (sandbox_pool.h). The end of the session (stdin
// EOF, SIGTERM, SIGINT, SIGHUP) ends every sandbox and removes the session's directory; when
// gander itself is SIGKILLed, its sandboxes die by PDEATHSIG and a reaper process removes the
// directory.
#pragma once

#include <string>
#include <vector>

#include "mcp/sandbox_pool.h"

namespace gander::mcp {

struct ServerOptions {
  PoolOptions pool;
  std::string config_file;  // mcp.yaml; empty: the default path, if it exists
};

// The default config file: $XDG_CONFIG_HOME/gander/mcp.yaml (or ~/.config/gander/mcp.yaml).
std::string DefaultConfigPath();

// Reads mcp.yaml into `pool` (keys: export_dir, export_max_file_bytes, profile, network_policy,
// files_roots, ttl, max_sandboxes, warm_spares; `~/` in paths is $HOME). A missing default
// file is no error; unknown keys are.
Status LoadConfig(const std::string& path, bool must_exist, PoolOptions& pool);

// The protocol versions answered in initialize, newest first.
const std::vector<std::string>& SupportedProtocolVersions();

int Serve(ServerOptions options);

}  // namespace gander::mcp
