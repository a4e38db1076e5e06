#include "vet/log_findings.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/path.h"

namespace gander::vet {
namespace {

using nlohmann::json;

std::string Str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long long Int(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

bool Within(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (path == dir) return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir.back() == '/' || path[dir.size()] == '/');
}

// Which tool call an event happened in, as the report names it.
std::string ToolOf(const json& line) {
  const json& slot = line.contains("tool_call") ? line["tool_call"] : json();
  std::string state = Str(slot, "state");
  if (state == "one") return Str(slot, "tool");
  return state.empty() ? "(unknown)" : "(" + state + ")";
}

// Syscalls whose refusal looks like an escape or an attack on the host rather than a runtime
// probing what it may do.
bool EscapeSyscall(const std::string& name) {
  static const std::set<std::string> kNames = {"ptrace",
                                               "process_vm_readv",
                                               "process_vm_writev",
                                               "mount",
                                               "umount2",
                                               "pivot_root",
                                               "chroot",
                                               "setns",
                                               "bpf",
                                               "kexec_load",
                                               "kexec_file_load",
                                               "init_module",
                                               "finit_module",
                                               "delete_module",
                                               "open_by_handle_at",
                                               "perf_event_open",
                                               "keyctl",
                                               "add_key",
                                               "request_key"};
  return kNames.count(name) != 0;
}

// Runs of 16 or more hexadecimal digits (temporary names: memory.jsonl.9ebcaecb...tmp) -> "*".
std::string CollapseRandom(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = i;
    while (j < path.size() && std::isxdigit(static_cast<unsigned char>(path[j]))) ++j;
    if (j - i >= 16) {
      out += '*';
      i = j;
    } else if (j > i) {
      out.append(path, i, j - i);
      i = j;
    } else {
      out += path[i++];
    }
  }
  return out;
}

// Reads every runtime makes at start to size itself (node, the JVM, Go read the cgroup limits
// and the CPU topology): listed, but at `info`.
bool RuntimeProbe(const std::string& path) {
  return path.starts_with("/sys/fs/cgroup/") || path.starts_with("/sys/devices/system/cpu/") ||
         path == "/sys/devices/system/cpu" || path.starts_with("/proc/self/") ||
         path.starts_with("/proc/thread-self/");
}

// Accumulates equal observations into one finding each, in first-seen order.
class Collector {
 public:
  void Add(Severity severity, Category category, std::string summary, std::string detail,
           const std::string& tool, unsigned long long count = 1) {
    auto key = std::make_tuple(category, summary);
    auto it = index_.find(key);
    if (it == index_.end()) {
      index_.emplace(key, findings_.size());
      findings_.push_back({severity, category, std::move(summary), std::move(detail), "", 0});
      tools_.emplace_back();
      it = index_.find(key);
    }
    Finding& f = findings_[it->second];
    f.count += count;
    f.severity = std::max(f.severity, severity);
    tools_[it->second].insert(tool);
  }

  std::vector<Finding> Take() {
    for (size_t i = 0; i < findings_.size(); ++i) {
      std::string joined;
      for (const auto& t : tools_[i]) joined += (joined.empty() ? "" : ", ") + t;
      findings_[i].tool = joined;
    }
    return std::move(findings_);
  }

 private:
  std::map<std::tuple<Category, std::string>, size_t> index_;
  std::vector<Finding> findings_;
  std::vector<std::set<std::string>> tools_;
};

class Analysis {
 public:
  explicit Analysis(const LogContext& c) : c_(c) {}

  void Line(const json& line) {
    // gander's own install of the package (npm install and the package's install scripts)
    // runs the package's code too: kept, each finding marked as the install phase's.
    install_ = Str(line, "phase") == "install";
    std::string kind = Str(line, "kind");
    if (install_ && kind == "lifecycle") return;  // the install's own start and end
    if (kind == "file") File(line, line["file"]);
    if (kind == "network") Network(line, line["network"]);
    if (kind == "syscall") Syscall(line, line["syscall"]);
    if (kind == "process") Process(line, line["process"]);
    if (kind == "lifecycle") Lifecycle(line, line["lifecycle"]);
  }

