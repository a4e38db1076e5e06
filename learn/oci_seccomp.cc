#include "learn/oci_seccomp.h"

#include <bit>
#include <cerrno>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

namespace gander::learn {
namespace {

using Json = nlohmann::ordered_json;

// The floor's entries for one syscall name, merged: denied outright, or for these patterns.
struct FloorRule {
  bool always = false;
  bool silent = false;  // a compatibility answer: returned whether seen or not
  int error = EPERM;
  std::vector<policies::ArgPattern> any_of;
  std::string label;
};

std::map<std::string, FloorRule> ByName(const std::vector<policies::DeniedSyscall>& floor) {
  std::map<std::string, FloorRule> rules;
  for (const auto& d : floor) {
    FloorRule& r = rules[std::string(d.name)];
    r.error = d.error;
    r.silent = d.silent;
    r.always = r.always || d.any_of.empty();
    r.any_of.insert(r.any_of.end(), d.any_of.begin(), d.any_of.end());
    r.label += (r.label.empty() ? "" : ", ") + std::string(d.label);
  }
  return rules;
}

bool OneArgument(const std::vector<policies::ArgPattern>& patterns) {
  for (const auto& p : patterns) {
    if (p.arg != patterns.front().arg) return false;
  }
  return true;
}

Json Allow(const std::string& name) {
  return Json{{"names", Json::array({name})}, {"action", "SCMP_ACT_ALLOW"}};
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> AllowedPatterns(
    std::span<const policies::ArgPattern> deny) {
  uint64_t relevant = 0;
  for (const auto& p : deny) relevant |= p.mask;
  std::vector<std::pair<uint64_t, uint64_t>> out;
  // Split the values on the relevant bits, highest first, until a branch is either matched by
  // a deny pattern whatever its other bits (dropped) or matched by none (one allow pattern).
  std::function<void(uint64_t, uint64_t)> walk = [&](uint64_t fixed, uint64_t value) {
    bool open = false;
    for (const auto& p : deny) {
      uint64_t known = p.mask & fixed;
      if ((value & known) != (p.value & known)) continue;  // cannot match here
      if ((p.mask & ~fixed) == 0) return;                  // matches every value here
      open = true;
    }
    if (!open) {
      out.emplace_back(fixed, value);
      return;
    }
    uint64_t bit = uint64_t{1} << (63 - std::countl_zero(relevant & ~fixed));
    walk(fixed | bit, value);
    walk(fixed | bit, value | bit);
  };
  if (!deny.empty()) walk(0, 0);
  return out;
}

std::string_view NativeOciArch() {
#if defined(__x86_64__)
  return "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
  return "SCMP_ARCH_AARCH64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "SCMP_ARCH_RISCV64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "SCMP_ARCH_PPC64LE";
#elif defined(__s390x__)
  return "SCMP_ARCH_S390X";
#else
  return "SCMP_ARCH_NATIVE";
#endif
}

OciSeccomp OciSeccompProfile(const Learned& learned,
                             const std::vector<policies::DeniedSyscall>& floor,
                             std::string_view arch) {
  const auto rules = ByName(floor);
  OciSeccomp out;
  Json plain = Json::array();
  Json conditional = Json::array();
  for (const auto& [name, calls] : learned.syscalls) {
    if (name.starts_with("nr ")) {
      out.left_out.push_back(name + " (" + std::to_string(calls) +
                             "x): no name on this architecture");
      continue;
    }
    auto rule = rules.find(name);
    if (rule == rules.end()) {
      plain.push_back(name);
      ++out.allowed;
      continue;
    }
    const FloorRule& r = rule->second;
    if (r.silent) continue;  // below, seen or not
    if (r.always || !OneArgument(r.any_of)) {
      out.left_out.push_back(name + " (" + std::to_string(calls) + "x): gander's floor denies " +
                             r.label);
      continue;
    }
    ++out.allowed;
    for (const auto& [mask, value] : AllowedPatterns(r.any_of)) {
      Json entry = Allow(name);
      entry["args"] = Json::array({Json{{"index", r.any_of.front().arg},
                                        {"value", mask},
                                        {"valueTwo", value},
                                        {"op", "SCMP_CMP_MASKED_EQ"}}});
      conditional.push_back(std::move(entry));
    }
  }
  Json syscalls = Json::array();
  if (!plain.empty()) {
    syscalls.push_back(Json{{"names", std::move(plain)}, {"action", "SCMP_ACT_ALLOW"}});
  }
  for (auto& entry : conditional) syscalls.push_back(std::move(entry));
  for (const auto& [name, r] : rules) {
    if (!r.silent) continue;
    syscalls.push_back(
        Json{{"names", Json::array({name})}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", r.error}});
  }
  Json profile = {{"defaultAction", "SCMP_ACT_ERRNO"},
                  {"defaultErrnoRet", EPERM},
                  {"architectures", Json::array({std::string(arch)})},
                  {"syscalls", std::move(syscalls)}};
  out.json = profile.dump(2) + "\n";
  return out;
}

}  // namespace gander::learn
