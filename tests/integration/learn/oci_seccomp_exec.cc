// Test helper: loads an OCI runtime-spec seccomp profile (linux.seccomp) with libseccomp, the
// way runc and crun do, then execs a command under it.
//   oci_seccomp_exec PROFILE.json COMMAND [ARGS...]
// Exit 2 when the profile cannot be read or compiled (the message says where), 126/127 when
// the command cannot be executed, else the command's status.
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "oci_seccomp_exec: %s\n", what.c_str());
  return 2;
}

bool Action(const std::string& name, uint32_t errno_ret, uint32_t* out) {
  static const std::map<std::string, uint32_t> kFixed = {
      {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
      {"SCMP_ACT_KILL", SCMP_ACT_KILL},
      {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
      {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
      {"SCMP_ACT_LOG", SCMP_ACT_LOG},
      {"SCMP_ACT_TRAP", SCMP_ACT_TRAP}};
  if (name == "SCMP_ACT_ERRNO") {
    *out = SCMP_ACT_ERRNO(errno_ret);
    return true;
  }
  if (name == "SCMP_ACT_TRACE") {
    *out = SCMP_ACT_TRACE(errno_ret);
    return true;
  }
  auto it = kFixed.find(name);
  if (it == kFixed.end()) return false;
  *out = it->second;
  return true;
}

bool Op(const std::string& name, scmp_compare* out) {
  static const std::map<std::string, scmp_compare> kOps = {
      {"SCMP_CMP_NE", SCMP_CMP_NE},
      {"SCMP_CMP_LT", SCMP_CMP_LT},
      {"SCMP_CMP_LE", SCMP_CMP_LE},
      {"SCMP_CMP_EQ", SCMP_CMP_EQ},
      {"SCMP_CMP_GE", SCMP_CMP_GE},
      {"SCMP_CMP_GT", SCMP_CMP_GT},
      {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};
  auto it = kOps.find(name);
  if (it == kOps.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Fail("usage: oci_seccomp_exec PROFILE.json COMMAND [ARGS...]");
  std::ifstream in(argv[1]);
  if (!in) return Fail(std::string("cannot read ") + argv[1]);
  nlohmann::json p = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!p.is_object()) return Fail(std::string(argv[1]) + ": not a JSON object");

  const uint32_t default_errno = p.value("defaultErrnoRet", EPERM);
  uint32_t default_action;
  if (!Action(p.value("defaultAction", ""), default_errno, &default_action)) {
    return Fail("defaultAction: unknown or missing");
  }
  scmp_filter_ctx ctx = seccomp_init(default_action);
  if (!ctx) return Fail("seccomp_init failed");
  for (const auto& arch : p.value("architectures", nlohmann::json::array())) {
    std::string name = arch.get<std::string>();
    // SCMP_ARCH_X86_64 -> x86_64, as libseccomp names them.
    std::string lower = name.starts_with("SCMP_ARCH_") ? name.substr(10) : name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    uint32_t token = seccomp_arch_resolve_name(lower.c_str());
    if (token == 0) return Fail("unknown architecture " + name);
    int rc = seccomp_arch_add(ctx, token);
    if (rc < 0 && rc != -EEXIST) return Fail("cannot add architecture " + name);
  }
  for (const auto& s : p.value("syscalls", nlohmann::json::array())) {
    uint32_t action;
    if (!Action(s.value("action", ""), s.value("errnoRet", uint32_t{EPERM}), &action)) {
      return Fail("unknown action in " + s.dump());
    }
    if (action == default_action) continue;  // libseccomp refuses a redundant rule
    std::vector<scmp_arg_cmp> args;
    for (const auto& a : s.value("args", nlohmann::json::array())) {
      scmp_compare op;
      if (!Op(a.value("op", ""), &op)) return Fail("unknown op in " + a.dump());
      args.push_back({a.value("index", 0u), op, a.value("value", uint64_t{0}),
                      a.value("valueTwo", uint64_t{0})});
    }
    for (const auto& n : s.value("names", nlohmann::json::array())) {
      std::string name = n.get<std::string>();
      int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr == __NR_SCMP_ERROR) continue;  // unknown here: runc skips it too
      int rc =
          seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()), args.data());
      if (rc < 0) return Fail("rule for " + name + ": " + std::strerror(-rc));
    }
  }
  if (int rc = seccomp_load(ctx); rc < 0) {
    return Fail(std::string("seccomp_load: ") + std::strerror(-rc));
  }
  seccomp_release(ctx);
  execvp(argv[2], argv + 2);
  int err = errno;
  std::fprintf(stderr, "oci_seccomp_exec: %s: %s\n", argv[2], std::strerror(err));
  return err == ENOENT ? 127 : 126;
}
