// The doctor's AppArmor advice (issue 19) against fake /proc/sys and securityfs trees: this
// kernel has no apparmor_restrict_unprivileged_userns, Ubuntu 23.10+ has it at 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "launcher/doctor.h"

namespace gander::launcher {
namespace {

namespace fs = std::filesystem;

class DoctorAppArmor : public ::testing::Test {
 protected:
  void SetUp() override {
    // One tree per test, under gtest's own scratch directory.
    root_ = fs::path(::testing::TempDir()) /
            ("gander-apparmor-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Put(const std::string& rel, const std::string& text) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void Sysctl(const std::string& v) {
    Put("proc/sys/kernel/apparmor_restrict_unprivileged_userns", v + "\n");
  }
  void Installed() {
    Put("etc/apparmor.d/gander", "profile gander /usr/bin/gander {\n  userns,\n}\n");
  }
  void Loaded() {
    Put("sys/kernel/security/apparmor/profiles",
        "/usr/bin/man (enforce)\ngander (unconfined)\nunprivileged_userns (enforce)\n");
  }
  AppArmorUserns Read() { return ReadAppArmorUserns(root_.string()); }
  fs::path root_;
};

constexpr const char* kSelf = "/opt/gander/bin/gander";

TEST_F(DoctorAppArmor, RestrictedWithoutTheProfileNamesTheProfileAndTheCommand) {
  Sysctl("1");
  AppArmorUserns a = Read();
  EXPECT_TRUE(a.sysctl_present);
  EXPECT_TRUE(a.restricted);
  EXPECT_FALSE(a.profile_installed);
  EXPECT_FALSE(a.profile_loaded);
  EXPECT_FALSE(AppArmorAllowsUserns(a));
  std::string advice = AppArmorUsernsAdvice(a, /*user_namespaces=*/false, kSelf);
  EXPECT_NE(advice.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos)
      << advice;
  EXPECT_NE(advice.find("/etc/apparmor.d/gander"), std::string::npos) << advice;
  EXPECT_NE(advice.find("share/gander/apparmor/gander"), std::string::npos) << advice;
  EXPECT_NE(advice.find("sudo apparmor_parser -r /etc/apparmor.d/gander"), std::string::npos)
      << advice;
  EXPECT_NE(advice.find(kSelf), std::string::npos) << "the path to put in the profile\n" << advice;
}

TEST_F(DoctorAppArmor, RestrictedWithTheProfileInstalledButNotLoadedSaysToLoadIt) {
  Sysctl("1");
  Installed();
  AppArmorUserns a = Read();
  EXPECT_TRUE(a.profile_installed);
  EXPECT_FALSE(a.profile_loaded);
  EXPECT_FALSE(AppArmorAllowsUserns(a));
  std::string advice = AppArmorUsernsAdvice(a, false, kSelf);
  EXPECT_NE(advice.find("not loaded"), std::string::npos) << advice;
  EXPECT_NE(advice.find("sudo apparmor_parser -r /etc/apparmor.d/gander"), std::string::npos)
      << advice;
}

TEST_F(DoctorAppArmor, RestrictedWithTheProfileLoadedExpectsFullIsolation) {
  Sysctl("1");
  Installed();
  Loaded();
  AppArmorUserns a = Read();
  EXPECT_TRUE(a.restricted);
  EXPECT_TRUE(a.profile_loaded);
  EXPECT_TRUE(AppArmorAllowsUserns(a)) << "full isolation expected";
  EXPECT_EQ(AppArmorUsernsAdvice(a, /*user_namespaces=*/true, kSelf), "");
  // Loaded, and still refused: the profile names another path than this gander.
  std::string advice = AppArmorUsernsAdvice(a, false, kSelf);
  EXPECT_NE(advice.find("loaded"), std::string::npos) << advice;
  EXPECT_NE(advice.find(kSelf), std::string::npos) << advice;
}

TEST_F(DoctorAppArmor, NoSysctlNoAdvice) {
  Installed();
  AppArmorUserns a = Read();
  EXPECT_FALSE(a.sysctl_present);
  EXPECT_FALSE(a.restricted);
  EXPECT_TRUE(AppArmorAllowsUserns(a));
  EXPECT_EQ(AppArmorUsernsAdvice(a, false, kSelf), "");
  EXPECT_EQ(AppArmorUsernsAdvice(a, true, kSelf), "");
}

TEST_F(DoctorAppArmor, SysctlZeroNoAdvice) {
  Sysctl("0");
  AppArmorUserns a = Read();
  EXPECT_TRUE(a.sysctl_present);
  EXPECT_FALSE(a.restricted);
  EXPECT_EQ(AppArmorUsernsAdvice(a, false, kSelf), "");
}

// The host's own tree: this kernel has no such sysctl (the probe reads, never fails).
TEST(AppArmorUserns, TheHostIsRead) {
  AppArmorUserns a = ReadAppArmorUserns();
  EXPECT_EQ(a.sysctl_present, fs::exists("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"));
}

}  // namespace
}  // namespace gander::launcher
