#include "vet/audit.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/exec_signals.h"
#include "common/exec_strings.h"
#include "common/path.h"
#include "vet/description_check.h"
#include "vet/log_findings.h"
#include "vet/mcp_client.h"
#include "vet/schema_args.h"

extern char** environ;

namespace gander::vet {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kExitUsage = 2;
constexpr const char* kProtocolVersion = "2025-06-18";

// The file and the directories above it.
Result<void> WriteFileAndParents(const std::string& path, const std::string& content, mode_t mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Error{ec.value(), "mkdir " + fs::path(path).parent_path().string()};
  return WriteFile(path, content, mode);
}

// The temporary directory of one audit: home/ (the fake home), workspace/, audit.jsonl,
// stderr.log. Removed at the end unless kept.
class AuditDir {
 public:
  static Result<AuditDir> Create() {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/gander-audit-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) return ErrnoError("mkdtemp " + templ);
    AuditDir dir;
    dir.path_ = RealPath(templ).value_or(templ);
    return dir;
  }
  AuditDir() = default;
  AuditDir(AuditDir&& o) noexcept : path_(std::exchange(o.path_, "")), keep_(o.keep_) {}
  AuditDir& operator=(AuditDir&&) = delete;
  ~AuditDir() {
    if (path_.empty() || keep_) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// `gander run` as a child: stdin and stdout are pipes to us, stderr goes to a file.
struct Child {
  pid_t pid = -1;
  UniqueFd to_stdin;
  UniqueFd from_stdout;
};

Result<Child> StartRun(const AuditOptions& o, const std::vector<std::string>& command,
                       const std::string& home, const std::string& workspace,
                       const std::string& audit_log, const std::string& stderr_log) {
  std::vector<std::string> args = {
      o.gander,      "run",     "--mode", "monitor", "--profile",   "default", "--collector", "off",
      "--audit-log", audit_log, "--name", "audit",   "--workspace", workspace, "--"};
  args.insert(args.end(), command.begin(), command.end());
  // gander's own environment: ours, with the fake home, and no XDG directories that would let
  // the user's own profiles (a `default.yaml` of theirs) or state in. The extension itself gets
  // an empty environment from gander run anyway.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view var(*e);
    if (var.starts_with("HOME=") || var.starts_with("XDG_CONFIG_HOME=") ||
        var.starts_with("XDG_STATE_HOME=") || var.starts_with("XDG_DATA_HOME=") ||
        var.starts_with("XDG_CACHE_HOME=")) {
      continue;
    }
    env.emplace_back(var);
  }
  env.push_back("HOME=" + home);
  const ExecStrings argv(std::move(args)), envp(std::move(env));

  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoError("pipe");
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoError("pipe");
  UniqueFd out_r(out[0]), out_w(out[1]);
  UniqueFd err(::open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!err) return ErrnoError("create " + stderr_log);

  pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    // Only async-signal-safe calls from here on.
    if (dup2(in_r.get(), 0) < 0 || dup2(out_w.get(), 1) < 0 || dup2(err.get(), 2) < 0) {
      _exit(125);
    }
    ResetSignalsForExec();  // the audit ignores SIGPIPE
    execve(argv.front(), argv.get(), envp.get());
    _exit(127);
  }
  Child child;
  child.pid = pid;
  child.to_stdin = std::move(in_w);
  child.from_stdout = std::move(out_r);
  return child;
}

// How `gander run` ended.
struct Ended {
  int exit_code = -1;  // -1: killed by a signal
  std::string how;     // in words, for the report
};