  void BadLine() { ++bad_lines_; }

  std::vector<Finding> Finish() {
    if (bad_lines_ > 0) {
      Add(Severity::kLow, Category::kAudit, "audit log lines that did not parse (skipped)", "",
          "(audit)", bad_lines_);
    }
    return out_.Take();
  }

 private:
  // A path as the report shows it: ~ for the fake home, ${WORKSPACE} for the workspace, and
  // random parts of temporary names as * (so a file written through a temp file is one line).
  std::string Show(const std::string& path) const {
    if (Within(path, c_.workspace)) return "${WORKSPACE}" + path.substr(c_.workspace.size());
    if (Within(path, c_.home)) return "~" + path.substr(c_.home.size());
    return CollapseRandom(path);
  }

  void File(const json& line, const json& f) {
    std::string path = Str(f, "path");
    if (path.empty()) path = Str(f, "raw_path");
    std::string cls = Str(f, "class");
    std::string access = Str(f, "access");
    std::string result = Str(f, "result");
    std::string tool = ToolOf(line);
    std::string how = access + " " + Show(path);
    std::string detail = "class " + cls + ", " + result;
    if (auto e = Str(f, "errno_name"); !e.empty()) detail += " (" + e + ")";
    detail += ", syscall " + Str(f, "syscall");

    if (std::any_of(c_.bait.begin(), c_.bait.end(),
                    [&](const std::string& b) { return Within(path, b); })) {
      bait_seen_ = true;
      Add(Severity::kHigh, Category::kBait, how, detail, tool);
      return;
    }
    if (path.starts_with("/proc/") && path.ends_with("/environ")) {
      Add(Severity::kMedium, Category::kEnvironment, "read a process environment: " + path, detail,
          tool);
      return;
    }
    bool mutates = access != "read" && access != "exec" && access != "stat";
    // The workspace, the private tmpfs ($HOME, /tmp: thrown away at exit), /proc and /dev.
    if (cls == "workspace" || cls == "system" || cls == "private" || cls == "allowed_write") {
      return;
    }
    Severity s = Severity::kLow;
    if (!mutates && RuntimeProbe(path)) {
      s = Severity::kInfo;
    } else if (cls == "denied") {
      s = Severity::kHigh;  // a deny rule of the default profile: secrets, keys, credentials
    } else if (mutates || result == "would_deny") {
      s = Severity::kMedium;
    }
    Add(s, Category::kFile, how, detail, tool);
  }

  void Network(const json& line, const json& n) {
    std::string transport = Str(n, "transport");
    std::string host = Str(n, "host");
    std::string ip = Str(n, "ip");
    std::string result = Str(n, "result");
    std::string tool = ToolOf(line);
    std::string detail = result;
    if (auto e = Str(n, "errno_name"); !e.empty()) detail += " (" + e + ")";
    if (long long out = Int(n, "bytes_out"); out > 0) {
      detail += ", " + std::to_string(out) + " bytes sent";
    }
    if (transport == "dns") {
      Add(Severity::kMedium, Category::kNetwork, "DNS query for " + host, detail, tool);
    } else {
      std::string where = host.empty() ? ip : host + " (" + ip + ")";
      if (ip.find(':') != std::string::npos && host.empty()) where = "[" + ip + "]";
      where += ":" + std::to_string(Int(n, "port"));
      if (!transport.empty()) where += "/" + transport;
      if (auto sc = Str(n, "syscall"); !sc.empty()) detail += ", syscall " + sc;
      Add(Severity::kMedium, Category::kNetwork, "connect to " + where, detail, tool);
    }
    if (bait_seen_) {
      Add(Severity::kHigh, Category::kNetwork,
          "network attempted after a bait file was read: possible exfiltration", "", tool);
    }
  }

