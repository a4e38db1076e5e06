// The line relay: framing, the size limit, non-JSON counting, backpressure, the rewriter hook.
#include "relay/line_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace gander::relay {
namespace {

const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

struct Pipe {
  int r = -1, w = -1;
  explicit Pipe(int flags = O_NONBLOCK) {
    int fds[2];
    EXPECT_EQ(pipe2(fds, flags), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
  std::string ReadAll() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(r, buf, sizeof(buf))) > 0) out.append(buf, n);
    return out;
  }
};

// Records lines; "JSON" here is anything starting with '{' or '['.
struct Recorder : LineObserver {
  std::vector<std::string> lines;
  LineVerdict OnLine(std::string_view line) override {
    lines.emplace_back(line);
    // The padding past the line must be readable (simdjson reads it).
    volatile char c = line.data()[line.size() + kLinePadding - 1];
    (void)c;
    return (line[0] == '{' || line[0] == '[') ? LineVerdict::kForward : LineVerdict::kNotJson;
  }
};

TEST(LineRelay, ForwardsBytesUnchangedAndFramesLines) {
  Pipe in, out;
  Recorder rec;
  LineRelay relay(in.r, out.w, {}, &rec);
  std::string input = "{\"a\":1}\nnot json\n\n{\"b\":";
  ASSERT_EQ(write(in.w, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  relay.OnReadable();
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "{\"a\":1}\nnot json\n\n") << "the partial line waits for its end";
  ASSERT_EQ(write(in.w, "2}\r\n", 4), 4);
  relay.OnReadable();
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "{\"b\":2}\r\n");
  EXPECT_EQ(rec.lines, (std::vector<std::string>{"{\"a\":1}", "not json", "{\"b\":2}\r"}));
  EXPECT_EQ(relay.stats().lines, 4u);
  EXPECT_EQ(relay.stats().non_json_lines, 1u);
  EXPECT_EQ(relay.stats().empty_lines, 1u);
  close(in.w);
  in.w = -1;
  relay.OnReadable();
  EXPECT_TRUE(relay.Finished());
  EXPECT_EQ(relay.stats().bytes_in, relay.stats().bytes_out);
}

TEST(LineRelay, LastLineWithoutNewlineIsObservedAtEof) {
  Pipe in, out;
  Recorder rec;
  LineRelay relay(in.r, out.w, {}, &rec);
  relay.Feed("{\"x\":1}");
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "");
  relay.CloseInput();
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "{\"x\":1}");
  EXPECT_EQ(rec.lines, std::vector<std::string>{"{\"x\":1}"});
  EXPECT_TRUE(relay.Finished());
}

TEST(LineRelay, OversizeLineIsForwardedInPiecesUnparsed) {
  Pipe in, out;
  Recorder rec;
  LineRelay relay(in.r, out.w, {.max_line = 16, .out_capacity = 8, .read_chunk = 4}, &rec);
  std::string big(100, 'x');
  std::string got;
  size_t max_buffered = 0;
  for (size_t i = 0; i < big.size(); i += 10) {
    relay.Feed(std::string_view(big).substr(i, 10));
    max_buffered = std::max(max_buffered, relay.buffered());
    relay.OnWritable();
    got += out.ReadAll();
  }
  EXPECT_EQ(got, big) << "pieces go out before the line ends";
  relay.Feed("yy\n{\"ok\":1}\n");
  relay.OnWritable();
  got += out.ReadAll();
  EXPECT_EQ(got, big + "yy\n{\"ok\":1}\n");
  EXPECT_EQ(rec.lines, std::vector<std::string>{"{\"ok\":1}"}) << "the oversize line is not parsed";
  EXPECT_EQ(relay.stats().oversize_lines, 1u);
  EXPECT_EQ(relay.stats().lines, 2u);
  EXPECT_LE(max_buffered, 16u + 10u);
}

