// The socket factory's protocol (network/socket_factory.h), both ends over a real seqpacket
// pair, the helper's side on a thread in this process's own network namespace.
#include "network/socket_factory.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace gander::network {
namespace {

sockaddr_storage Loopback(uint16_t port, socklen_t* len) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  *len = sizeof(sockaddr_in);
  return ss;
}

// A loopback address whose port a socket of `type` holds (`*holder`, bound, not listening).
sockaddr_storage TakenPort(int type, int* holder, socklen_t* len) {
  sockaddr_storage addr = Loopback(0, len);
  *holder = socket(AF_INET, type, 0);
  bind(*holder, reinterpret_cast<sockaddr*>(&addr), *len);
  socklen_t bound = sizeof(addr);
  getsockname(*holder, reinterpret_cast<sockaddr*>(&addr), &bound);
  return addr;
}

int Option(int fd, int name) {
  int value = -1;
  socklen_t len = sizeof(value);
  getsockopt(fd, SOL_SOCKET, name, &value, &len);
  return value;
}

class SocketFactoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair_), 0);
    helper_ = std::thread([fd = pair_[1]] { ServeFactoryRequests(fd); });
  }
  void TearDown() override {
    if (pair_[0] >= 0) close(pair_[0]);  // the helper reads EOF and returns
    helper_.join();
    if (pair_[1] >= 0) close(pair_[1]);
  }
  int pair_[2] = {-1, -1};
  std::thread helper_;
};

TEST_F(SocketFactoryTest, AStreamRequestIsAnsweredWithANonBlockingTcpSocketBoundThere) {
  socklen_t len = 0;
  sockaddr_storage addr = Loopback(0, &len);
  int error = -1;
  UniqueFd s = RequestFactorySocket(pair_[0], SOCK_STREAM, addr, len, &error);
  ASSERT_TRUE(s) << strerror(error);
  EXPECT_EQ(error, 0);
  EXPECT_EQ(Option(s.get(), SO_TYPE), SOCK_STREAM);
  EXPECT_EQ(Option(s.get(), SO_REUSEPORT), 1) << "beside a park listener";
  EXPECT_TRUE(fcntl(s.get(), F_GETFL) & O_NONBLOCK);
  sockaddr_in bound{};
  socklen_t bound_len = sizeof(bound);
  ASSERT_EQ(getsockname(s.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len), 0);
  EXPECT_EQ(ntohl(bound.sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_NE(bound.sin_port, 0) << "bound, not only made";
}

TEST_F(SocketFactoryTest, ADatagramRequestIsAnsweredWithAUdpSocketBoundToTheAddress) {
  // A free port first, so the answer can be checked against the address asked for.
  int probe = -1;
  socklen_t len = 0;
  sockaddr_storage addr = TakenPort(SOCK_DGRAM, &probe, &len);
  close(probe);
  int error = -1;
  UniqueFd s = RequestFactorySocket(pair_[0], SOCK_DGRAM, addr, len, &error);
  ASSERT_TRUE(s) << strerror(error);
  EXPECT_EQ(Option(s.get(), SO_TYPE), SOCK_DGRAM);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  ASSERT_EQ(getsockname(s.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len), 0);
  EXPECT_EQ(std::memcmp(&bound, &addr, len), 0);
}

TEST_F(SocketFactoryTest, AFailureComesBackAsTheHelpersErrnoWithNoSocket) {
  // The port is taken by a socket without SO_REUSEPORT: the helper's bind fails.
  int taken = -1;
  socklen_t len = 0;
  sockaddr_storage addr = TakenPort(SOCK_STREAM, &taken, &len);
  int error = 0;
  UniqueFd s = RequestFactorySocket(pair_[0], SOCK_STREAM, addr, len, &error);
  EXPECT_FALSE(s);
  EXPECT_EQ(error, EADDRINUSE);
  close(taken);
  // The helper still answers after a failure.
  UniqueFd next = RequestFactorySocket(pair_[0], SOCK_STREAM, Loopback(0, &len), len, &error);
  EXPECT_TRUE(next) << strerror(error);
}

TEST_F(SocketFactoryTest, AMessageNoLongerThanTheTypeEndsTheHelper) {
  int type = SOCK_STREAM;
  ASSERT_EQ(send(pair_[0], &type, sizeof(type), 0), static_cast<ssize_t>(sizeof(type)));
  helper_.join();  // returns: the test ends only if the helper did
  helper_ = std::thread([] {});
  socklen_t len = 0;
  sockaddr_storage addr = Loopback(0, &len);
  int error = 0;
  close(pair_[1]);
  pair_[1] = -1;
  EXPECT_FALSE(RequestFactorySocket(pair_[0], SOCK_STREAM, addr, len, &error));
  EXPECT_EQ(error, EIO) << "the channel is gone";
}

}  // namespace
}  // namespace gander::network
