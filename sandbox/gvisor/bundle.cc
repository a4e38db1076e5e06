#include "sandbox/gvisor/bundle.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "learn/oci_seccomp.h"
#include "policies/denied_syscalls.h"
#include "policies/policy.h"

namespace gander::sandbox::gvisor {
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

// One OCI seccomp rule: `names` answered with `action` (errno `error` for SCMP_ACT_ERRNO),
// optionally only when (args[index] & mask) == value.
std::string Rule(const std::vector<std::string>& names, const char* action, int error,
                 const policies::ArgPattern* when = nullptr) {
  std::string rule = fmt::format(R"({{"names": {}, "action": "{}")", JsonList(names), action);
  if (std::string_view(action) == "SCMP_ACT_ERRNO")
    rule += fmt::format(R"(, "errnoRet": {})", error);
  if (when) {
    rule += fmt::format(
        R"(, "args": [{{"index": {}, "value": {}, "valueTwo": {}, "op": "SCMP_CMP_MASKED_EQ"}}])",
        when->arg, when->mask, when->value);
  }
  return "        " + rule + "}";
}

}  // namespace

std::vector<std::string> FloorSeccompRules(const std::optional<std::vector<std::string>>& allow) {
  // gVisor's netstack and sentry are the sandbox's kernel: no host-socket rules (DenyOptions
  // {}), and clone3 needs no ENOSYS answer (runsc 20221219 does not implement it: ENOSYS).
  const std::vector<policies::DeniedSyscall> floor =
      policies::DeniedSyscalls({.deny_exec_memfd = true});
  std::vector<std::string> rules;
  if (!allow) {
    // Everything but the floor: the default allows, each floor entry refuses (per pattern).
    for (const policies::DeniedSyscall& d : floor) {
      if (d.silent) continue;
      // Left to the sentry, which refuses them for want of a capability (the bundle grants
      // none) and logs the refusal in its strace: refused here, they would be silent.
      if (d.name == "mount" || d.name == "umount2" || d.name == "pivot_root" ||
          d.name == "chroot") {
        continue;
      }
      std::vector<std::string> names{std::string(d.name)};
      if (d.any_of.empty()) {
        rules.push_back(Rule(names, "SCMP_ACT_ERRNO", d.error));
        continue;
      }
      for (const policies::ArgPattern& p : d.any_of) {
        policies::ArgPattern masked = p;
        rules.push_back(Rule(names, "SCMP_ACT_ERRNO", d.error, &masked));
      }
    }
    return rules;
  }
  // An allowlist: the default refuses; names the floor refuses outright are left out, and a
  // name the floor refuses for some argument values is allowed only for the others.
  std::vector<std::string> plain;
  std::vector<std::string> names = *allow;
  for (const char* name : policies::kImplicitSyscalls) names.emplace_back(name);
  // clone3: an unlisted name gets EPERM from runsc (whatever errnoRet says), and libc falls
  // back to clone only on ENOSYS, so threads could not start. Allowed, it reaches the sentry,
  // which does not implement it (ENOSYS), as the native floor answers; a gVisor census never
  // sees it, so a policy suggested from one lacks it.
  names.emplace_back("clone3");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    auto entry = std::find_if(floor.begin(), floor.end(),
                              [&](const policies::DeniedSyscall& d) { return d.name == name; });
    if (entry == floor.end() || entry->silent) {
      plain.push_back(name);
      continue;
    }
    if (entry->any_of.empty()) continue;
    bool one_argument = std::all_of(
        entry->any_of.begin(), entry->any_of.end(),
        [&](const policies::ArgPattern& p) { return p.arg == entry->any_of.front().arg; });
    if (!one_argument) continue;  // cannot be expressed as ORed allows: left out
    for (const auto& [mask, value] : learn::AllowedPatterns(entry->any_of)) {
      policies::ArgPattern allowed{entry->any_of.front().arg, mask, value};
      rules.push_back(Rule({name}, "SCMP_ACT_ALLOW", 0, &allowed));
    }
  }
  if (!plain.empty()) rules.insert(rules.begin(), Rule(plain, "SCMP_ACT_ALLOW", 0));
  return rules;
}

namespace {

// linux.seccomp for runsc --oci-seccomp: gander's dangerous-syscall floor (the same table as
// the native filter, policies/denied_syscalls.h) in every mode, and `syscalls.allow` when the
// policy has one. gVisor's sentry applies it to the sandbox's processes: without it nested
// user namespaces, ptrace and io_uring worked inside gVisor's kernel. runsc 20221219 answers
// EPERM whatever errnoRet says.
std::string SeccompSection(const BundleSpec& spec) {
  std::vector<std::string> rules = FloorSeccompRules(spec.syscalls_allow);
  std::string joined;
  for (size_t i = 0; i < rules.size(); ++i) joined += (i ? ",\n" : "\n") + rules[i];
  return fmt::format(
      R"(,
    "seccomp": {{
      "defaultAction": "{}",
      "defaultErrnoRet": {},
      "architectures": [{}],
      "syscalls": [{}
      ]
    }})",
      spec.syscalls_allow ? "SCMP_ACT_ERRNO" : "SCMP_ACT_ALLOW", ENOSYS,
      Json(std::string(learn::NativeOciArch())), joined);
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
        // An entry of a split directory that is gone since the plan: skipped (MountOp).
        if (m.optional && access(m.source.c_str(), F_OK) != 0) break;
        std::vector<std::string> options{"rbind", m.writable ? "rw" : "ro", "nosuid", "nodev"};
        if (!m.executable) options.push_back("noexec");
        mounts.push_back(Mount(m.target, "bind", m.source, options));
        break;
      }
      case MountOp::Kind::kTmpfs: {
        // noexec as the native backend's private /tmp and $HOME: nothing written there runs.
        std::vector<std::string> options{"nosuid", "nodev", "noexec", "mode=700"};
        if (spec.tmpfs_size) options.push_back("size=" + std::to_string(spec.tmpfs_size));
        if (spec.tmpfs_inodes) options.push_back("nr_inodes=" + std::to_string(spec.tmpfs_inodes));
        mounts.push_back(Mount(m.target, "tmpfs", "tmpfs", options));
        break;
      }
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
  const std::string seccomp = SeccompSection(spec);
  std::vector<std::string> resources;
  if (spec.memory_limit) {
    resources.push_back(fmt::format(R"("memory": {{"limit": {}, "swap": {}}})", spec.memory_limit,
                                    spec.memory_limit));
  }
  if (spec.pids_limit)
    resources.push_back(fmt::format(R"("pids": {{"limit": {}}})", spec.pids_limit));
  std::string resources_section;
  for (const auto& r : resources) resources_section += (resources_section.empty() ? "" : ", ") + r;
  if (!resources_section.empty())
    resources_section = ",\n    \"resources\": {" + resources_section + "}";
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
    "namespaces": [{{"type": "pid"}}, {}{{"type": "ipc"}}, {{"type": "uts"}}, {{"type": "mount"}}]{}{}
  }}
}}
)",
                     JsonList(spec.argv), JsonList(spec.envp), Json(spec.cwd), join(rlimits),
                     Json(spec.root), Json(spec.hostname), join(mounts),
                     spec.host_network ? "" : R"({"type": "network"}, )", resources_section,
                     seccomp);
}

}  // namespace gander::sandbox::gvisor
