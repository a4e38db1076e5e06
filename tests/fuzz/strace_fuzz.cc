// libFuzzer target: gVisor's strace lines as gander reads them from runsc's debug log
// (sandbox/gvisor/strace.h). A path the extension opens is printed unquoted in those lines,
// so the sandbox controls much of their text. The input is fed in chunks (sizes from its first
// byte) to a StraceMapper with learn mode's census on, and each line to ParseStraceLine and
// SplitStraceArgs. Checks: nothing crashes (ASan/UBSan); the arguments are views into the text.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "policies/policy.h"
#include "sandbox/gvisor/strace.h"

using namespace gander::sandbox::gvisor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gander::policies::ExpandedPolicy policy;
  policy.read = {"/etc"};
  policy.exec = {"/usr"};
  policy.private_ = {"/tmp", "/home/u"};
  policy.deny = {"/home/u/.ssh"};
  StraceMapperConfig config{.extension = "fuzz",
                            .rules = gander::monitor::ClassifierRules::From(policy, "/home/u/ws"),
                            .trial = std::nullopt,
                            .home = "/home/u",
                            .workspace = "/home/u/ws",
                            .root_symlinks = {{"/lib", "usr/lib"}, {"/bin", "usr/bin"}},
                            .files = gander::policies::FilesWatch::kAll,
                            .log_all_files = (size % 2) == 0,
                            .census = true,
                            .tool_calls = nullptr};
  StraceMapper mapper(config);
  std::vector<gander::events::Event> events;
  size_t at = 0, step = size ? 1 + data[0] % 61 : 1;
  while (at < size) {
    size_t n = std::min(step, size - at);
    mapper.Feed(text.substr(at, n), events);
    at += n;
    step = 1 + (step * 7 + 3) % 61;
  }
  mapper.Feed("\n", events);
  mapper.TakeCounts();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    if (auto rec = ParseStraceLine(line)) {
      for (std::string_view arg : SplitStraceArgs(rec->args)) {
        if (arg.data() < rec->args.data() ||
            arg.data() + arg.size() > rec->args.data() + rec->args.size())
          abort();
      }
      mapper.Map(*rec, events);
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return 0;
}
