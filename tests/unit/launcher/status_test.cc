// `gander status`'s parsing of the exposition and its screen (launcher/status.h).
#include "launcher/status.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gander::launcher {
namespace {

constexpr const char* kExposition = R"(# HELP gander_extension_running x
# TYPE gander_extension_running gauge
gander_extension_running{extension="github"} 1
gander_extension_info{extension="github",backend="native",isolation="full",mode="enforce",policy_sha256="ab",syscall_accounting="watched"} 1
gander_extension_starts_total{extension="github"} 3
gander_denials_total{extension="github",domain="file",mechanism="seccomp",mode="enforce"} 2
gander_denials_total{extension="github",domain="network",mechanism="broker",mode="enforce"} 0
gander_file_access_outside_workspace_total{extension="github",path="~/.ssh",path_class="denied",access="read",result="denied"} 2
gander_egress_bytes_total{extension="github",destination="api.github.com"} 2048
gander_label_overflow_total{metric="x",label="y"} 0
)";

TEST(StatusTest, ParsesSamplesWithLabels) {
  auto samples = ParseExposition(kExposition);
  ASSERT_EQ(samples.size(), 8u);
  EXPECT_EQ(samples[1].name, "gander_extension_info");
  EXPECT_EQ(samples[1].labels.at("isolation"), "full");
  EXPECT_EQ(samples[6].value, 2048);
}

TEST(StatusTest, RendersOneBlockPerExtension) {
  std::ostringstream out;
  RenderStatus(ParseExposition(kExposition), out);
  std::string screen = out.str();
  EXPECT_NE(screen.find("github"), std::string::npos) << screen;
  EXPECT_NE(screen.find("running  full      enforce"), std::string::npos) << screen;
  EXPECT_NE(screen.find("denied (by domain): file 2;"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("network 0"), std::string::npos) << screen;
  EXPECT_NE(screen.find("outside the workspace: ~/.ssh 2;"), std::string::npos) << screen;
  EXPECT_NE(screen.find("sent (by destination): api.github.com 2.0 KiB;"), std::string::npos)
      << screen;
}

TEST(StatusTest, SaysSoWhenNothingReported) {
  std::ostringstream out;
  RenderStatus({}, out);
  EXPECT_EQ(out.str(), "No extension has reported to the collector yet.\n");
}

}  // namespace
}  // namespace gander::launcher
