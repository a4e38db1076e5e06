// libFuzzer target: the relay's JSON scanner (relay/json_scanner.h) against simdjson's DOM
// parser, a full validator. They must agree on what is JSON, except for numbers (simdjson
// refuses integers past 64 bits, which JSON and serde_json allow). Nothing may crash
// (ASan/UBSan), and a view the scanner hands out stays inside the input or its buffer.
#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "relay/json_scanner.h"

namespace {

using gander::relay::JsonScanner;

struct Counter {
  size_t events = 0;
  void Null() { ++events; }
  void Bool(bool) { ++events; }
  void Number(std::string_view n) {
    if (n.empty()) abort();
    ++events;
  }
  void String(std::string_view s) { events += s.size() > 0; }
  void Key(std::string_view) { ++events; }
  void StartObject() { ++events; }
  void StartArray() { ++events; }
  void End() { ++events; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string strings;
  std::vector<char> nesting;
  Counter counter;
  bool ours = JsonScanner(in, strings, nesting).Run(counter);

  static simdjson::dom::parser parser(1 << 20);  // its default depth is 1024 too
  simdjson::padded_string padded(in);
  simdjson::dom::element root;
  auto error = parser.parse(padded).get(root);
  bool theirs = !error;
  if (error == simdjson::NUMBER_ERROR || error == simdjson::NUMBER_OUT_OF_RANGE) {
    return 0;
  }
  if (ours != theirs) abort();
  return 0;
}
