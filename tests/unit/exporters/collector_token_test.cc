// The collector's per-user token file: created once, private, never read through a link or
// from a file others can read (exporters/collector_token.h).
#include "exporters/collector_token.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/temp_dir_test.h"

namespace gander::exporters {
namespace {

namespace fs = std::filesystem;

class CollectorTokenTest : public unit::TempDirTest {
 protected:
  CollectorTokenTest() : TempDirTest("token") {}
};

TEST_F(CollectorTokenTest, CreatedOncePrivateAndReadBackTheSame) {
  const std::string path = dir_ + "/collector.token";
  auto first = LoadOrCreateCollectorToken(path);
  ASSERT_TRUE(first) << first.error().Describe();
  EXPECT_EQ(first->size(), 2 * kCollectorTokenBytes);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateCollectorToken(path);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *first) << "a second collector must not mint a new token";
  auto read = ReadCollectorToken(path);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, *first);
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  // Another directory gets another token.
  auto other = LoadOrCreateCollectorToken(dir_ + "/other.token");
  ASSERT_TRUE(other);
  EXPECT_NE(*other, *first);
}

TEST_F(CollectorTokenTest, ALinkAFileOthersCanReadOrGarbageIsRefused) {
  const std::string real = dir_ + "/real.token";
  ASSERT_TRUE(LoadOrCreateCollectorToken(real));
  const std::string link = dir_ + "/link.token";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_FALSE(ReadCollectorToken(link));
  EXPECT_FALSE(LoadOrCreateCollectorToken(link)) << "a planted link must not be followed";

  ASSERT_EQ(chmod(real.c_str(), 0640), 0);
  EXPECT_FALSE(ReadCollectorToken(real));

  const std::string junk = dir_ + "/junk.token";
  { std::ofstream(junk) << "not a token\n"; }
  ASSERT_EQ(chmod(junk.c_str(), 0600), 0);
  EXPECT_FALSE(ReadCollectorToken(junk));
  EXPECT_FALSE(ReadCollectorToken(dir_ + "/missing.token"));
}

TEST(CollectorTokenCompare, EqualOnlyWhenEveryByteIs) {
  EXPECT_TRUE(TokensEqual("abc", "abc"));
  EXPECT_FALSE(TokensEqual("abc", "abd"));
  EXPECT_FALSE(TokensEqual("abc", "ab"));
  EXPECT_FALSE(TokensEqual("", "a"));
}

}  // namespace
}  // namespace gander::exporters
