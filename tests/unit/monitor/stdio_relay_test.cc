// The byte relay over real pipes: bounded buffering, EOF, broken output.
#include "monitor/stdio_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace gander::monitor {
namespace {

// A closed pipe must show up as EPIPE, not kill the test binary.
const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_NONBLOCK), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

TEST(ByteRelay, MovesBytesUnchangedAndSeesEof) {
  Pipe in, out;
  ByteRelay relay(in.r, out.w, 16);
  ASSERT_EQ(write(in.w, "hello\n", 6), 6);
  relay.OnReadable();
  EXPECT_TRUE(relay.WantsWrite());
  relay.OnWritable();
  char buf[16] = {};
  ASSERT_EQ(read(out.r, buf, sizeof(buf)), 6);
  EXPECT_EQ(std::string(buf, 6), "hello\n");
  close(in.w);
  in.w = -1;
  relay.OnReadable();
  EXPECT_TRUE(relay.Finished());
  EXPECT_EQ(relay.bytes_relayed(), 6u);
}

TEST(ByteRelay, StopsReadingWhenItsBufferIsFull) {
  Pipe in, out;
  ByteRelay relay(in.r, out.w, 8);
  ASSERT_EQ(write(in.w, "0123456789abcdef", 16), 16);
  relay.OnReadable();
  EXPECT_FALSE(relay.WantsRead()) << "8 bytes buffered, no room: backpressure";
  relay.OnWritable();
  EXPECT_TRUE(relay.WantsRead());
}

TEST(ByteRelay, DiscardsOnceTheOutputIsGone) {
  Pipe in, out;
  ByteRelay relay(in.r, out.w, 8);
  close(out.r);
  out.r = -1;
  ASSERT_EQ(write(in.w, "abc", 3), 3);
  relay.OnReadable();
  relay.OnWritable();  // EPIPE
  EXPECT_TRUE(relay.output_broken());
  EXPECT_FALSE(relay.WantsWrite());
  EXPECT_TRUE(relay.WantsRead()) << "keeps draining so the writer never blocks";
}

}  // namespace
}  // namespace gander::monitor
