#include "launcher/gvisor/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "learn/oci_seccomp.h"
#include "policies/policy.h"

namespace gander::launcher::gvisor {
namespace {

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Json(items[i]);
  return out + "]";
}

std::string Mount(const std::string& target, const std::string& type, const std::string& source,
                  const std::vector<std::string>& options) {
  return fmt::format(R"(    {{"destination": {}, "type": {}, "source": {}, "options": {}}})",
                     Json(target), Json(type), Json(source), JsonList(options));
}

}  // namespace

std::string RlimitName(int resource) {
  switch (resource) {
    case RLIMIT_NPROC:
      return "RLIMIT_NPROC";
    case RLIMIT_NOFILE:
      return "RLIMIT_NOFILE";
    case RLIMIT_FSIZE:
      return "RLIMIT_FSIZE";
    case RLIMIT_CORE:
      return "RLIMIT_CORE";
    case RLIMIT_DATA:
      return "RLIMIT_DATA";
    case RLIMIT_AS:
      return "RLIMIT_AS";
    case RLIMIT_STACK:
      return "RLIMIT_STACK";
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> RootSymlinks(const std::vector<MountOp>& mounts) {
  std::vector<std::pair<std::string, std::string>> links;
  for (const MountOp& m : mounts) {
    if (m.kind == MountOp::Kind::kSymlink) links.emplace_back(m.target, m.source);
  }
  return links;
}

std::string OciConfig(const BundleSpec& spec) {
  std::vector<std::string> mounts;
  for (const MountOp& m : spec.mounts) {
    switch (m.kind) {
      case MountOp::Kind::kBind: {
        std::vector<std::string> options{"rbind", m.writable ? "rw" : "ro", "nosuid", "nodev"};
        if (!m.executable) options.push_back("noexec");
        mounts.push_back(Mount(m.target, "bind", m.source, options));
        break;
      }
      case MountOp::Kind::kTmpfs:
        mounts.push_back(Mount(m.target, "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=700"}));
        break;
      case MountOp::Kind::kMaskDir:
        mounts.push_back(Mount(m.target, "tmpfs", "tmpfs", {"ro", "nosuid", "nodev", "noexec"}));
        break;
      case MountOp::Kind::kMaskFile:
        mounts.push_back(Mount(m.target, "bind", "/dev/null", {"rbind", "ro"}));
        break;
      case MountOp::Kind::kProc:
        mounts.push_back(Mount(m.target, "proc", "proc", {"nosuid", "nodev", "noexec"}));
        break;
      case MountOp::Kind::kDev:
        mounts.push_back(Mount(m.target, "tmpfs", "tmpfs", {"nosuid", "mode=755"}));
        break;
      case MountOp::Kind::kCgroup:
        break;  // runsc --cgroupfs mounts the sentry's own (runsc.cc)
      case MountOp::Kind::kSymlink:
        break;  // RootSymlinks: made in the root directory itself
    }
  }
  std::vector<std::string> rlimits;
  for (const auto& [resource, value] : spec.rlimits) {
    std::string name = RlimitName(resource);
    if (name.empty()) continue;
    rlimits.push_back(fmt::format(R"(      {{"type": "{}", "hard": {}, "soft": {}}})", name,
                                  static_cast<uint64_t>(value), static_cast<uint64_t>(value)));
  }
  auto join = [](const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n" : "\n") + items[i];
    return out;
  };
  // The allowlist as OCI seccomp, for runsc --oci-seccomp: names only (gVisor's sentry
  // implements the syscalls; the host floor is not its concern). ENOSYS as native, though
  // runsc 20221219 answers EPERM whatever errnoRet says.
  std::string seccomp;
  if (spec.syscalls_allow) {
    std::vector<std::string> names = *spec.syscalls_allow;
    for (const char* name : policies::kImplicitSyscalls) names.emplace_back(name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    seccomp = fmt::format(
        R"(,
    "seccomp": {{
      "defaultAction": "SCMP_ACT_ERRNO",
      "defaultErrnoRet": {},
      "architectures": [{}],
      "syscalls": [{{"names": {}, "action": "SCMP_ACT_ALLOW"}}]
    }})",
        ENOSYS, Json(std::string(learn::NativeOciArch())), JsonList(names));
  }
  // uid 0 inside gVisor's own user namespace: rootless runsc maps it to the caller, so what
  // the extension writes belongs to the user. No capabilities at all.
  return fmt::format(R"({{
  "ociVersion": "1.0.0",
  "process": {{
    "terminal": false,
    "user": {{"uid": 0, "gid": 0}},
    "args": {},
    "env": {},
    "cwd": {},
    "capabilities": {{"bounding": [], "effective": [], "inheritable": [], "permitted": []}},
    "rlimits": [{}
    ],
    "noNewPrivileges": true
  }},
  "root": {{"path": {}, "readonly": true}},
  "hostname": {},
  "mounts": [{}
  ],
  "linux": {{
    "namespaces": [{{"type": "pid"}}, {}{{"type": "ipc"}}, {{"type": "uts"}}, {{"type": "mount"}}]{}
  }}
}}
)",
                     JsonList(spec.argv), JsonList(spec.envp), Json(spec.cwd), join(rlimits),
                     Json(spec.root), Json(spec.hostname), join(mounts),
                     spec.host_network ? "" : R"({"type": "network"}, )", seccomp);
}

}  // namespace gander::launcher::gvisor
