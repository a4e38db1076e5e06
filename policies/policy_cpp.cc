// See policy_cpp.h. Every struct is written with designated initializers in declaration
// order; a field added to policy.h and not written here keeps its default in the generated
// profiles, which tests/unit/policies/parsed_profiles_test.cc catches (it compares every shipped
// profile's generated Policy with the parsed one).
#include "policies/policy_cpp.h"

#include <cstdio>
#include <sstream>

namespace gander::policies {
namespace {

class Writer {
 public:
  Writer(const std::string& source, const std::string& name_var)
      : source_(source), name_var_(name_var) {}

  std::string Take() { return out_.str(); }

  void Str(const std::string& s) {
    if (s == source_) {
      out_ << name_var_;
      return;
    }
    out_ << "std::string(\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out_ << '\\' << c;
      } else if (c < 0x20 || c >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\%03o", c);
        out_ << buf;
      } else {
        out_ << c;
      }
    }
    out_ << "\")";
  }
  void U64(uint64_t v) { out_ << v << "ULL"; }
  void Int(int v) { out_ << v; }
  void Bool(bool v) { out_ << (v ? "true" : "false"); }
  template <typename E>
  void Enum(const char* type, E v) {
    out_ << "static_cast<" << type << ">(" << static_cast<int>(v) << ")";
  }
  template <typename T, typename F>
  void Opt(const std::optional<T>& v, F write) {
    if (!v) {
      out_ << "std::nullopt";
      return;
    }
    write(*v);
  }
  template <typename T, typename F>
  void Vec(const std::vector<T>& items, F write) {
    out_ << "{";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ << ", ";
      write(items[i]);
    }
    out_ << "}";
  }
  template <typename K, typename V, typename FK, typename FV>
  void Map(const std::map<K, V>& items, FK key, FV value) {
    out_ << "{";
    bool first = true;
    for (const auto& [k, v] : items) {
      if (!first) out_ << ", ";
      first = false;
      out_ << "{";
      key(k);
      out_ << ", ";
      value(v);
      out_ << "}";
    }
    out_ << "}";
  }
  // Opens `Type{`, and each field as `.name = `.
  void Open(const char* type) { out_ << type << "{"; }
  void Field(const char* name, bool first = false) {
    out_ << (first ? "." : ", .") << name << " = ";
  }
  void Close() { out_ << "}"; }

  void Mark(const SourceMark& m) {
    Open("SourceMark");
    Field("file", true);
    Str(m.file);
    Field("line");
    Int(m.line);
    Field("column");
    Int(m.column);
    Close();
  }
  void Path(const PathEntry& e) {
    Open("PathEntry");
    Field("path", true);
    Str(e.path);
    Field("mark");
    Mark(e.mark);
    Close();
  }
  void Paths(const std::vector<PathEntry>& v) {
    Vec(v, [this](const PathEntry& e) { Path(e); });
  }
  void Strings(const std::vector<std::string>& v) {
    Vec(v, [this](const std::string& s) { Str(s); });
  }
  void OptU64(const std::optional<uint64_t>& v) {
    Opt(v, [this](uint64_t x) { U64(x); });
  }
  void OptStr(const std::optional<std::string>& v) {
    Opt(v, [this](const std::string& x) { Str(x); });
  }

  void Filesystem(const FilesystemRules& f) {
    Open("FilesystemRules");
    Field("read", true);
    Paths(f.read);
    Field("exec");
    Paths(f.exec);
    Field("write");
    Paths(f.write);
    Field("private_");
    Paths(f.private_);
    Field("deny");
    Paths(f.deny);
    Close();
  }
  void Env(const EnvRules& e) {
    Open("EnvRules");
    Field("pass", true);
    Strings(e.pass);
    Field("set");
    Map(
        e.set, [this](const std::string& k) { Str(k); }, [this](const std::string& v) { Str(v); });
    Field("set_marks");
    Map(
        e.set_marks, [this](const std::string& k) { Str(k); },
        [this](const SourceMark& m) { Mark(m); });
    Close();
  }
  void LimitsOf(const Limits& l) {
    Open("Limits");
    Field("processes", true);
    OptU64(l.processes);
    Field("open_files");
    OptU64(l.open_files);
    Field("file_size");
    OptU64(l.file_size);
    Field("core_dumps");
    Opt(l.core_dumps, [this](bool b) { Bool(b); });
    Field("memory");
    OptU64(l.memory);
    Field("tmpfs_size");
    OptU64(l.tmpfs_size);
    Field("tmpfs_inodes");
    OptU64(l.tmpfs_inodes);
    Close();
  }
  void Rule(const NetworkRule& r) {
    Open("NetworkRule");
    Field("host", true);
    Str(r.host);
    Field("ports");
    out_ << "std::vector<uint16_t>";
    Vec(r.ports, [this](uint16_t p) { Int(p); });
    Field("mark");
    Mark(r.mark);
    Field("protocol");
    Opt(r.protocol, [this](Protocol p) { Enum("Protocol", p); });
    Close();
  }
  void Network(const NetworkRules& n) {
    Open("NetworkRules");
    Field("allow", true);
    Vec(n.allow, [this](const NetworkRule& r) { Rule(r); });
    Field("deny");
    Vec(n.deny, [this](const NetworkRule& r) { Rule(r); });
    Field("deny_errno");
    OptStr(n.deny_errno);
    Close();
  }
  void Monitor(const MonitorRules& m) {
    Open("MonitorRules");
    Field("files", true);
    Opt(m.files, [this](FilesMonitoring f) { Enum("FilesMonitoring", f); });
    Field("audit_log");
    Opt(m.audit_log, [this](const PathEntry& e) { Path(e); });
    Field("audit_log_max_size");
    OptU64(m.audit_log_max_size);
    Field("audit_log_files");
    OptU64(m.audit_log_files);
    Field("osv_endpoint");
    OptStr(m.osv_endpoint);
    Close();
  }
  void Secret(const SecretRule& s) {
    Open("SecretRule");
    Field("from", true);
    Enum("SecretSource", s.from);
    Field("env_name");
    Str(s.env_name);
    Field("path");
    Path(s.path);
    Field("run");
    Str(s.run);
    Field("json");
    Str(s.json);
    Field("expires");
    Str(s.expires);
    Field("timeout_ms");
    OptU64(s.timeout_ms);
    Field("ttl_s");
    OptU64(s.ttl_s);
    Field("on_expiry");
    Opt(s.on_expiry, [this](ExpiryAction a) { Enum("ExpiryAction", a); });
    Field("revoke");
    Str(s.revoke);
    Field("as");
    Enum("SecretDelivery", s.as);
    Field("mark");
    Mark(s.mark);
    Close();
  }
  void Syscalls(const SyscallRules& r) {
    Open("SyscallRules");
    Field("allow", true);
    Opt(r.allow, [this](const std::vector<SyscallEntry>& v) {
      out_ << "std::vector<SyscallEntry>";
      Vec(v, [this](const SyscallEntry& e) {
        Open("SyscallEntry");
        Field("name", true);
        Str(e.name);
        Field("mark");
        Mark(e.mark);
        Close();
      });
    });
    Field("allow_mark");
    Mark(r.allow_mark);
    Close();
  }
  void Whole(const Policy& p) {
    Open("Policy");
    Field("version", true);
    Int(p.version);
    Field("extends");
    OptStr(p.extends);
    Field("extends_mark");
    Mark(p.extends_mark);
    Field("filesystem");
    Filesystem(p.filesystem);
    Field("env");
    Env(p.env);
    Field("limits");
    LimitsOf(p.limits);
    Field("network");
    Network(p.network);
    Field("monitor");
    Monitor(p.monitor);
    Field("secrets");
    Map(
        p.secrets, [this](const std::string& k) { Str(k); },
        [this](const SecretRule& s) { Secret(s); });
    Field("syscalls");
    Syscalls(p.syscalls);
    Field("backend");
    Opt(p.backend, [this](Backend b) { Enum("Backend", b); });
    Field("backend_mark");
    Mark(p.backend_mark);
    Field("install");
    Opt(p.install, [this](bool b) { Bool(b); });
    Field("source");
    Str(p.source);
    Field("chain");
    Strings(p.chain);
    Close();
  }

 private:
  const std::string& source_;
  const std::string& name_var_;
  std::ostringstream out_;
};

}  // namespace

std::string PolicyToCpp(const Policy& policy, const std::string& source,
                        const std::string& name_var) {
  Writer w(source, name_var);
  w.Whole(policy);
  return w.Take();
}

}  // namespace gander::policies