// Waits for `pid` up to `grace`, then SIGTERM, then SIGKILL.
Ended Reap(pid_t pid, std::chrono::seconds grace) {
  auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  bool signalled_term = false;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return {-1, "unknown (waitpid failed)"};
    auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      if (!signalled_term) {
        kill(pid, SIGTERM);
        signalled_term = true;
        deadline = now + std::chrono::seconds(3);
      } else {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Ended ended;
  if (WIFEXITED(status)) {
    ended.exit_code = WEXITSTATUS(status);
    ended.how = "exit status " + std::to_string(ended.exit_code);
  }
  if (WIFSIGNALED(status)) ended.how = "killed by signal " + std::to_string(WTERMSIG(status));
  if (signalled_term) ended.how += " (did not end on stdin EOF: stopped by gander audit)";
  return ended;
}

std::string Tail(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (lines.size() > max_lines) lines.erase(lines.begin());
  }
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

// Every "description" string in a JSON Schema (the parameters' descriptions), with its JSON
// pointer.
void SchemaDescriptions(const json& schema, const std::string& where,
                        std::vector<std::pair<std::string, std::string>>& out, int depth = 0) {
  if (depth > 16) return;
  if (schema.is_object()) {
    for (const auto& [key, value] : schema.items()) {
      if ((key == "description" || key == "title") && value.is_string()) {
        out.emplace_back(where + "/" + key, value.get<std::string>());
      } else {
        SchemaDescriptions(value, where + "/" + key, out, depth + 1);
      }
    }
  } else if (schema.is_array()) {
    for (size_t i = 0; i < schema.size(); ++i) {
      SchemaDescriptions(schema[i], where + "/" + std::to_string(i), out, depth + 1);
    }
  }
}

void CheckText(const std::string& owner, const std::string& text,
               const std::vector<std::string>& others, std::vector<Finding>& findings) {
  for (auto& hit : CheckDescription(text, others)) {
    findings.push_back(
        {hit.severity, Category::kDescription, owner + ": " + hit.rule, hit.excerpt, "", 1});
  }
}

// Pages of a list method (tools/list, prompts/list, resources/list) until no nextCursor.
Result<json> ListAll(McpClient& client, const std::string& method, const std::string& key,
                     std::chrono::milliseconds timeout) {
  json all = json::array();
  json params = json::object();
  for (int page = 0; page < 50; ++page) {
    auto result = client.Request(method, params, timeout);
    if (!result) return result.error();
    if (result->contains(key) && (*result)[key].is_array()) {
      for (auto& item : (*result)[key]) all.push_back(item);
    }
    if (!result->contains("nextCursor") || !(*result)["nextCursor"].is_string()) break;
    params["cursor"] = (*result)["nextCursor"];
  }
  return all;
}

// ListAll, or an empty list and a low finding that `method` failed (when the server announced
// it: `announced`).
json ListOrFinding(McpClient& client, const std::string& method, const std::string& key,
                   std::chrono::milliseconds timeout, bool announced,
                   std::vector<Finding>& findings) {
  auto listed = ListAll(client, method, key, timeout);
  if (listed) return std::move(*listed);
  if (announced) {
    findings.push_back(
        {Severity::kLow, Category::kAudit, method + " failed", listed.error().Describe(), "", 1});
  }
  return json::array();
}

std::string Str(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>()
                                                                      : std::string();
}

std::string Shorten(std::string s, size_t max) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// The MCP session: the handshake, the listings, the description checks, --exercise.
void DriveSession(McpClient& client, const AuditOptions& o, Report& report,
                  std::vector<Finding>& findings) {
  const auto timeout = std::chrono::seconds(o.timeout_seconds);
  json init_params = {{"protocolVersion", kProtocolVersion},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "gander-audit"}, {"version", "1"}}}};
  auto init = client.Request("initialize", init_params, timeout);
  if (!init) {
    report.complete = false;
    report.problem = "no answer to initialize: " + init.error().Describe();
    return;
  }
  const json& info = init->contains("serverInfo") ? (*init)["serverInfo"] : json();
  report.server =
      Str(info, "name") + (Str(info, "version").empty() ? "" : " " + Str(info, "version"));
  report.protocol = Str(*init, "protocolVersion");
  if (auto sent = client.Notify("notifications/initialized", nullptr); !sent) {
    report.complete = false;
    report.problem = sent.error().Describe();
    return;
  }
  const json caps = init->contains("capabilities") ? (*init)["capabilities"] : json::object();
  if (auto text = Str(*init, "instructions"); !text.empty()) {
    CheckText("server instructions", text, {}, findings);
  }

  const json tools =
      ListOrFinding(client, "tools/list", "tools", timeout, caps.contains("tools"), findings);
  for (const auto& t : tools) report.tools.push_back(Str(t, "name"));
  for (const auto& t : tools) {
    std::string name = Str(t, "name");
    std::vector<std::string> others;
    for (const auto& n : report.tools) {
      if (n != name) others.push_back(n);
    }
    CheckText("tool " + name, Str(t, "description"), others, findings);
    if (auto title = Str(t, "title"); !title.empty()) {
      CheckText("tool " + name + " title", title, others, findings);
    }
    std::vector<std::pair<std::string, std::string>> texts;
    if (t.contains("inputSchema")) SchemaDescriptions(t["inputSchema"], "inputSchema", texts);
    for (const auto& [where, text] : texts) {
      CheckText("tool " + name + " " + where, text, others, findings);
    }
  }
  // Prompts and resources are listed only when the server announced them.
  auto announced = [&](const std::string& what) {
    return caps.contains(what)
               ? ListOrFinding(client, what + "/list", what, timeout, true, findings)
               : json::array();
  };
  for (const auto& p : announced("prompts")) {
    std::string name = Str(p, "name");
    report.prompts.push_back(name);
    CheckText("prompt " + name, Str(p, "description"), report.tools, findings);
    if (p.contains("arguments") && p["arguments"].is_array()) {
      for (const auto& a : p["arguments"]) {
        CheckText("prompt " + name + " argument " + Str(a, "name"), Str(a, "description"),
                  report.tools, findings);
      }
    }
  }
  for (const auto& r : announced("resources")) {
    std::string uri = Str(r, "uri");
    report.resources.push_back(uri);
    CheckText("resource " + uri, Str(r, "description"), report.tools, findings);
  }

  if (!o.exercise) return;
  report.exercised = true;
  for (const auto& t : tools) {
    std::string name = Str(t, "name");
    json args = MinimalArguments(t.contains("inputSchema") ? t["inputSchema"] : json::object());
    ToolCallOutcome call{name, args.dump(-1, ' ', false, json::error_handler_t::replace), ""};
    auto result = client.Request("tools/call", {{"name", name}, {"arguments", args}}, timeout);
    if (!result) {
      call.outcome = "error: " + Shorten(result.error().Describe(), 160);
      if (result.error().code == EPIPE) {
        report.calls.push_back(call);
        report.complete = false;
        report.problem = "the server went away during tools/call " + name;
        return;
      }
    } else {
      std::string text;
      if (result->contains("content") && (*result)["content"].is_array() &&
          !(*result)["content"].empty()) {
        text = Str((*result)["content"][0], "text");
      }
      bool is_error = result->value("isError", false);
      call.outcome =
          (is_error ? "tool error" : "ok") + (text.empty() ? "" : ": " + Shorten(text, 120));
    }
    report.calls.push_back(call);
  }
}

