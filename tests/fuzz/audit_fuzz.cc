// libFuzzer target: the audit-log reader behind `gander policy suggest` and `gander audit`
// (learn/audit_reader.h). An audit log records what the extension did, so its paths, tool
// names and addresses are the sandbox's text. The input is read as a log, for any extension
// and for one, then rebased onto another workspace. Checks: nothing crashes (ASan/UBSan); the
// bad-line count never exceeds the lines read.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "learn/audit_reader.h"

using namespace gander::learn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const char* ext : {"", "fs"}) {
    std::istringstream in(text);
    Learned learned;
    AddAuditStream(in, ext, learned);
    if (learned.bad_lines > lines) abort();
    RebaseWorkspaces(learned, "/home/u/other");
  }
  return 0;
}
