// `gander status`'s parsing of the exposition and its screen (launcher/status.h).
#include "launcher/status.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
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

// The user-found issues: --json counts were floats (3.0), `${WORKSPACE}/.ssh` was listed as
// outside the workspace; and each extension shows when it was last seen.
TEST(StatusTest, JsonCountsAreIntegersAndAWorkspacePathIsNotOutsideIt) {
  std::string exposition = std::string(kExposition) +
                           "gander_file_access_outside_workspace_total{extension=\"github\","
                           "path=\"${WORKSPACE}/.ssh\",path_class=\"denied\",access=\"read\","
                           "result=\"denied\"} 1\n";
  std::ostringstream out;
  RenderStatusJson(ParseExposition(exposition), out, [](const std::string& name) {
    return name == "github" ? "2026-12-01T10:00:00Z" : "";
  });
  auto j = nlohmann::json::parse(out.str());
  const auto& github = j["extensions"][0];
  EXPECT_TRUE(github["starts"].is_number_integer()) << out.str();
  EXPECT_EQ(github["starts"], 3);
  EXPECT_TRUE(github["denials"]["file"].is_number_integer());
  EXPECT_TRUE(github["egress_bytes"]["api.github.com"].is_number_integer());
  EXPECT_EQ(github["outside_workspace"], nlohmann::json({{"~/.ssh", 2}}));
  EXPECT_EQ(github["denied_inside_workspace"], nlohmann::json({{"${WORKSPACE}/.ssh", 1}}));
  EXPECT_EQ(github["last_seen"], "2026-12-01T10:00:00Z");
  std::ostringstream screen;
  RenderStatus(ParseExposition(exposition), screen,
               [](const std::string&) { return "2026-12-01T10:00:00Z"; });
  EXPECT_NE(screen.str().find("LAST SEEN"), std::string::npos) << screen.str();
  EXPECT_NE(screen.str().find("      3  2026-12-01T10:00:00Z"), std::string::npos) << screen.str();
  EXPECT_NE(screen.str().find("denied inside the workspace: ${WORKSPACE}/.ssh 1;"),
            std::string::npos)
      << screen.str();
  EXPECT_EQ(screen.str().find("outside the workspace: ${WORKSPACE}"), std::string::npos);
}

TEST(StatusTest, LastEventTimeIsTheLastCompleteLine) {
  std::string path = testing::TempDir() + "/status_last_seen.jsonl";
  {
    std::ofstream f(path);
    f << R"({"v":1,"time":"2026-12-01T10:00:00.000001Z","kind":"lifecycle"})"
      << "\n"
      << R"({"v":1,"time":"2026-12-01T11:22:33.123456Z","kind":"tool"})"
      << "\n"
      << R"({"v":1,"time":"2026-12-01T12:)";  // still being written
  }
  EXPECT_EQ(LastEventTime(path), "2026-12-01T11:22:33Z");
  EXPECT_EQ(LastEventTime(path + ".absent"), "");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gander::launcher