std::vector<std::string> RotatedFiles(const std::string& path) {
  std::vector<std::string> out;
  for (int n = 64; n >= 1; --n) {
    std::string rotated = path + "." + std::to_string(n);
    if (fs::exists(rotated)) out.push_back(rotated);
  }
  out.push_back(path);
  return out;
}

// The extension runs in the (temporary) workspace, not here: a relative path that names a file
// from here (`node dist/index.js`, `./server`) is made absolute, so it still names that file.
std::vector<std::string> AbsoluteArguments(std::vector<std::string> command) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return command;
  for (auto& arg : command) {
    if (arg.empty() || arg[0] == '/' || arg[0] == '-') continue;
    if (&arg == &command[0] && arg.find('/') == std::string::npos) continue;  // a PATH lookup
    fs::path candidate = (cwd / arg).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) arg = candidate.string();
  }
  return command;
}

}  // namespace

const std::vector<BaitFile>& BaitFiles() {
  static const std::vector<BaitFile> kBait = {
      {".ssh/id_rsa",
       "-----BEGIN OPENSSH PRIVATE KEY-----\n"
       "GANDER-AUDIT-BAIT-ssh-key-this-is-not-a-real-key-gander-audit-bait\n"
       "-----END OPENSSH PRIVATE KEY-----\n"},
      {".aws/credentials",
       "[default]\n"
       "aws_access_key_id = AKIAGANDERAUDITBAIT0\n"
       "aws_secret_access_key = GANDER-AUDIT-BAIT-aws-secret-not-real\n"},
      {".config/goose/secrets.yaml",
       "OPENAI_API_KEY: sk-GANDER-AUDIT-BAIT-not-a-real-key\n"
       "GITHUB_PERSONAL_ACCESS_TOKEN: ghp_GANDERAUDITBAITnotarealtoken\n"},
  };
  return kBait;
}

namespace {

// A malware check the install phase skipped (OSV off or unreachable) is said here too, not only
// in the audit log: the package was installed unchecked.
void SaySkippedOsvChecks(const std::string& audit_log) {
  for (const auto& file : RotatedFiles(audit_log)) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"phase\":\"install\"") == std::string::npos) continue;
      auto e = nlohmann::json::parse(line, nullptr, false);
      if (!e.is_object() || !e.contains("lifecycle") || !e["lifecycle"].is_object()) continue;
      std::string detail = e["lifecycle"].value("detail", "");
      if (detail.starts_with("osv off: ") || detail.starts_with("osv unreachable: ")) {
        std::cerr << "gander: audit: not checked for malware (OSV): "
                  << detail.substr(detail.find(": ") + 2) << "\n";
      }
    }
  }
}

}  // namespace

