// The DNS stub's wire format (network/dns_wire.h): what a query must look like to be answered,
// and the answer's layout (RFC 1035 4.1).
#include "network/dns_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gander::network::dns {
namespace {

using policies::IpAddress;

// A query: id 0x1234, recursion desired, one question of `name` (dotted), `qtype`, class IN.
std::vector<uint8_t> Query(const std::string& name, uint16_t qtype, uint16_t flags = 0x0100,
                           uint16_t qdcount = 1) {
  std::vector<uint8_t> q = {0x12,
                            0x34,
                            static_cast<uint8_t>(flags >> 8),
                            static_cast<uint8_t>(flags),
                            0,
                            static_cast<uint8_t>(qdcount),
                            0,
                            0,
                            0,
                            0,
                            0,
                            0};
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    q.push_back(static_cast<uint8_t>(dot - start));
    q.insert(q.end(), name.begin() + static_cast<long>(start),
             name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.push_back(0);
  q.insert(q.end(), {static_cast<uint8_t>(qtype >> 8), static_cast<uint8_t>(qtype), 0, 1});
  return q;
}

uint16_t At16(const std::string& s, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(s[at]) << 8 | static_cast<uint8_t>(s[at + 1]));
}

TEST(DnsWire, ParsesAQuestionLowerCased) {
  auto q = Query("Api.Example.COM", kTypeAAAA);
  auto parsed = ParseQuery(q.data(), q.size());
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->id, 0x1234);
  EXPECT_EQ(parsed->flags, 0x0100);
  EXPECT_EQ(parsed->name, "api.example.com");
  EXPECT_EQ(parsed->qtype, kTypeAAAA);
  EXPECT_EQ(parsed->qclass, 1);
  EXPECT_EQ(parsed->question_end, q.size());
}

TEST(DnsWire, RefusesWhatIsNotOneWellFormedQuestion) {
  auto ok = Query("example.com", kTypeA);
  EXPECT_FALSE(ParseQuery(ok.data(), 11)) << "shorter than a header";
  EXPECT_FALSE(ParseQuery(ok.data(), ok.size() - 1)) << "type and class cut short";
  auto response = Query("example.com", kTypeA, 0x8180);
  EXPECT_FALSE(ParseQuery(response.data(), response.size())) << "a response";
  auto two = Query("example.com", kTypeA, 0x0100, 2);
  EXPECT_FALSE(ParseQuery(two.data(), two.size())) << "two questions";
  auto compressed = Query("example.com", kTypeA);
  compressed[12] = 0xc0;  // a compression pointer where a label belongs
  EXPECT_FALSE(ParseQuery(compressed.data(), compressed.size()));
  auto past_end = Query("example.com", kTypeA);
  past_end[12] = 60;  // a label longer than what is left
  EXPECT_FALSE(ParseQuery(past_end.data(), past_end.size()));
  std::string long_name;
  for (int i = 0; i < 5; ++i) long_name += std::string(60, 'a') + ".";
  long_name += "com";  // 307 characters: past the 253 a name may have
  auto too_long = Query(long_name, kTypeA);
  EXPECT_FALSE(ParseQuery(too_long.data(), too_long.size()));
}

TEST(DnsWire, AnAnswerCopiesTheQuestionAndPointsEachRecordAtIt) {
  auto q = Query("example.com", kTypeA);
  auto parsed = ParseQuery(q.data(), q.size());
  ASSERT_TRUE(parsed);
  std::string r = BuildResponse(q.data(), *parsed, kNoError,
                                {*IpAddress::Parse("192.0.2.1"), *IpAddress::Parse("192.0.2.2")});
  EXPECT_EQ(At16(r, 0), 0x1234);
  EXPECT_EQ(At16(r, 2), 0x8180) << "a response, recursion desired and available, NOERROR";
  EXPECT_EQ(At16(r, 4), 1);  // questions
  EXPECT_EQ(At16(r, 6), 2);  // answers
  EXPECT_EQ(At16(r, 8), 0);
  EXPECT_EQ(At16(r, 10), 0);
  EXPECT_EQ(r.substr(12, q.size() - 12), std::string(q.begin() + 12, q.end()));
  ASSERT_EQ(r.size(), q.size() + 2 * (12 + 4));
  std::string rr = r.substr(q.size(), 16);
  EXPECT_EQ(At16(rr, 0), 0xc00c) << "the name: a pointer to the question's";
  EXPECT_EQ(At16(rr, 2), kTypeA);
  EXPECT_EQ(At16(rr, 4), 1);  // class IN
  EXPECT_EQ(At16(rr, 6) << 16 | At16(rr, 8), 30) << "the TTL";
  EXPECT_EQ(At16(rr, 10), 4);
  EXPECT_EQ(rr.substr(12), std::string("\xc0\x00\x02\x01", 4));
}

TEST(DnsWire, AnAaaaAnswerCarriesSixteenBytes) {
  auto q = Query("example.com", kTypeAAAA);
  auto parsed = ParseQuery(q.data(), q.size());
  ASSERT_TRUE(parsed);
  std::string r = BuildResponse(q.data(), *parsed, kNoError, {*IpAddress::Parse("2001:db8::1")});
  ASSERT_EQ(r.size(), q.size() + 12 + 16);
  EXPECT_EQ(At16(r, q.size() + 2), kTypeAAAA);
  EXPECT_EQ(At16(r, q.size() + 10), 16);
}

TEST(DnsWire, AnErrorHasItsCodeAndNoAnswers) {
  auto q = Query("blocked.example", kTypeA);
  auto parsed = ParseQuery(q.data(), q.size());
  ASSERT_TRUE(parsed);
  for (int rcode : {kNxDomain, kRefused, kServFail}) {
    std::string r = BuildResponse(q.data(), *parsed, rcode, {*IpAddress::Parse("192.0.2.1")});
    EXPECT_EQ(At16(r, 2) & 0xf, rcode);
    EXPECT_EQ(At16(r, 6), 0) << "no answers with rcode " << rcode;
    EXPECT_EQ(r.size(), q.size());
  }
}

}  // namespace
}  // namespace gander::network::dns
