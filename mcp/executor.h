// The executor: the first process of every sandbox `gander mcp` holds (`gander mcp exec`, run by
// `gander run` like any extension, so every layer, the monitor and the broker apply to it). It
// speaks JSON-RPC lines on stdin/stdout with the server, through gander run's relay, which
// counts each `tools/call` as a tool call of this sandbox's extension:
//
//   {"method":"gander/hello"}                        -> what isolation is in force here
//   {"method":"tools/call","params":{"name":"command_run","arguments":{...}}}
//     names: command_run, python_run, file_write, file_read, file_list
//
// It runs one request at a time; commands run in fresh process groups with their output on
// pipes (never on the executor's stdout), bounded (bounded_output.h).
#pragma once

namespace gander::mcp {

// Serves requests on stdin until EOF; returns the exit status.
int ExecutorMain();

}  // namespace gander::mcp
