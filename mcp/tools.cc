#include "mcp/tools.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;

json Prop(const char* type, const char* description) {
  return {{"type", type}, {"description", description}};
}

const json& SandboxArg() {
  static const json arg = Prop("string",
                               "Which sandbox (sandbox_create's name). Omit to use the session's "
                               "sandbox, created on first use.");
  return arg;
}

json Tool(const char* name, const char* description, json properties,
          std::vector<std::string> required = {}) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = required;
  return {{"name", name}, {"description", description}, {"inputSchema", schema}};
}

}  // namespace

json ToolList() {
  json ttl = {{"type", {"string", "number"}},
              {"description", "How long it may live: \"30m\", \"1h\" (default), or seconds."}};
  json timeout = Prop("number", "Seconds before it is stopped (default 120).");
  json max_output = Prop("integer", "Bytes kept per stream, start and end (default 16384).");
  return json::array({
      Tool("command_run",
           "Run a shell command in an isolated sandbox that cannot see the user's home directory, "
           "keys or network. Use this for anything that installs packages, builds or runs code "
           "you wrote, runs tests, or acts on content fetched from the internet, instead of a "
           "shell on the user's machine. Long output is cut in the middle (you are told how much).",
           {{"cmd", Prop("string", "The command, run with /bin/sh -c in the sandbox's workspace.")},
            {"sandbox", SandboxArg()},
            {"timeout", timeout},
            {"max_output_bytes", max_output}},
           {"cmd"}),
      Tool("python_run",
           "Run Python code in the sandbox's persistent interpreter: variables, imports and "
           "files survive between calls, like a notebook. Use it to compute, analyse data or try "
           "code you wrote without touching the user's machine. The value of a final expression "
           "is returned.",
           {{"code", Prop("string", "Python source.")},
            {"sandbox", SandboxArg()},
            {"timeout", timeout},
            {"max_output_bytes", max_output}},
           {"code"}),
      Tool("file_write",
           "Create or overwrite a file in the sandbox's workspace (parent directories are "
           "made). Use it to put code or data you wrote where command_run and python_run see it.",
           {{"path", Prop("string", "Relative to the workspace; no '..', not absolute.")},
            {"content", Prop("string", "The file's text (or its bytes in base64, see encoding).")},
            {"encoding", Prop("string", "\"text\" (default) or \"base64\" for binary content.")},
            {"append", Prop("boolean", "Append instead of replacing.")},
            {"sandbox", SandboxArg()}},
           {"path", "content"}),
      Tool("file_read",
           "Read a file from the sandbox's workspace, e.g. a build log or a result. A file that "
           "is not text comes base64-encoded (encoding says which).",
           {{"path", Prop("string", "Relative to the workspace.")},
            {"encoding", Prop("string", "\"base64\" to have even a text file base64'd.")},
            {"max_bytes", Prop("integer", "At most this many bytes (default 262144).")},
            {"sandbox", SandboxArg()}},
           {"path"}),
      Tool("file_list", "List a directory of the sandbox's workspace.",
           {{"path", Prop("string", "Relative to the workspace (default: the workspace).")},
            {"sandbox", SandboxArg()}}),
      Tool("sandbox_create",
           "Start a fresh sandbox, for a task that should not share files or state with the "
           "session's default one, or to work on a copy of the user's project (files). "
           "Returns its name and how strongly it is isolated.",
           {{"name", Prop("string", "A short name (letters, digits, - _ .).")},
            {"ttl", ttl},
            {"files",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description",
               "Files or directories of the user's project to copy in (copies: the "
               "originals are never changed)."}}},
            {"network",
             {{"type", "string"},
              {"enum", {"off", "policy"}},
              {"description",
               "off (default): no network; policy: the hosts the user's gander "
               "policy allows."}}},
            {"install",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description",
               "Commands that install what the task needs (pip into a venv, npm install, ...) "
               "in the workspace, run first with only the package registries reachable; the "
               "network is then closed for the sandbox's life."}}}}),
      Tool("sandbox_fork",
           "Copy a sandbox's files into a new sandbox, to try something risky or compare two "
           "approaches; the original stays as it was.",
           {{"sandbox", SandboxArg()}, {"name", Prop("string", "The copy's name.")}, {"ttl", ttl}}),
      Tool("sandbox_export",
           "Hand a finished result (file or directory of the workspace) to the user: copied to "
           "the export directory they configured. Nothing else leaves a sandbox.",
           {{"path", Prop("string", "Relative to the workspace.")}, {"sandbox", SandboxArg()}},
           {"path"}),
      Tool("sandbox_list", "The sandboxes of this session, with their time left.", json::object()),
      Tool("sandbox_kill", "Throw a sandbox away (its files and processes) when a task is done.",
           {{"sandbox", Prop("string", "Its name.")}}, {"sandbox"}),
      Tool("sandbox_renew", "Give a sandbox more time before it is thrown away.",
           {{"sandbox", SandboxArg()}, {"ttl", ttl}}),
  });
}

}  // namespace gander::mcp
