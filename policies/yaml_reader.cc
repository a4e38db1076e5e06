// Reading YAML with positions; see yaml_reader.h.
#include "policies/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <optional>
#include <sstream>
#include <vector>

#include "policies/parser.h"
#include "policies/units.h"

namespace gander::policies {
namespace {

// Records where each document starts.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

}  // namespace

std::string JoinNames(std::span<const KeySpec> keys) {
  std::string out;
  for (const KeySpec& key : keys) {
    if (!out.empty()) out += ", ";
    out += key.name;
  }
  return out;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

bool IsPlainScalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

SourceMark ToSourceMark(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null()) return SourceMark{file, 0, 0};
  return SourceMark{file, mark.line + 1, mark.column + 1};
}

// YAML::LoadAll is not used: yaml-cpp 0.7 loops forever, allocating, when a token cannot start
// a node (a leading ',': jbeder/yaml-cpp#1040), yielding the same null document again and
// again. Here a document that starts where the previous one did is that case, and a syntax
// error.
Result<int> CountDocuments(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
  while (handler.starts.size() < 2 && parser.HandleNextDocument(handler)) {
  }
  if (handler.starts.size() < 2) return static_cast<int>(handler.starts.size());
  const YAML::Mark& second = handler.starts[1];
  if (second.pos == handler.starts[0].pos) {
    return MakeError(FormatMark(ToSourceMark(second, file)) +
                     ": YAML syntax error: unexpected character");
  }
  return MakeError(FormatMark(ToSourceMark(second, file)) +
                   ": a policy file holds one YAML document, found a second");
}

// Inside any scalar such a line ends the scalar (YAML 1.2, c-forbidden), so this is exact.
bool HasDocumentMarker(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    std::string_view line = text.substr(at, text.find('\n', at) - at);
    if (line.starts_with("---") || line.starts_with("...")) {
      if (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r') return true;
    }
    size_t next = text.find('\n', at);
    if (next == std::string_view::npos) break;
    at = next + 1;
  }
  return false;
}

SourceMark YamlReader::MarkOf(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return SourceMark{file_, 1, 1};
  return SourceMark{file_, mark.line + 1, mark.column + 1};
}

Error YamlReader::Fail(const YAML::Node& at, const std::string& what) const {
  return MakeError(FormatMark(MarkOf(at)) + ": " + what);
}

Result<std::string> YamlReader::KeyName(const YAML::Node& key_node, const std::string& where,
                                        std::set<std::string>& seen) const {
  if (!key_node.IsScalar()) return Fail(key_node, where + ": expected a key name");
  const std::string& key = key_node.Scalar();
  if (!seen.insert(key).second) {
    return Fail(key_node, "duplicate key " + Quote(key) + " in " + where);
  }
  return key;
}

Result<std::string> YamlReader::String(const YAML::Node& node, const std::string& where,
                                       std::string_view expected) const {
  if (!node.IsScalar()) return Fail(node, where + ": expected " + std::string(expected));
  if (node.Scalar().find('\0') != std::string::npos) {
    return Fail(node, where + ": contains a NUL character");
  }
  return node.Scalar();
}

Result<uint64_t> YamlReader::PositiveInteger(const YAML::Node& node,
                                             const std::string& where) const {
  std::optional<uint64_t> value;
  if (IsPlainScalar(node)) value = ParseUnsigned(node.Scalar());
  if (!value || *value == 0) {
    return Fail(node, where + ": expected a positive integer" +
                          (node.IsScalar() ? ", got " + Quote(node.Scalar()) : ""));
  }
  return *value;
}

Result<uint64_t> YamlReader::PositiveSize(const YAML::Node& node, const std::string& where,
                                          std::string_view expected) const {
  if (!node.IsScalar()) return Fail(node, where + ": expected " + std::string(expected));
  Result<uint64_t> size = ParseSize(node.Scalar());
  if (!size) return Fail(node, where + ": " + size.error().message);
  if (*size == 0) return Fail(node, where + ": expected " + std::string(expected) + ", got 0");
  return *size;
}

Result<uint64_t> YamlReader::PositiveDuration(const YAML::Node& node,
                                              const std::string& where) const {
  if (!node.IsScalar()) return Fail(node, where + ": expected a positive duration (30s, 8h)");
  Result<uint64_t> seconds = ParseDuration(node.Scalar());
  if (!seconds) return Fail(node, where + ": " + seconds.error().message);
  if (*seconds == 0) return Fail(node, where + ": expected a positive duration, got 0");
  return *seconds;
}

}  // namespace gander::policies
