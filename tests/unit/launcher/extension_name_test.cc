// The extension's default name: Goose names a `cmd` extension after cmd's basename, so a
// symlink to gander named after the extension keeps two wrapped extensions apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "launcher/run.h"

namespace gander::launcher {
namespace {

TEST(DefaultExtensionName, IsTheSymlinkGanderWasInvokedThrough) {
  char dir[] = "/tmp/gander-name-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string link = std::string(dir) + "/github";
  ASSERT_EQ(symlink("/usr/bin/gander", link.c_str()), 0);
  EXPECT_EQ(DefaultExtensionName(link, "npx"), "github");
  unlink(link.c_str());
  rmdir(dir);
}

TEST(DefaultExtensionName, ElseTheCommandsBasename) {
  EXPECT_EQ(DefaultExtensionName("/usr/local/bin/gander", "/opt/srv/bin/mcp-server-memory"),
            "mcp-server-memory");
  EXPECT_EQ(DefaultExtensionName("gander", "npx"), "npx");
}

}  // namespace
}  // namespace gander::launcher
