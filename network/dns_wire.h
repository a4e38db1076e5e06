// The DNS wire format, as much as the stub needs (network/dns_stub.cc serves it to the
// sandbox). Pure; every byte comes from the sandbox, so it is fuzzed (tests/fuzz/dns_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policies/network_matcher.h"

namespace gander::network {

namespace dns {
struct Question {
  uint16_t id = 0;
  uint16_t flags = 0;
  std::string name;  // lower case, no final dot
  uint16_t qtype = 0;
  uint16_t qclass = 0;
  size_t question_end = 0;  // offset just past the question
};
constexpr uint16_t kTypeA = 1;
constexpr uint16_t kTypeAAAA = 28;
constexpr int kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kRefused = 5;
std::optional<Question> ParseQuery(const uint8_t* data, size_t size);
// A response to `query` (its header and question copied) with `rcode` and the addresses of
// the question's type as answers.
std::string BuildResponse(const uint8_t* query, const Question& q, int rcode,
                          const std::vector<policies::IpAddress>& answers);
}  // namespace dns

}  // namespace gander::network