  void Syscall(const json& line, const json& s) {
    std::string action = Str(s, "action");
    if (action != "denied" && action != "would_deny") return;
    std::string name = Str(s, "name");
    if (name.empty()) name = "nr " + std::to_string(Int(s, "nr"));
    std::string detail = action;
    if (auto e = Str(s, "errno_name"); !e.empty()) detail += " (" + e + ")";
    if (auto exe = Str(line, "exe"); !exe.empty()) detail += ", by " + exe;
    long long count = std::max(1LL, Int(s, "count"));
    Add(EscapeSyscall(name) ? Severity::kHigh : Severity::kMedium, Category::kSyscall, name, detail,
        ToolOf(line), static_cast<unsigned long long>(count));
  }

  void Process(const json& line, const json& p) {
    if (Str(p, "action") != "exec") return;
    std::string path = Str(p, "path");
    std::string argv;
    if (p.contains("argv") && p["argv"].is_array()) {
      for (const auto& a : p["argv"]) {
        if (a.is_string()) argv += (argv.empty() ? "" : " ") + a.get<std::string>();
      }
    }
    std::string detail = argv;
    if (auto e = Str(p, "errno_name"); !e.empty()) detail += " (refused: " + e + ")";
    // The launch: the sandbox's init executing the command, then `env` finding the interpreter
    // a shebang names. Anything else the extension started itself.
    bool launch = !install_ && (!launched_ || Basename(Str(line, "exe")) == "env");
    if (!install_) launched_ = true;
    Add(launch ? Severity::kInfo : Severity::kMedium, Category::kProcess,
        (launch ? "started " : "executed ") + Show(path), detail, ToolOf(line));
  }

  void Lifecycle(const json& line, const json& l) {
    std::string what = Str(l, "what");
    if (what == "start") launched_ = false;
    if (what == "events_dropped") {
      unsigned long long n = std::strtoull(Str(l, "detail").c_str(), nullptr, 10);
      Add(Severity::kMedium, Category::kAudit,
          "events dropped by the monitor: this report is incomplete", "", ToolOf(line),
          std::max(1ULL, n));
    }
  }

  // Every finding goes through here. An install-phase one is its own finding ("install phase:
  // ..."): what a postinstall script reads is charged to the package, not to the extension's
  // run. The install's network (the registry) and its programs (npm, node, sh for the
  // scripts) are what installing is, so they are info (network after a bait read stays high); a
  // refused syscall is low; files, bait and environment reads keep their severity: a postinstall
  // reading ~/.ssh is high.
  void Add(Severity severity, Category category, std::string summary, std::string detail,
           const std::string& tool, unsigned long long count = 1) {
    if (install_) {
      if ((category == Category::kNetwork || category == Category::kProcess) &&
          severity < Severity::kHigh) {
        severity = Severity::kInfo;  // not the exfiltration finding after a bait read
      }
      if (category == Category::kSyscall) severity = std::min(severity, Severity::kLow);
      summary = "install phase: " + summary;
    }
    out_.Add(severity, category, std::move(summary), std::move(detail), tool, count);
  }

  const LogContext& c_;
  Collector out_;
  bool install_ = false;  // the line being read is the install phase's
  bool bait_seen_ = false;
  bool launched_ = false;
  unsigned long long bad_lines_ = 0;
};

}  // namespace

std::vector<Finding> FindingsFromAuditLog(std::istream& in, const LogContext& context) {
  Analysis analysis(context);
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty()) continue;
    json line = json::parse(text, nullptr, false);
    if (line.is_discarded() || !line.is_object() || Int(line, "v") != 1) {
      analysis.BadLine();
      continue;
    }
    try {
      analysis.Line(line);
    } catch (const json::exception&) {
      analysis.BadLine();
    }
  }
  return analysis.Finish();
}

}  // namespace gander::vet
