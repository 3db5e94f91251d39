// A connected pair of non-blocking Unix-domain stream sockets, closed when
// the test ends: for tests that play both ends of a stream (a_ writes, b_
// reads, or the other way round). A test that closes one sets it to -1.
// Thread-safety: the test's.
#ifndef LOCKSTEP_TESTS_SUPPORT_SOCKET_PAIR_H_
#define LOCKSTEP_TESTS_SUPPORT_SOCKET_PAIR_H_

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace lockstep {

class SocketPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    a_ = fds[0];
    b_ = fds[1];
  }
  void TearDown() override {
    if (a_ >= 0) close(a_);
    if (b_ >= 0) close(b_);
  }
  int a_ = -1, b_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_SOCKET_PAIR_H_
