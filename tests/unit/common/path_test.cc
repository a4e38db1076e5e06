// Path helpers (common/path.h).
#include "common/path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <utility>

namespace gander {
namespace {

struct Case {
  const char* path;
  const char* dir;
  bool within;
};

void ExpectAll(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(IsWithin(c.path, c.dir), c.within) << "'" << c.path << "' within '" << c.dir << "'";
  }
}

TEST(CommonPathIsWithin, ComparesWholeComponents) {
  ExpectAll({{"/home/u/.ssh", "/home/u", true},
             {"/home/u", "/home/u", true},
             {"/home/user", "/home/u", false},
             {"/home", "/home/u", false}});
}

// The two copies this one replaced disagreed about "/": the mount plan's held every string,
// the path classifier's only absolute paths. Only absolute paths lie beneath "/".
TEST(CommonPathIsWithin, RootHoldsEveryAbsolutePathAndNoOther) {
  ExpectAll({{"/", "/", true},
             {"/anything", "/", true},
             {"/etc/passwd", "/", true},
             {"", "/", false},
             {"etc/passwd", "/", false}});
}

// As all three copies had it: an empty directory (an unset $HOME) holds "" and every
// absolute path, so a caller testing "is this under HOME" skips everything then.
TEST(CommonPathIsWithin, AnEmptyDirectoryHoldsEveryAbsolutePath) {
  ExpectAll({{"/home/u", "", true}, {"", "", true}, {"home/u", "", false}});
}

TEST(CommonPathIsWithin, ADirectoryEndingInASlashHoldsWhatStartsWithIt) {
  ExpectAll({{"/tmp/x", "/tmp/", true},
             {"/tmp/", "/tmp/", true},
             {"/tmp", "/tmp/", false},
             {"/tmpx/y", "/tmp/", false}});
}

TEST(CommonPathBasename, IsWhatFollowsTheLastSlash) {
  for (auto [path, base] : {std::pair{"/usr/bin/node", "node"}, std::pair{"node", "node"},
                            std::pair{"/usr/bin/", ""}, std::pair{"", ""}}) {
    EXPECT_EQ(Basename(path), base) << path;
  }
}

TEST(CommonPathRealPath, ResolvesLinksAndIsEmptyForWhatDoesNotExist) {
  auto dir = std::filesystem::temp_directory_path() / ("gander-path-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "real");
  std::filesystem::create_directory_symlink(dir / "real", dir / "link");
  auto real = RealPath((dir / "link").string());
  ASSERT_TRUE(real);
  EXPECT_EQ(*real, std::filesystem::canonical(dir / "real").string());
  EXPECT_FALSE(RealPath((dir / "missing").string()));
  EXPECT_EQ(RealPath((dir / "missing").string()).value_or("kept"), "kept");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gander
