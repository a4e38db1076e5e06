// Where the run's cgroup is made and what the sandbox is granted of it (sandbox/cgroup_limit.h,
// sandbox/cgroup_view.h): pure logic over fake hierarchies. The kernel side is covered by
// tests/integration/escape/cgroup_test.cc.
#include "sandbox/cgroup_limit.h"

#include <gtest/gtest.h>

#include <set>

#include "sandbox/gvisor/bundle.h"

namespace gander::sandbox {
namespace {

// This machine: v1 memory/pids/freezer, a v2 mount with hugetlb only.
std::vector<CgroupMount> HybridHost() {
  return {{"cgroup", "memory", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/job"},
          {"cgroup", "pids", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids"},
          {"cgroup", "freezer", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/freezer"},
          {"cgroup", "cpu", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu"},
          {"cgroup2", "", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified"}};
}

// An Ubuntu desktop: pure v2, gander in a terminal's scope under the user manager.
std::vector<CgroupMount> DesktopHost() {
  return {{"cgroup2", "", "/sys/fs/cgroup",
           "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope"}};
}

CgroupProbe Probe(std::set<std::string> writable, std::string controllers) {
  static std::set<std::string> w;
  static std::string c;
  w = std::move(writable);
  c = std::move(controllers);
  return {[](const std::string& dir) { return w.count(dir) > 0; },
          [](const std::string&) { return c; }};
}

TEST(CgroupPlace, RootOnAHybridHostUsesTheV1ControllersUnderItsOwnCgroups) {
  auto place = FindCgroupPlace(HybridHost(), 0,
                               Probe({"/sys/fs/cgroup/memory/job", "/sys/fs/cgroup/pids",
                                      "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/unified"},
                                     "hugetlb"));
  EXPECT_EQ(place.kind, CgroupKind::kV1);
  EXPECT_EQ(place.parents,
            (std::vector<std::string>{"/sys/fs/cgroup/memory/job", "/sys/fs/cgroup/pids",
                                      "/sys/fs/cgroup/freezer"}));
  EXPECT_TRUE(place.memory && place.pids && place.freezer);
}

TEST(CgroupPlace, RootPrefersV2WithTheMemoryController) {
  auto place = FindCgroupPlace(DesktopHost(), 0, Probe({"/sys/fs/cgroup"}, "cpu memory pids"));
  EXPECT_EQ(place.kind, CgroupKind::kV2);
  EXPECT_EQ(place.parents, std::vector<std::string>{"/sys/fs/cgroup/gander"});
  EXPECT_TRUE(place.pids);
}

TEST(CgroupPlace, AUserUsesTheSubtreeItsUserManagerDelegates) {
  const std::string unit = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service";
  auto place = FindCgroupPlace(DesktopHost(), 1000, Probe({unit}, "memory pids"));
  EXPECT_EQ(place.kind, CgroupKind::kV2Delegated);
  EXPECT_EQ(place.parents, std::vector<std::string>{unit + "/gander"});
  // Another user's manager is not ours.
  EXPECT_EQ(FindCgroupPlace(DesktopHost(), 1001, Probe({unit}, "memory")).kind, CgroupKind::kNone);
  // Without the memory controller delegated there is nothing to limit with.
  EXPECT_EQ(FindCgroupPlace(DesktopHost(), 1000, Probe({unit}, "pids")).kind, CgroupKind::kNone);
}

TEST(CgroupPlace, AUserOnAHybridHostGetsNoneAndAReason) {
  auto place = FindCgroupPlace(HybridHost(), 65534, Probe({}, "hugetlb"));
  EXPECT_EQ(place.kind, CgroupKind::kNone);
  EXPECT_NE(place.why_not.find("user@65534.service"), std::string::npos) << place.why_not;
  auto shortfall = DescribeShortfall(place, {64 << 20, 0}, true);
  EXPECT_NE(shortfall.limits.find("limits.memory is not enforced"), std::string::npos);
  EXPECT_EQ(shortfall.tree, "") << "a pid namespace holds the tree";
  EXPECT_NE(DescribeShortfall(place, {}, false).tree, "");
  EXPECT_EQ(DescribeShortfall(place, {}, false).limits, "") << "nothing asked";
}

TEST(CgroupPlace, StaleNamesCarryTheirGanderPid) {
  EXPECT_EQ(StaleCgroupOwner("gander-run-1234-0"), 1234);
  EXPECT_EQ(StaleCgroupOwner("gander-9523-gv"), 9523) << "runsc's container id";
  EXPECT_EQ(StaleCgroupOwner("gander-run-x-0"), 0);
  EXPECT_EQ(StaleCgroupOwner("gander-1234"), 0);
  EXPECT_EQ(StaleCgroupOwner("process_api"), 0);
  EXPECT_EQ(StaleCgroupOwner("gander-12345678901-x"), 0);
}

// Without namespaces the sandbox reads its own cgroup directories: the run's, never a root.
// Before: gander in the root cgroup granted the whole hierarchy (97 host pids were listed).
TEST(CgroupView, WithoutNamespacesOnlyTheRunsCgroupIsGrantedNeverARoot) {
  auto mounts = HybridHost();
  EXPECT_EQ(CgroupReadPaths(mounts, false), std::vector<std::string>{"/sys/fs/cgroup/memory/job"});
  CgroupPlace place;
  place.kind = CgroupKind::kV1;
  place.parents = {"/sys/fs/cgroup/memory/job", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/freezer"};
  PointAtRunCgroup(mounts, place, "gander-run-7-0");
  EXPECT_EQ(CgroupReadPaths(mounts, false),
            (std::vector<std::string>{"/sys/fs/cgroup/memory/job/gander-run-7-0",
                                      "/sys/fs/cgroup/pids/gander-run-7-0",
                                      "/sys/fs/cgroup/freezer/gander-run-7-0"}));
  // With a mount namespace the fresh mounts' roots are the cgroup namespace's: all of them.
  EXPECT_EQ(CgroupReadPaths(mounts, true).size(), mounts.size());
}

TEST(CgroupView, V2PointsAtTheRunsCgroup) {
  auto mounts = DesktopHost();
  CgroupPlace place;
  place.kind = CgroupKind::kV2Delegated;
  place.parents = {"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/gander"};
  PointAtRunCgroup(mounts, place, "gander-run-7-1");
  EXPECT_EQ(CgroupReadPaths(mounts, false),
            std::vector<std::string>{place.parents[0] + "/gander-run-7-1"});
}

TEST(OciResources, TheLimitsGoIntoLinuxResources) {
  gvisor::BundleSpec spec;
  spec.root = "/r";
  spec.argv = {"/bin/true"};
  spec.cwd = "/";
  std::string none = gvisor::OciConfig(spec);
  EXPECT_EQ(none.find("\"resources\""), std::string::npos);
  spec.memory_limit = 64 << 20;
  spec.pids_limit = 100;
  std::string config = gvisor::OciConfig(spec);
  EXPECT_NE(config.find(R"("resources": {"memory": {"limit": 67108864, "swap": 67108864}, )"
                        R"("pids": {"limit": 100}})"),
            std::string::npos)
      << config;
}

}  // namespace
}  // namespace gander::sandbox
