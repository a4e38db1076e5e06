// Arguments of the sandbox tools checked before anything starts.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "mcp/sandbox_pool.h"
#include "mcp/server.h"

namespace gander::mcp {
namespace {

using json = nlohmann::json;

TEST(ParseTtl, AcceptsUnitsAndSeconds) {
  EXPECT_EQ(ParseTtl(json("1h"))->count(), 3600);
  EXPECT_EQ(ParseTtl(json("30m"))->count(), 1800);
  EXPECT_EQ(ParseTtl(json("45s"))->count(), 45);
  EXPECT_EQ(ParseTtl(json("90"))->count(), 90);
  EXPECT_EQ(ParseTtl(json(2))->count(), 2);
  for (const json& bad : {json("0"), json("8d"), json("1w"), json("soon"), json(true), json(-1)}) {
    EXPECT_FALSE(ParseTtl(bad).ok()) << bad.dump();
  }
}

TEST(CheckSandboxName, LettersDigitsAndFewSigns) {
  EXPECT_TRUE(CheckSandboxName("build-1.try_2").ok());
  for (const char* bad : {"", ".hidden", "-x", "a/b", "../x", "a b", "x\n"}) {
    EXPECT_FALSE(CheckSandboxName(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckSandboxName(std::string(49, 'a')).ok());
}

TEST(LoadConfig, ATildeInItsPathsIsTheHome) {
  char pattern[] = "/tmp/gander-mcp-config-XXXXXX";
  std::string dir = mkdtemp(pattern);
  std::ofstream(dir + "/mcp.yaml") << "export_dir: ~/results\nfiles_roots: [\"~/src\", /opt/x]\n"
                                      "export_max_file_bytes: 1024\n";
  const char* old = getenv("HOME");
  std::string saved = old ? old : "";
  setenv("HOME", "/home/someone", 1);
  PoolOptions pool;
  Status loaded = LoadConfig(dir + "/mcp.yaml", true, pool);
  if (old) setenv("HOME", saved.c_str(), 1);
  unlink((dir + "/mcp.yaml").c_str());
  rmdir(dir.c_str());
  ASSERT_TRUE(loaded.ok()) << loaded.error().Describe();
  EXPECT_EQ(pool.export_dir, "/home/someone/results");
  EXPECT_EQ(pool.files_roots, (std::vector<std::string>{"/home/someone/src", "/opt/x"}));
  EXPECT_EQ(pool.export_max_file_bytes, 1024u);
}

}  // namespace
}  // namespace gander::mcp
