// Secret redaction: raw, JSON-escaped forms, cut by reads and by line breaks, through the relay.
#include "relay/redactor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>

namespace gander::relay {
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

// Base64 of `bytes` in the standard or URL-safe alphabet, with or without '=' padding.
std::string Base64(std::string_view bytes, bool url, bool pad) {
  const char* abc = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                        : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    size_t chars = std::min<size_t>(4, bytes.size() - i + 1);
    for (size_t k = 0; k < 4; ++k) {
      if (k < chars) {
        out += abc[(v >> (18 - 6 * k)) & 63];
      } else if (pad) {
        out += '=';
      }
    }
  }
  return out;
}

// Every secret byte string a base64 text (either alphabet) carries, read at each of the four
// character phases: what an attacker gets back by decoding the output.
std::string DecodeAnyBase64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  for (size_t phase = 0; phase < 4; ++phase) {
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = phase; i < text.size(); ++i) {
      int v = value(text[i]);
      if (v < 0) {
        acc = 0, bits = 0, out += '|';
        continue;
      }
      acc = (acc << 6) | static_cast<uint32_t>(v), bits += 6;
      if (bits >= 8) out += static_cast<char>((acc >> (bits - 8)) & 0xff), bits -= 8;
    }
    out += '|';
  }
  return out;
}

std::string Hex(std::string_view bytes, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

// The secret printed base64 (both alphabets, padded or not) at every alignment in the stream
// (0, 1 or 2 bytes before it) and with every length of what follows, inside a JSON-RPC string:
// no decoding of the output gives the secret back, the marker is there, the line's JSON frame
// is intact. Also cut by reads at every byte.
TEST_F(RedactorTest, Base64FormsAtEveryAlignment) {
  const std::string secret = std::string(kValue) + "\x01\xfe";  // bytes that use '+' '/' '-' '_'
  Redactor r(std::vector<Secret>{{"GITHUB_TOKEN", secret}});
  for (bool url : {false, true}) {
    for (bool pad : {false, true}) {
      for (size_t before = 0; before < 3; ++before) {
        for (size_t after = 0; after < 3; ++after) {
          std::string plain = std::string("xyz").substr(0, before) + secret +
                              std::string("\xff\xfb\xbf").substr(0, after);
          std::string line = R"({"jsonrpc":"2.0","id":1,"result":{"text":")" +
                             Base64(plain, url, pad) + R"("}})" + "\n";
          SCOPED_TRACE(::testing::Message() << "url=" << url << " pad=" << pad
                                            << " before=" << before << " after=" << after);
          auto o = r.Rewrite(line, true);
          std::string out = o.replaced ? o.replacement : line;
          EXPECT_EQ(DecodeAnyBase64(out).find(kValue), std::string::npos) << out;
          EXPECT_NE(out.find(kMarker), std::string::npos) << out;
          EXPECT_TRUE(out.starts_with(R"({"jsonrpc":"2.0","id":1,"result":{"text":")")) << out;
          EXPECT_TRUE(out.ends_with("\"}}\n")) << out;
          // The same, offered a byte at a time as a relay would.
          std::string pending, cut;
          for (size_t i = 0; i < line.size(); ++i) {
            pending += line[i];
            auto c = r.Rewrite(pending, i + 1 == line.size());
            cut += c.replaced ? c.replacement : pending.substr(0, c.released);
            pending.erase(0, c.released);
          }
          EXPECT_EQ(cut, out);
        }
      }
    }
  }
}

// The secret printed hex, lower and upper case, raw and in a JSON string.
TEST_F(RedactorTest, HexForms) {
  for (bool upper : {false, true}) {
    std::string hex = Hex(kValue, upper);
    EXPECT_EQ(Run({"dump: " + hex + "\n"}), "dump: " + kMarker + "\n") << hex;
    EXPECT_EQ(Run({R"({"hex":")" + hex + R"("})"}), R"({"hex":")" + kMarker + R"("})") << hex;
  }
  EXPECT_EQ(hits_["GITHUB_TOKEN"], 4u);
  // Someone else's hex and base64 are left alone.
  std::string other = Hex("another value here", false) + " " + Base64("another value", 0, 1);
  EXPECT_EQ(Run({other}), other);
}

// Hex in mixed case (every pattern of upper and lower letters a printer may produce, e.g. one
// that upper-cases some bytes) is the same secret: redacted, also split byte by byte and
// inside a JSON string. A raw value that differs only in case is not the secret: left alone.
TEST_F(RedactorTest, MixedCaseHexForms) {
  const std::string lower = Hex(kValue, false);
  std::vector<std::string> mixed;
  for (size_t pattern : {2u, 3u, 5u}) {  // upper-case every pattern-th letter
    std::string m = lower;
    size_t letter = 0;
    for (char& c : m) {
      if (c >= 'a' && c <= 'f' && letter++ % pattern == 0) c = static_cast<char>(c - 'a' + 'A');
    }
    mixed.push_back(m);
  }
  std::string all_but_first = Hex(kValue, true);  // upper case but for its first letter
  *std::find_if(all_but_first.begin(), all_but_first.end(), [](char c) { return c >= 'A'; }) += 32;
  mixed.push_back(all_but_first);
  size_t runs = 0;
  for (const std::string& m : mixed) {
    ASSERT_NE(m, lower);
    ASSERT_NE(m, Hex(kValue, true));
    EXPECT_EQ(Run({"dump: " + m + "\n"}), "dump: " + kMarker + "\n") << m;
    EXPECT_EQ(Run({R"({"hex":")" + m + R"("})"}), R"({"hex":")" + kMarker + R"("})") << m;
    std::vector<std::string> bytes;
    for (char c : "x=" + m + ";") bytes.emplace_back(1, c);
    EXPECT_EQ(Run(bytes), "x=" + kMarker + ";") << m;
    runs += 3;
  }
  EXPECT_EQ(hits_["GITHUB_TOKEN"], runs);
  std::string raw_other_case = kValue;
  for (char& c : raw_other_case) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_NE(raw_other_case, std::string(kValue));
  EXPECT_EQ(Run({raw_other_case}), raw_other_case);
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
}  // namespace gander::relay
