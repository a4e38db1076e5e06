// The DNS stub's wire format; see dns_wire.h.
#include "network/dns_wire.h"

#include <cctype>

namespace gander::network {

namespace dns {

namespace {
constexpr uint32_t kTtl = 30;  // seconds, of every answer the stub gives
}  // namespace

std::optional<Question> ParseQuery(const uint8_t* data, size_t size) {
  if (size < 12) return std::nullopt;
  Question q;
  q.id = static_cast<uint16_t>(data[0] << 8 | data[1]);
  q.flags = static_cast<uint16_t>(data[2] << 8 | data[3]);
  uint16_t qdcount = static_cast<uint16_t>(data[4] << 8 | data[5]);
  if ((q.flags & 0x8000) || qdcount != 1) return std::nullopt;  // a response, or not one question
  size_t pos = 12;
  while (true) {
    if (pos >= size) return std::nullopt;
    uint8_t len = data[pos++];
    if (len == 0) break;
    if (len > 63 || pos + len > size) return std::nullopt;  // compression has no place here
    if (!q.name.empty()) q.name += '.';
    for (size_t i = 0; i < len; ++i) {
      char ch = static_cast<char>(data[pos + i]);
      q.name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    pos += len;
    if (q.name.size() > 253) return std::nullopt;
  }
  if (pos + 4 > size) return std::nullopt;
  q.qtype = static_cast<uint16_t>(data[pos] << 8 | data[pos + 1]);
  q.qclass = static_cast<uint16_t>(data[pos + 2] << 8 | data[pos + 3]);
  q.question_end = pos + 4;
  return q;
}

std::string BuildResponse(const uint8_t* query, const Question& q, int rcode,
                          const std::vector<policies::IpAddress>& answers) {
  std::string out(reinterpret_cast<const char*>(query), q.question_end);
  uint16_t flags = static_cast<uint16_t>(0x8000 | (q.flags & 0x7900) | 0x0080 | (rcode & 0xf));
  out[2] = static_cast<char>(flags >> 8);
  out[3] = static_cast<char>(flags & 0xff);
  uint16_t qd = q.question_end > 12 ? 1 : 0;
  uint16_t an = rcode == kNoError ? static_cast<uint16_t>(answers.size()) : 0;
  const uint8_t counts[8] = {0,
                             static_cast<uint8_t>(qd),
                             static_cast<uint8_t>(an >> 8),
                             static_cast<uint8_t>(an & 0xff),
                             0,
                             0,
                             0,
                             0};
  out.replace(4, 8, reinterpret_cast<const char*>(counts), 8);
  if (an == 0) return out;
  for (const policies::IpAddress& ip : answers) {
    uint16_t type = ip.v6 ? kTypeAAAA : kTypeA;
    uint16_t rdlength = static_cast<uint16_t>(ip.size());
    const uint8_t rr[12] = {0xc0,
                            0x0c,  // the name: a pointer to the question's
                            static_cast<uint8_t>(type >> 8),
                            static_cast<uint8_t>(type & 0xff),
                            0,
                            1,  // class IN
                            static_cast<uint8_t>(kTtl >> 24),
                            static_cast<uint8_t>(kTtl >> 16),
                            static_cast<uint8_t>(kTtl >> 8),
                            static_cast<uint8_t>(kTtl),
                            static_cast<uint8_t>(rdlength >> 8),
                            static_cast<uint8_t>(rdlength & 0xff)};
    out.append(reinterpret_cast<const char*>(rr), sizeof(rr));
    out.append(reinterpret_cast<const char*>(ip.bytes.data()), ip.size());
  }
  return out;
}

}  // namespace dns

}  // namespace gander::network
