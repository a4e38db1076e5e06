// libFuzzer target: the stdio relay's framer and the JSON-RPC reader, end to end. The input is
// cut into chunks (sizes from its first bytes) and fed to a LineRelay with the RpcMonitor as
// observer, once as client traffic and once as server traffic, then once more with a secret
// redactor. Checks: without a rewriter the output is the input, byte for byte; the buffer
// never exceeds its bound; nothing crashes (ASan/UBSan).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "relay/line_relay.h"
#include "relay/redactor.h"
#include "relay/rpc_monitor.h"

namespace {

using namespace gander::relay;  // NOLINT(google-build-using-namespace)

constexpr LineRelayOptions kOptions{.max_line = 512, .out_capacity = 256, .read_chunk = 128};

std::string Pump(std::string_view data, size_t chunk_seed, LineObserver* observer,
                 StreamRewriter* rewriter) {
  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) abort();
  LineRelay relay(-1, p[1], kOptions, observer, rewriter);
  std::string out;
  char buf[4096];
  auto drain = [&] {
    while (relay.WantsWrite()) {
      relay.OnWritable();
      ssize_t n;
      while ((n = read(p[0], buf, sizeof(buf))) > 0) out.append(buf, n);
    }
  };
  size_t at = 0, seed = chunk_seed;
  while (at < data.size()) {
    size_t len = 1 + (seed % 97);
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    len = std::min(len, data.size() - at);
    relay.Feed(data.substr(at, len));
    at += len;
    // Bounded: a partial line up to max_line, ready bytes up to out_capacity plus one line.
    if (relay.buffered() > kOptions.max_line * 2 + kOptions.out_capacity + 4096) abort();
    if (seed % 3 == 0) drain();
    if (seed % 7 == 0) relay.OnTimer(INT64_MAX - 1);
  }
  relay.CloseInput();
  drain();
  close(p[0]);
  close(p[1]);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  std::string_view data(reinterpret_cast<const char*>(bytes), size);
  size_t seed = size ? bytes[0] : 0;
  RpcMonitor rpc("fuzz", nullptr, kOptions.max_line);
  if (Pump(data, seed, &rpc.client_side(), nullptr) != data) abort();
  if (Pump(data, seed + 1, &rpc.server_side(), nullptr) != data) abort();
  // A restart in the middle: the replay and the failures must be well-formed lines.
  std::string failed = rpc.FailInFlight("fuzz");
  std::string replay = rpc.HandshakeReplay();
  if ((!failed.empty() && failed.back() != '\n') || (!replay.empty() && replay.back() != '\n'))
    abort();
  Redactor redactor({{"S", "sekrit/\xC3\xA9-token"}, {"T", "abcd"}});
  std::string redacted = Pump(data, seed + 2, nullptr, &redactor);
  if (redacted.find("sekrit/\xC3\xA9-token") != std::string::npos) abort();
  return 0;
}
