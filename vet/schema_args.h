// `gander audit --exercise`: the arguments each tool is called with, made from its input JSON
// Schema: the smallest value that satisfies it (required properties only, minimum lengths and
// bounds, an enum's first value). Pure.
#pragma once

#include <nlohmann/json.hpp>

namespace gander::vet {

// A minimal value valid under `schema` (a JSON Schema object; `true`/absent: anything).
// Covers type (and type lists: the first non-null), enum, const, default is ignored on purpose
// (a default may be a real path), properties/required, items/minItems, minLength, minimum /
// exclusiveMinimum / multipleOf for numbers, anyOf/oneOf (the first), allOf (merged objects),
// and common string formats (uri, email, date-time, date, uuid). `$ref` and unknown shapes
// give null at depth, {} at the top.
nlohmann::json MinimalValue(const nlohmann::json& schema);

// The `arguments` of a tools/call for a tool whose inputSchema is `schema`: always an object.
nlohmann::json MinimalArguments(const nlohmann::json& schema);

}  // namespace gander::vet
