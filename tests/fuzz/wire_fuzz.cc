// libFuzzer target: the collector's reading of launcher lines (exporters/collector/
// wire_parse.h): a hello and then records, as a peer on the collector's socket sends them.
// The input is split at newlines; the first line is offered as a hello, every line as a
// record. Checks: an accepted hello names a valid extension; an accepted record's event JSON
// is a view into its line; nothing crashes (ASan/UBSan).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "exporters/collector/wire_parse.h"

using namespace gander::exporters::collector;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static LineParser* parser =
      new LineParser;  // its buffers live across inputs, as in the collector
  std::string_view all(reinterpret_cast<const char*>(data), size);
  bool first = true;
  while (!all.empty()) {
    size_t nl = all.find('\n');
    std::string line(all.substr(0, nl));  // a copy: simdjson reads past the end of its view
    all = nl == std::string_view::npos ? std::string_view() : all.substr(nl + 1);
    if (first) {
      first = false;
      auto hello = parser->ParseHello(line);
      if (hello && !ValidExtensionName(hello->extension)) abort();
    }
    auto rec = parser->ParseLine(line);
    if (rec && rec->kind == LauncherLine::Kind::kRecord && !rec->event_json.empty()) {
      if (rec->event_json.size() > line.size()) abort();
    }
    ParseRfc3339Micros(line);
  }
  return 0;
}
