// Secret redaction: raw, JSON-escaped forms, cut by reads and by line breaks, through the relay.
#include "relay/redactor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

namespace gander::monitor {
namespace {

constexpr char kValue[] = "ghp_S3cr3t/V@lue";

class RedactorTest : public ::testing::Test {
 protected:
  Redactor redactor_{{{"GITHUB_TOKEN", kValue}, {"SHORT", "ab"}},
                     [this](const std::string& name, uint64_t n) { hits_[name] += n; }};
  std::map<std::string, uint64_t> hits_;

  // Feeds `pieces` one by one as a relay would (held bytes offered again) and returns the
  // output.
  std::string Run(std::vector<std::string> pieces) {
    std::string pending, out;
    for (size_t i = 0; i < pieces.size(); ++i) {
      pending += pieces[i];
      bool last = i + 1 == pieces.size();
      auto o = redactor_.Rewrite(pending, last);
      out += o.replaced ? o.replacement : pending.substr(0, o.released);
      pending.erase(0, o.released);
    }
    EXPECT_EQ(pending, "");
    return out;
  }
};

const std::string kMarker = "[gander:redacted:GITHUB_TOKEN]";

TEST_F(RedactorTest, RawValue) {
  EXPECT_EQ(Run({std::string("token=") + kValue + " end\n"}), "token=" + kMarker + " end\n");
  EXPECT_EQ(hits_["GITHUB_TOKEN"], 1u);
}

TEST_F(RedactorTest, NothingToDo) {
  EXPECT_EQ(Run({"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"}),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
  EXPECT_TRUE(hits_.empty());
}

TEST_F(RedactorTest, JsonEscapedForms) {
  // "/" as "\/", letters as \u00XX (both cases), "@" as \u0040.
  std::string escaped = R"(ghp_\u0053\u0033cr3t\/V\u0040lue)";
  std::string line = R"({"text":")" + escaped + R"( and )" + std::string(kValue) + R"("})";
  EXPECT_EQ(Run({line}), R"({"text":")" + kMarker + " and " + kMarker + R"("})");
  EXPECT_EQ(hits_["GITHUB_TOKEN"], 2u);
  EXPECT_EQ(Run({R"("ghp_S3cr3t\/V\u0040LUE")"}), R"("ghp_S3cr3t\/V\u0040LUE")")
      << "a different value is left alone";
}

TEST_F(RedactorTest, NonAsciiAndSurrogates) {
  Redactor r(std::vector<Secret>{{"K", "p\xC3\xA9-\xF0\x9F\x94\x91-key"}});  // "pé-🔑-key"
  auto o = r.Rewrite(R"(x "p\u00e9-\ud83d\udd11-key" y)", true);
  ASSERT_TRUE(o.replaced);
  EXPECT_EQ(o.replacement, R"(x "[gander:redacted:K]" y)");
}

TEST_F(RedactorTest, CutByReads) {
  std::string v = kValue;
  EXPECT_EQ(Run({"a " + v.substr(0, 3), v.substr(3, 5), v.substr(8) + " b\n"}),
            "a " + kMarker + " b\n");
  // Cut inside an escape.
  EXPECT_EQ(Run({R"(x ghp_S3cr3t\)", R"(/V\u00)", R"(40lue y)"}), "x " + kMarker + " y");
}

TEST_F(RedactorTest, CutByLineBreaks) {
  std::string v = kValue;
  EXPECT_EQ(Run({"log: " + v.substr(0, 6) + "\n", v.substr(6) + " done\n"}),
            "log: " + kMarker + " done\n");
  EXPECT_EQ(Run({R"({"t":")" + v.substr(0, 6) + R"(\n)" + v.substr(6) + R"("})"}),
            R"({"t":")" + kMarker + R"("})");
}

TEST_F(RedactorTest, PartialAtTheEndIsReleased) {
  EXPECT_EQ(Run({"prefix ghp_S3c"}), "prefix ghp_S3c");
  EXPECT_TRUE(hits_.empty());
}

TEST_F(RedactorTest, ShortValuesAreIgnored) { EXPECT_EQ(Run({"ab ab ab"}), "ab ab ab"); }

TEST(RedactorRelay, ThroughALineRelay) {
  int in[2], out[2];
  ASSERT_EQ(pipe2(in, O_NONBLOCK), 0);
  ASSERT_EQ(pipe2(out, O_NONBLOCK), 0);
  uint64_t hits = 0;
  Redactor r(std::vector<Secret>{{"TOKEN", "sekrit-123"}},
             [&](const std::string&, uint64_t n) { hits += n; });
  LineRelay relay(in[0], out[1], {}, nullptr, &r);
  relay.Feed("{\"result\":\"sek");
  relay.Feed("rit-123\"}\n");
  relay.OnWritable();
  char buf[256];
  ssize_t n = read(out[0], buf, sizeof(buf));
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, n), "{\"result\":\"[gander:redacted:TOKEN]\"}\n");
  EXPECT_EQ(hits, 1u);
  for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
}

// Issue 18, break 3: values too short or too common to be secrets are never redacted, whatever
// they are called, and a JSON-RPC line stays valid JSON.
TEST(RedactorFloor, TooShortOrTooCommonIsNeverRedacted) {
  for (const char* value :
       {"debug", "true", "false", "null", "1234567890", "production", "localhost", "DEVELOPMENT",
        "-1.5e+10", "[1,2,3,4,5]", "true, false", "1234, 5678"}) {
    EXPECT_FALSE(IsRedactable(value)) << value;
  }
  for (const char* value : {"sekrit-123", "ghp_S3cr3tT0ken", "hunter2hunter2", "abcdefghijklmnopq",
                            "p4ssw0rd!", "pa\"ss\"word"}) {
    EXPECT_TRUE(IsRedactable(value)) << value;
  }
  Redactor r(std::vector<Secret>{{"LOG_LEVEL", "debug"}, {"FEATURE_FLAG", "true"}});
  EXPECT_TRUE(r.empty());
  std::string line =
      R"({"result":{"capabilities":{"tools":{"listChanged":true}},"x":"for debugging"}})";
  EXPECT_FALSE(r.Rewrite(line, true).replaced);
}

TEST(RedactorFloor, JsonLinesKeepTheirQuotes) {
  // A secret with a quote in it: raw on stderr it is found; on a JSON-RPC line only its
  // escaped form inside a string is, never across a string's end.
  Redactor err(std::vector<Secret>{{"P", "ab\",\"cd1234"}});
  EXPECT_TRUE(err.Rewrite("x ab\",\"cd1234 y", true).replaced);
  Redactor out(std::vector<Secret>{{"P", "ab\",\"cd1234"}});
  out.SetJsonLines(true);
  std::string across = R"({"a":"ab","cd1234":1})";
  EXPECT_FALSE(out.Rewrite(across, true).replaced);
  auto inside = out.Rewrite(R"({"a":"ab\",\"cd1234"})", true);
  ASSERT_TRUE(inside.replaced);
  EXPECT_EQ(inside.replacement, R"({"a":"[gander:redacted:P]"})");
}

}  // namespace
}  // namespace gander::monitor