int RunAudit(const AuditOptions& o, std::ostream& out) {
  if (o.command.empty()) {
    std::cerr << "gander: audit: no command given (gander audit [OPTIONS] -- COMMAND ...)\n";
    return kExitUsage;
  }
  std::string workspace;
  if (!o.workspace.empty()) {
    std::error_code ec;
    if (!fs::is_directory(o.workspace, ec)) {
      std::cerr << "gander: audit: --workspace " << o.workspace << ": not a directory\n";
      return kExitUsage;
    }
    workspace = RealPath(o.workspace).value_or(o.workspace);
  }
  auto dir = AuditDir::Create();
  if (!dir) {
    std::cerr << "gander: audit: " << dir.error().Describe() << "\n";
    return kExitIncomplete;
  }
  if (o.keep) dir->Keep();
  const std::string home = dir->path() + "/home";
  if (workspace.empty()) {
    workspace = dir->path() + "/workspace";
    if (mkdir(workspace.c_str(), 0700) != 0) {
      std::cerr << "gander: audit: mkdir " << workspace << ": " << strerror(errno) << "\n";
      return kExitIncomplete;
    }
  }
  Report report;
  report.command = o.command;
  report.workspace = workspace;
  report.home = home;
  report.fail_on = o.fail_on;
  for (const auto& bait : BaitFiles()) {
    std::string path = home + "/" + bait.path;
    if (auto written = WriteFileAndParents(path, bait.content, 0600); !written) {
      std::cerr << "gander: audit: " << written.error().Describe() << "\n";
      return kExitIncomplete;
    }
    report.bait.push_back(path);
  }
  const std::string audit_log = dir->path() + "/audit.jsonl";
  const std::string stderr_log = dir->path() + "/stderr.log";

  signal(SIGPIPE, SIG_IGN);  // a server that exits early must not kill the audit
  auto child = StartRun(o, AbsoluteArguments(o.command), home, workspace, audit_log, stderr_log);
  if (!child) {
    std::cerr << "gander: audit: " << child.error().Describe() << "\n";
    return kExitIncomplete;
  }
  std::vector<Finding> findings;
  McpClient client(std::move(child->to_stdin), std::move(child->from_stdout));
  DriveSession(client, o, report, findings);
  client.CloseInput();  // stdin EOF: gander ends the sandbox (SIGTERM at 1 s, SIGKILL at 2.5 s)
  const Ended ended = Reap(child->pid, std::chrono::seconds(10));
  report.exit = ended.how;
  // gander run's own refusals: the command is not there or not executable, or an argument or
  // the policy is bad. Nothing ran: bad input, as for gander audit's own arguments.
  const bool not_started = !report.complete && (ended.exit_code == kExitUsage ||
                                                ended.exit_code == 126 || ended.exit_code == 127);
  if (client.not_json_lines() > 0) {
    findings.push_back({Severity::kLow, Category::kAudit,
                        "lines on stdout that are not JSON-RPC (they break an MCP client)", "", "",
                        client.not_json_lines()});
  }

  LogContext context{workspace, home, report.bait};
  for (const auto& file : RotatedFiles(audit_log)) {
    std::ifstream in(file);
    if (!in) continue;
    for (auto& f : FindingsFromAuditLog(in, context)) findings.push_back(std::move(f));
  }
  SaySkippedOsvChecks(audit_log);
  findings.push_back(
      {Severity::kInfo, Category::kEnvironment,
       "which variables the extension reads is not observable (getenv reads the process's own "
       "memory, no syscall)",
       "under the default profile it was given only PATH, HOME and, when set, LANG, LC_ALL, "
       "LC_CTYPE, TZ; reads of /proc/*/environ would be listed here",
       "", 1});
  if (not_started) {
    std::cerr << "gander: audit: gander run refused to start the extension (" << ended.how << "):\n"
              << Tail(stderr_log, 20);
    return kExitUsage;
  }
  if (!report.complete) {
    std::cerr << "gander: audit: " << report.problem << "\n";
    std::string tail = Tail(stderr_log, 20);
    if (!tail.empty())
      std::cerr << "gander: audit: the extension's (and gander run's) stderr:\n" << tail;
  }
  SortFindings(findings);
  report.findings = std::move(findings);
  if (o.keep) report.audit_log = audit_log;
  PrintReport(report, o.format, out);
  out.flush();
  if (o.keep) std::cerr << "gander: audit: kept " << dir->path() << "\n";
  if (!report.complete) return kExitIncomplete;
  return ExitStatus(report.findings, o.fail_on);
}

}  // namespace gander::vet