TEST(LineRelay, BackpressureBoundsTheBuffer) {
  Pipe in, out;
  LineRelay relay(in.r, out.w, {.max_line = 1024, .out_capacity = 4096, .read_chunk = 1024});
  // Fill the input pipe with short lines; never drain `out`.
  std::string line(99, 'a');
  line += '\n';
  while (write(in.w, line.data(), line.size()) > 0) {
  }
  size_t peak = 0;
  for (int i = 0; i < 100000 && relay.WantsRead(); ++i) {
    relay.OnReadable();
    peak = std::max(peak, relay.buffered());
    relay.OnWritable();  // fills `out` until it is full, then EAGAIN
  }
  EXPECT_FALSE(relay.WantsRead()) << "a reader that does not read stops the relay reading";
  EXPECT_LE(peak, 4096u + 1024u + 1024u);
  EXPECT_LE(relay.buffer_capacity(), 64u << 10) << "no growth past the first allocation";
  // Drain and it resumes.
  out.ReadAll();
  relay.OnWritable();
  EXPECT_TRUE(relay.WantsRead());
}

TEST(LineRelay, WritesToABlockingPipeWithoutBlocking) {
  Pipe in, out(0);  // out is blocking, like gander's stdout
  // More than any pipe holds (the relay grows its pipes to 1 MiB).
  LineRelay relay(in.r, out.w, {.max_line = 8 << 20, .out_capacity = 8 << 20});
  std::string big(4 << 20, 'b');
  big.back() = '\n';
  relay.Feed(big);
  relay.OnWritable();  // must return once the pipe is full instead of blocking
  EXPECT_TRUE(relay.WantsWrite());
  EXPECT_GT(relay.stats().bytes_out, 0u);
}

TEST(LineRelay, DiscardsOnceTheOutputIsGone) {
  Pipe in, out;
  LineRelay relay(in.r, out.w);
  close(out.r);
  out.r = -1;
  relay.Feed("abc\n");
  relay.OnWritable();  // EPIPE
  EXPECT_TRUE(relay.output_broken());
  EXPECT_FALSE(relay.WantsWrite());
  EXPECT_TRUE(relay.WantsRead()) << "keeps draining so the writer never blocks";
}

// A rewriter that replaces "SECRET" and holds back a trailing prefix of it.
struct Replacer : StreamRewriter {
  Outcome Rewrite(std::string_view pending, bool at_end) override {
    Outcome o;
    std::string text(pending);
    size_t hold = text.size();
    if (!at_end) {
      for (size_t k = std::min<size_t>(5, text.size()); k > 0; --k) {
        if (std::string_view("SECRET").starts_with(
                std::string_view(text).substr(text.size() - k))) {
          hold = text.size() - k;
          break;
        }
      }
    }
    std::string head = text.substr(0, hold);
    for (size_t at; (at = head.find("SECRET")) != std::string::npos;) head.replace(at, 6, "[X]");
    o.released = hold;
    o.replaced = head != text.substr(0, hold);
    o.replacement = head;
    return o;
  }
};

TEST(LineRelay, RewriterReplacesAndHoldsBackAcrossReads) {
  Pipe in, out;
  Replacer r;
  Recorder rec;
  LineRelay relay(in.r, out.w, {}, &rec, &r);
  relay.Feed("a SECRET b\nc SEC");
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "a [X] b\n");
  relay.Feed("RET d\n");
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "c [X] d\n");
  EXPECT_EQ(rec.lines, (std::vector<std::string>{"a SECRET b", "c SECRET d"}))
      << "observers see the input";
  relay.Feed("tail SE");
  relay.CloseInput();
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "tail SE");
}

TEST(LineRelay, HeldBytesAreReleasedAfterTheTimeout) {
  Pipe in, out;
  Replacer r;
  LineRelay relay(in.r, out.w, {.hold_timeout_ms = 0, .hold_lines = false}, nullptr, &r);
  relay.Feed("x\n");
  relay.Feed("abc SEC");
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "x\nabc ") << "no line is held when hold_lines is off";
  ASSERT_NE(relay.HoldDeadline(), INT64_MAX);
  relay.OnTimer(MonotonicNowMs() + 1);
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "SEC");
  EXPECT_EQ(relay.HoldDeadline(), INT64_MAX);
}

TEST(LineRelay, InjectQueuesBytesBetweenLines) {
  Pipe in, out;
  LineRelay relay(in.r, out.w);
  relay.Feed("{\"a\":1}\n");
  ASSERT_TRUE(relay.AtLineBoundary());
  relay.Inject("{\"b\":2}\n");
  relay.OnWritable();
  EXPECT_EQ(out.ReadAll(), "{\"a\":1}\n{\"b\":2}\n");
}

}  // namespace
}  // namespace gander::relay
