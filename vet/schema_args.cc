#include "vet/schema_args.h"

#include <cmath>
#include <string>

namespace gander::vet {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 16;  // self-referencing or absurdly deep schemas stop here

std::string FirstType(const json& schema) {
  if (!schema.contains("type")) {
    if (schema.contains("properties") || schema.contains("required")) return "object";
    if (schema.contains("items")) return "array";
    return "";
  }
  const json& type = schema["type"];
  if (type.is_string()) return type.get<std::string>();
  if (type.is_array()) {
    for (const auto& t : type) {
      if (t.is_string() && t != "null") return t.get<std::string>();
    }
    if (!type.empty() && type[0].is_string()) return type[0].get<std::string>();
  }
  return "";
}

json StringValue(const json& schema) {
  std::string format = schema.value("format", "");
  std::string value;
  if (format == "uri" || format == "url" || format == "uri-reference" || format == "iri") {
    value = "https://example.com/";
  } else if (format == "email") {
    value = "a@example.com";
  } else if (format == "date-time") {
    value = "2026-01-01T00:00:00Z";
  } else if (format == "date") {
    value = "2026-01-01";
  } else if (format == "time") {
    value = "00:00:00Z";
  } else if (format == "uuid") {
    value = "00000000-0000-0000-0000-000000000000";
  }
  auto min_length = schema.value("minLength", 0);
  if (static_cast<long long>(value.size()) < min_length) {
    value.append(static_cast<size_t>(min_length) - value.size(), 'a');
  }
  return value;
}

json NumberValue(const json& schema, bool integer) {
  double value = 0;
  if (schema.contains("minimum") && schema["minimum"].is_number()) {
    value = schema["minimum"].get<double>();
  }
  if (schema.contains("exclusiveMinimum") && schema["exclusiveMinimum"].is_number()) {
    double ex = schema["exclusiveMinimum"].get<double>();
    value = integer ? std::floor(ex) + 1 : ex + 1;
  }
  if (value < 0 && schema.contains("maximum") && schema["maximum"].is_number() &&
      schema["maximum"].get<double>() >= 0) {
    value = 0;  // 0 when the range allows it
  }
  if (integer) value = std::ceil(value);
  if (schema.contains("multipleOf") && schema["multipleOf"].is_number()) {
    double step = schema["multipleOf"].get<double>();
    if (step > 0) value = std::ceil(value / step) * step;
  }
  if (integer) return static_cast<long long>(value);
  return value;
}

json Minimal(const json& schema, int depth);

json ObjectValue(const json& schema, int depth) {
  json out = json::object();
  if (!schema.contains("required") || !schema["required"].is_array()) return out;
  const json* properties = schema.contains("properties") && schema["properties"].is_object()
                               ? &schema["properties"]
                               : nullptr;
  for (const auto& name : schema["required"]) {
    if (!name.is_string()) continue;
    const std::string key = name.get<std::string>();
    json sub = properties && properties->contains(key) ? (*properties)[key] : json::object();
    out[key] = Minimal(sub, depth + 1);
  }
  return out;
}

json Minimal(const json& schema, int depth) {
  if (!schema.is_object() || depth > kMaxDepth) return nullptr;
  if (schema.contains("const")) return schema["const"];
  if (schema.contains("enum") && schema["enum"].is_array() && !schema["enum"].empty()) {
    return schema["enum"][0];
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (schema.contains(key) && schema[key].is_array() && !schema[key].empty()) {
      // The first alternative that is not just `null`.
      for (const auto& alt : schema[key]) {
        if (!(alt.is_object() && alt.value("type", "") == "null")) return Minimal(alt, depth + 1);
      }
      return nullptr;
    }
  }
  if (schema.contains("allOf") && schema["allOf"].is_array()) {
    json merged = schema;
    merged.erase("allOf");
    for (const auto& part : schema["allOf"]) {
      if (!part.is_object()) continue;
      for (const auto& [k, v] : part.items()) {
        if (k == "required" && merged.contains("required") && merged["required"].is_array()) {
          for (const auto& r : v) merged["required"].push_back(r);
        } else if (k == "properties" && merged.contains("properties")) {
          merged["properties"].update(v);
        } else {
          merged[k] = v;
        }
      }
    }
    return Minimal(merged, depth + 1);
  }
  std::string type = FirstType(schema);
  if (type == "string") return StringValue(schema);
  if (type == "integer") return NumberValue(schema, true);
  if (type == "number") return NumberValue(schema, false);
  if (type == "boolean") return false;
  if (type == "null") return nullptr;
  if (type == "object") return ObjectValue(schema, depth);
  if (type == "array") {
    json out = json::array();
    auto min_items = schema.value("minItems", 0);
    json item = schema.contains("items") ? schema["items"] : json::object();
    for (int i = 0; i < min_items && i < 64; ++i) out.push_back(Minimal(item, depth + 1));
    return out;
  }
  return depth == 0 ? json::object() : json(nullptr);
}

}  // namespace

json MinimalValue(const json& schema) {
  try {
    return Minimal(schema, 0);
  } catch (const json::exception&) {  // a keyword of the wrong type (minLength: "3")
    return json::object();
  }
}

json MinimalArguments(const json& schema) {
  json value = MinimalValue(schema);
  return value.is_object() ? value : json::object();
}

}  // namespace gander::vet
