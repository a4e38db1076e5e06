// libFuzzer target: the DNS stub's query parser and the response it builds from a query
// (network/dns_wire.h). Every byte is a packet the sandbox sent to the stub. Checks: a parsed
// question lies inside the packet, its name is lower case and at most 253 bytes; a response
// copies the query's id and question and says it is one; nothing crashes (ASan/UBSan).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "network/dns_wire.h"

using namespace gander::network;  // NOLINT(google-build-using-namespace)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<dns::Question> q = dns::ParseQuery(data, size);
  if (!q) {
    if (size >= 12) {  // the stub's FORMERR reply to a packet it cannot read
      dns::Question bare;
      std::memcpy(&bare.id, data, 2);
      bare.question_end = 12;
      std::string r = dns::BuildResponse(data, bare, dns::kFormErr, {});
      if (r.size() != 12 || !(static_cast<uint8_t>(r[2]) & 0x80)) abort();
    }
    return 0;
  }
  if (q->question_end < 12 || q->question_end > size || q->name.size() > 253) abort();
  for (char c : q->name) {
    if (std::isupper(static_cast<unsigned char>(c))) abort();
  }
  std::vector<gander::policies::IpAddress> answers;
  if (auto a = gander::policies::IpAddress::Parse("192.0.2.1")) answers.push_back(*a);
  if (auto b = gander::policies::IpAddress::Parse("2001:db8::1")) answers.push_back(*b);
  for (int rcode : {dns::kNoError, dns::kRefused, dns::kServFail}) {
    std::string r = dns::BuildResponse(data, *q, rcode, answers);
    if (r.size() < q->question_end) abort();
    if (std::memcmp(r.data(), data, 2) != 0) abort();  // the id
    if (std::memcmp(r.data() + 12, data + 12, q->question_end - 12) != 0) abort();
    if (!(static_cast<uint8_t>(r[2]) & 0x80) || (r[3] & 0xf) != rcode) abort();
    // A response never parses as a query.
    if (dns::ParseQuery(reinterpret_cast<const uint8_t*>(r.data()), r.size())) abort();
  }
  return 0;
}
