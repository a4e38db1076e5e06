// file_read/file_write's binary mode: bytes survive the JSON link; bad base64 is refused.
#include "mcp/base64.h"

#include <gtest/gtest.h>

#include "tests/unit/expect_table.h"

namespace gander::mcp {
namespace {

using gander::unit::ExpectMaps;

TEST(Base64, RoundTripsEveryByteAndTheRfcVectors) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  EXPECT_EQ(Base64Decode(Base64Encode(all)), all);
  ExpectMaps(Base64Encode, {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foobar", "Zm9vYmFy"}});
  EXPECT_EQ(Base64Decode("Zm9v\nYmE="), "fooba");
}

TEST(Base64, RefusesWhatIsNotBase64) {
  for (const char* bad : {"Zm9", "Zm9v!", "Z===", "Zg==Zg==", "Zh=="}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

TEST(IsUtf8, TextYesBinaryNo) {
  EXPECT_TRUE(IsUtf8("plain, and caf\xc3\xa9"));
  const char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, static_cast<char>(0xff)};
  EXPECT_FALSE(IsUtf8(std::string_view(elf, sizeof(elf))));
  EXPECT_FALSE(IsUtf8("\xc0\xaf"));      // overlong '/'
  EXPECT_FALSE(IsUtf8("\xed\xa0\x80"));  // a surrogate
}

}  // namespace
}  // namespace gander::mcp
