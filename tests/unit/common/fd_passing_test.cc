#include "common/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/unique_fd.h"

namespace gander {
namespace {

struct Pair {
  UniqueFd a, b;
};

Pair SocketPair() {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

Pair Pipe() {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  return {UniqueFd(p[0]), UniqueFd(p[1])};
}

TEST(FdPassing, APipeEndPassedIsWritableOnTheOtherSide) {
  Pair sock = SocketPair();
  Pair pipe = Pipe();
  int payload = 42;
  ASSERT_EQ(SendFd(sock.a.get(), &payload, sizeof(payload), pipe.b.get()), 0);
  pipe.b.Reset();  // only the received copy stays open

  int got = 0, fd = -1;
  ASSERT_EQ(ReceiveFd(sock.b.get(), &got, sizeof(got), &fd), 0);
  UniqueFd received(fd);
  EXPECT_EQ(got, 42);
  ASSERT_TRUE(received);
  EXPECT_NE(fcntl(received.get(), F_GETFD) & FD_CLOEXEC, 0);  // received close-on-exec
  ASSERT_EQ(write(received.get(), "hello", 5), 5);
  received.Reset();  // the last write end: the reader sees EOF after the data
  char buf[16];
  ASSERT_EQ(read(pipe.a.get(), buf, sizeof(buf)), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  EXPECT_EQ(read(pipe.a.get(), buf, sizeof(buf)), 0);
}

TEST(FdPassing, AMessageWithoutAnFd) {
  Pair sock = SocketPair();
  int err = ENOENT;
  ASSERT_EQ(SendFd(sock.a.get(), &err, sizeof(err), -1), 0);
  int got = 0, fd = 7;
  ASSERT_EQ(ReceiveFd(sock.b.get(), &got, sizeof(got), &fd), 0);
  EXPECT_EQ(got, ENOENT);
  EXPECT_EQ(fd, -1);
}

TEST(FdPassing, SeveralFdsInOrderAndThoseBeyondMaxAreClosed) {
  Pair sock = SocketPair();
  Pair p1 = Pipe(), p2 = Pipe(), p3 = Pipe();
  int fds[] = {p1.b.get(), p2.b.get(), p3.b.get()};
  char tag = 'x';
  ASSERT_EQ(SendFds(sock.a.get(), &tag, 1, fds, 3), 0);
  p1.b.Reset();
  p2.b.Reset();
  p3.b.Reset();
  int got[2] = {-1, -1};
  int count = 0;
  char seen = 0;
  ASSERT_EQ(ReceiveFds(sock.b.get(), &seen, 1, got, 2, &count), 0);
  ASSERT_EQ(count, 2);
  UniqueFd first(got[0]), second(got[1]);
  ASSERT_EQ(write(first.get(), "1", 1), 1);
  ASSERT_EQ(write(second.get(), "2", 1), 1);
  char c;
  ASSERT_EQ(read(p1.a.get(), &c, 1), 1);
  EXPECT_EQ(c, '1');
  ASSERT_EQ(read(p2.a.get(), &c, 1), 1);
  EXPECT_EQ(c, '2');
  // The third was closed on receipt: its pipe has no writer left.
  EXPECT_EQ(read(p3.a.get(), &c, 1), 0);
}

TEST(FdPassing, AShortMessageFailsAndKeepsNoFd) {
  Pair sock = SocketPair();
  Pair pipe = Pipe();
  char one = 1;
  ASSERT_EQ(SendFd(sock.a.get(), &one, 1, pipe.b.get()), 0);
  pipe.b.Reset();
  sock.a.Reset();  // a one-byte message, then EOF: an int never arrives whole
  int got = 0, fd = -1;
  EXPECT_EQ(ReceiveFd(sock.b.get(), &got, sizeof(got), &fd), EPROTO);
  EXPECT_EQ(fd, -1);
  char c;
  EXPECT_EQ(read(pipe.a.get(), &c, 1), 0);  // the fd that came with it was closed
}

TEST(FdPassing, ErrorsAreErrnoValues) {
  Pair sock = SocketPair();
  int x = 0, fd = -1;
  sock.a.Reset();
  EXPECT_EQ(ReceiveFd(sock.b.get(), &x, sizeof(x), &fd), EPROTO);  // the peer is gone
  EXPECT_EQ(SendFd(sock.b.get(), &x, sizeof(x), -1), EPIPE);       // no SIGPIPE either
  EXPECT_EQ(SendFd(-1, &x, sizeof(x), -1), EBADF);
  int many[kMaxPassedFds + 1] = {};
  EXPECT_EQ(SendFds(sock.b.get(), &x, sizeof(x), many, kMaxPassedFds + 1), EINVAL);
}

}  // namespace
}  // namespace gander
