#include "vet/schema_args.h"

#include <gtest/gtest.h>

namespace gander::vet {
namespace {

using nlohmann::json;

TEST(SchemaArgs, RequiredPropertiesOnly) {
  json schema = json::parse(R"({"type":"object","properties":{
      "path":{"type":"string"},"depth":{"type":"integer","minimum":1},
      "verbose":{"type":"boolean"}},"required":["path","depth"]})");
  EXPECT_EQ(MinimalArguments(schema), json::parse(R"({"path":"","depth":1})"));
}

TEST(SchemaArgs, Scalars) {
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"string","minLength":3})")), "aaa");
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"string","format":"uri"})")),
            "https://example.com/");
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"integer","exclusiveMinimum":0})")), 1);
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"number","minimum":-5,"maximum":5})")), 0.0);
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"integer","minimum":3,"multipleOf":5})")), 5);
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":"boolean"})")), false);
  EXPECT_EQ(MinimalValue(json::parse(R"({"enum":["b","a"]})")), "b");
  EXPECT_EQ(MinimalValue(json::parse(R"({"const":42})")), 42);
  EXPECT_EQ(MinimalValue(json::parse(R"({"type":["null","string"]})")), "");
}

TEST(SchemaArgs, ArraysAndNesting) {
  json schema = json::parse(R"({"type":"object","required":["entities"],"properties":{
      "entities":{"type":"array","minItems":1,"items":{"type":"object",
        "required":["name","observations"],"properties":{"name":{"type":"string"},
        "observations":{"type":"array","items":{"type":"string"}}}}}}})");
  EXPECT_EQ(MinimalArguments(schema),
            json::parse(R"({"entities":[{"name":"","observations":[]}]})"));
}

TEST(SchemaArgs, Combinators) {
  EXPECT_EQ(MinimalValue(json::parse(R"({"anyOf":[{"type":"null"},{"type":"integer"}]})")), 0);
  EXPECT_EQ(
      MinimalValue(json::parse(
          R"({"allOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},
                             {"required":["b"],"properties":{"b":{"type":"boolean"}}}]})")),
      json::parse(R"({"a":"","b":false})"));
}

TEST(SchemaArgs, OddSchemasGiveAnObject) {
  EXPECT_EQ(MinimalArguments(json()), json::object());
  EXPECT_EQ(MinimalArguments(json::parse(R"({"$ref":"#/defs/x"})")), json::object());
  EXPECT_EQ(MinimalArguments(json::parse(R"({"type":"string"})")), json::object());
  // A keyword of the wrong type does not throw.
  EXPECT_EQ(
      MinimalArguments(json::parse(
          R"({"type":"object","required":["s"],"properties":{"s":{"type":"string","minLength":"3"}}})")),
      json::object());
  // A property required but not described: null.
  EXPECT_EQ(MinimalArguments(json::parse(R"({"type":"object","required":["x"]})")),
            json::parse(R"({"x":null})"));
}

}  // namespace
}  // namespace gander::vet
