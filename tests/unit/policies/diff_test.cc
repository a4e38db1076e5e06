#include "policies/diff.h"

#include <gtest/gtest.h>

#include "policies/loader.h"

namespace gander::policies {
namespace {

TEST(DiffRules, AddedAndRemovedAfterExtends) {
  auto a = ParsePolicy("version: 1\nextends: default\nfilesystem: {read: [/srv/a]}\n", "a.yaml");
  auto b = ParsePolicy(
      "version: 1\nextends: default\nnetwork:\n  allow: [{host: api.github.com, ports: [443]}]\n",
      "b.yaml");
  ASSERT_TRUE(a.ok() && b.ok());
  auto ma = ResolveExtends(*a, {}), mb = ResolveExtends(*b, {});
  ASSERT_TRUE(ma.ok() && mb.ok());
  EXPECT_EQ(DiffRules(*ma, *mb), (std::vector<std::string>{"- filesystem.read /srv/a",
                                                           "+ network.allow api.github.com 443"}));
  EXPECT_TRUE(DiffRules(*ma, *ma).empty());
}

}  // namespace
}  // namespace gander::policies
