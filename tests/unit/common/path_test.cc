// Path helpers (common/path.h).
#include "common/path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// ReadFile: the whole file past one read's buffer, nullopt past the limit, for what is missing,
// and (with the sandbox's flags) for a link; a FIFO with no writer reads empty, at once.
TEST(CommonPathReadFile, ReadsItAllUpToTheLimit) {
  auto dir = std::filesystem::temp_directory_path() / ("gander-read-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text;
  for (int i = 0; text.size() < 20000; ++i) text += "line " + std::to_string(i) + "\n";
  std::ofstream(dir / "big") << text;
  EXPECT_EQ(ReadFile((dir / "big").string()), text);
  EXPECT_EQ(ReadFile((dir / "big").string(), text.size()), text);
  EXPECT_FALSE(ReadFile((dir / "big").string(), text.size() - 1));
  EXPECT_FALSE(ReadFile((dir / "missing").string()));
  std::ofstream(dir / "empty").flush();
  EXPECT_EQ(ReadFile((dir / "empty").string()), "");
  std::filesystem::create_symlink(dir / "big", dir / "link");
  EXPECT_EQ(ReadFile((dir / "link").string()), text);
  EXPECT_FALSE(ReadFile((dir / "link").string(), 1u << 20, O_NOFOLLOW | O_NONBLOCK));
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(ReadFile((dir / "fifo").string(), 1u << 20, O_NOFOLLOW | O_NONBLOCK), "");
  EXPECT_FALSE(ReadFile(dir.string()));  // a directory: read fails (EISDIR)
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gander
