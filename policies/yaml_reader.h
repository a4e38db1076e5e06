// Reading YAML with positions, for the policy parser (parser.cc): typed reads of one node that
// fail with "FILE:LINE:COL: what was expected", a walker over a mapping with a fixed set of keys,
// and the check that a text holds a single document. Nothing here knows the policy's keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "policies/policy.h"

namespace gander::policies {

// A key allowed in a mapping, and what its value must be (used in error messages).
struct KeySpec {
  std::string_view name;
  std::string_view expected;
};

// "a, b, c": the keys' names, for "expected one of: ...".
std::string JoinNames(std::span<const KeySpec> keys);

// 'text', for quoting a value in an error.
std::string Quote(std::string_view s);

// Plain (unquoted) scalars only: `processes: "10"` is a string, not a number.
bool IsPlainScalar(const YAML::Node& node);

// A yaml-cpp mark (0-based) as a SourceMark (1-based) of `file`; a null mark is 0:0.
SourceMark ToSourceMark(const YAML::Mark& mark, const std::string& file);

// Checks that `text` holds at most one YAML document (syntax errors throw, as in YAML::Load);
// returns how many (0 or 1).
Result<int> CountDocuments(const std::string& text, const std::string& file);

// Does a line start with a document marker ("---" or "..." followed by a blank or the end)?
bool HasDocumentMarker(std::string_view text);

// The node reads of one file: every error names the node's position in `file_`.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

 protected:
  SourceMark MarkOf(const YAML::Node& node) const;
  Error Fail(const YAML::Node& at, const std::string& what) const;

  // Calls handle(spec, key_path, value) for each entry of the mapping `node` (called `where` in
  // errors). Rejects a non-mapping, non-scalar keys, unknown and duplicate keys, and null values
  // (reported at the key: a missing value's own mark points at whatever follows it).
  template <typename Handler>
  Status ForEachEntry(const YAML::Node& node, const std::string& where,
                      std::span<const KeySpec> keys, Handler handle) const {
    if (!node.IsMap()) {
      return Fail(node, where + ": expected a mapping with keys: " + JoinNames(keys));
    }
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key_node = it->first;
      const YAML::Node value = it->second;
      Result<std::string> key = KeyName(key_node, where, seen);
      if (!key) return key.error();
      auto spec =
          std::find_if(keys.begin(), keys.end(), [&](const KeySpec& k) { return k.name == *key; });
      if (spec == keys.end()) {
        return Fail(key_node, "unknown key " + Quote(*key) + " in " + where +
                                  " (expected one of: " + JoinNames(keys) + ")");
      }
      std::string path = where == "policy" ? *key : where + "." + *key;
      if (value.IsNull()) return Fail(key_node, path + ": expected " + std::string(spec->expected));
      if (Status status = handle(*spec, path, value); !status) return status;
    }
    return {};
  }

  // The name of a mapping key, rejecting non-scalar and duplicate keys.
  Result<std::string> KeyName(const YAML::Node& key_node, const std::string& where,
                              std::set<std::string>& seen) const;
  Result<std::string> String(const YAML::Node& node, const std::string& where,
                             std::string_view expected) const;
  Result<uint64_t> PositiveInteger(const YAML::Node& node, const std::string& where) const;
  Result<uint64_t> PositiveSize(const YAML::Node& node, const std::string& where,
                                std::string_view expected) const;
  Result<uint64_t> PositiveDuration(const YAML::Node& node, const std::string& where) const;

  std::string file_;
};

}  // namespace gander::policies
