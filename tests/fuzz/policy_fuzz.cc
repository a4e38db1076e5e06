// libFuzzer target: the policy loader, YAML to a merged Policy (policies/loader.h). A policy
// can come from the workspace the extension writes to (a checkout's policy file), so its text
// is attacker input. The input is written to a file in a private directory holding a valid
// base.yaml and a FIFO (pipe.yaml), loaded, its `extends` chain followed (files there, or the
// built-in profiles), and the result printed back and parsed again. Checks: nothing crashes
// or hangs (ASan/UBSan; a FIFO must be refused, not waited on); a merged policy has no
// `extends`; ToYaml of a merged policy parses.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "policies/loader.h"

using namespace gander::policies;
using gander::Result;

namespace {

const std::string& Dir() {
  static const std::string dir = [] {
    char templ[] = "/tmp/policy_fuzz.XXXXXX";
    if (!mkdtemp(templ)) abort();
    std::string d = templ;
    std::ofstream(d + "/base.yaml") << "version: 1\nfilesystem:\n  read: [/etc]\n"
                                       "network:\n  - host: example.com\n    ports: [443]\n";
    if (mkfifo((d + "/pipe.yaml").c_str(), 0600) != 0) abort();
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = Dir() + "/leaf.yaml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  Result<Policy> leaf = LoadPolicyFile(path);
  if (!leaf) return 0;
  Result<Policy> merged = ResolveExtends(*leaf, {Dir()});
  if (!merged) return 0;
  if (merged->extends) abort();
  std::string yaml = ToYaml(*merged);
  if (!ParsePolicy(yaml, "roundtrip")) abort();
  return 0;
}
