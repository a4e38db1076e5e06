// The tools `gander mcp` offers: names, situations (descriptions say when to use a tool, not how
// it works) and input schemas, as tools/list returns them.
#pragma once

#include <nlohmann/json.hpp>

namespace gander::mcp {

nlohmann::json ToolList();

}  // namespace gander::mcp
