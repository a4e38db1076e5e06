// The words of the enumerations whose names are EnumName tables (common/enum_names.h): every
// value has its own word, as the switches they replaced gave.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

#include "launcher/install/package_spec.h"
#include "launcher/run.h"
#include "sandbox/cgroup_limit.h"
#include "vet/finding.h"

namespace gander::launcher {
namespace {

TEST(WordTablesTest, RunModes) {
  EXPECT_EQ(std::string(ModeName(RunMode::kEnforce)), "enforce");
  EXPECT_EQ(std::string(ModeName(RunMode::kMonitor)), "monitor");
  EXPECT_EQ(std::string(ModeName(RunMode::kLearn)), "learn");
}

TEST(WordTablesTest, InstallRunners) {
  EXPECT_EQ(std::string(install::RunnerName(install::Runner::kNpx)), "npx");
  EXPECT_EQ(std::string(install::RunnerName(install::Runner::kNpmExec)), "npm exec");
  EXPECT_EQ(std::string(install::RunnerName(install::Runner::kUvx)), "uvx");
  EXPECT_EQ(std::string(install::RunnerName(install::Runner::kPipxRun)), "pipx run");
}

TEST(WordTablesTest, CgroupKinds) {
  using sandbox::CgroupKind;
  EXPECT_EQ(std::string(sandbox::CgroupKindName(CgroupKind::kNone)), "none");
  EXPECT_EQ(std::string(sandbox::CgroupKindName(CgroupKind::kV2)), "cgroup v2");
  EXPECT_EQ(std::string(sandbox::CgroupKindName(CgroupKind::kV1)), "cgroup v1");
  EXPECT_EQ(std::string(sandbox::CgroupKindName(CgroupKind::kV2Delegated)),
            "cgroup v2 (systemd delegation)");
}

TEST(WordTablesTest, AuditCategoriesHaveANameAndATitleEach) {
  using vet::Category;
  EXPECT_EQ(std::string(vet::CategoryName(Category::kBait)), "bait");
  EXPECT_EQ(std::string(vet::CategoryName(Category::kAudit)), "audit");
  EXPECT_EQ(std::string(vet::CategoryTitle(Category::kDescription)),
            "Descriptions that instruct the model");
  EXPECT_EQ(std::string(vet::CategoryTitle(Category::kAudit)), "The audit itself");
  std::set<std::string> names, titles;
  for (Category c : vet::kAllCategories) {
    names.insert(vet::CategoryName(c));
    titles.insert(vet::CategoryTitle(c));
  }
  EXPECT_EQ(names.size(), std::size(vet::kAllCategories));
  EXPECT_EQ(titles.size(), std::size(vet::kAllCategories));
}

TEST(WordTablesTest, SeverityWordsAndBack) {
  EXPECT_EQ(std::string(vet::SeverityName(vet::Severity::kMedium)), "medium");
  EXPECT_EQ(vet::ParseSeverity("high"), vet::Severity::kHigh);
  EXPECT_EQ(vet::ParseSeverity("High"), std::nullopt);
}

}  // namespace
}  // namespace gander::launcher
