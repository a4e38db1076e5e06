// The policy fingerprint (policies/fingerprint.h).
#include "policies/fingerprint.h"

#include <gtest/gtest.h>

namespace gander::policies {
namespace {

TEST(PolicySha256Test, IsTheSha256OfTheCanonicalText) {
  ExpandedPolicy empty;
  EXPECT_EQ(CanonicalText(empty), "monitor.files 1\n");
  // sha256("monitor.files 1\n"), computed with sha256sum.
  EXPECT_EQ(PolicySha256(empty), "639b0a7edf37e0cbd387a1fa152db102e68c82aac52a65c80371b675778436a8");
}

TEST(PolicySha256Test, ChangesWithEveryRuleAndNotWithTheSources) {
  ExpandedPolicy base;
  base.read = {"/etc"};
  base.sources = {"a.yaml"};
  ExpandedPolicy same = base;
  same.sources = {"b.yaml", "profile:default"};
  EXPECT_EQ(PolicySha256(base), PolicySha256(same));
  for (auto change : std::initializer_list<void (*)(ExpandedPolicy&)>{
           [](ExpandedPolicy& p) { p.read.push_back("/usr"); },
           [](ExpandedPolicy& p) { p.deny.push_back("/etc/shadow"); },
           [](ExpandedPolicy& p) { p.limits.processes = 10; },
           [](ExpandedPolicy& p) { p.network.allow.push_back({"a.example", {443}, {}}); },
           [](ExpandedPolicy& p) { p.env_set["X"] = "1"; },
           [](ExpandedPolicy& p) { p.files = FilesMonitoring::kAll; }}) {
    ExpandedPolicy changed = base;
    change(changed);
    EXPECT_NE(PolicySha256(changed), PolicySha256(base)) << CanonicalText(changed);
    EXPECT_EQ(PolicySha256(changed).size(), 64u);
  }
}

}  // namespace
}  // namespace gander::policies
