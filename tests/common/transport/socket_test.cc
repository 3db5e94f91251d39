#include "common/transport/stream/socket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(DirectEndpointTest, ParsesTcpAndIpcEndpoints) {
  auto tcp = ParseDirectEndpoint("tcp://127.0.0.1:7400");
  ASSERT_TRUE(tcp.ok());
  EXPECT_FALSE(tcp->ipc);
  EXPECT_EQ(tcp->host, "127.0.0.1");
  EXPECT_EQ(tcp->port, 7400);
  auto v6 = ParseDirectEndpoint("tcp://[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  auto ipc = ParseDirectEndpoint("ipc:///tmp/x.sock");
  ASSERT_TRUE(ipc.ok());
  EXPECT_TRUE(ipc->ipc);
  EXPECT_EQ(ipc->path, "/tmp/x.sock");
  for (const char* bad : {"tcp://host", "tcp://:80", "tcp://h:99999",
                          "tcp://h:8x", "udp://h:1", "ipc://", "h:80"}) {
    EXPECT_FALSE(ParseDirectEndpoint(bad).ok()) << bad;
  }
}

TEST(DirectEndpointTest, ListensOnAFreePortAndReportsIt) {
  std::string bound;
  auto fd = ListenDirect("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(fd.ok()) << fd.status().message();
  EXPECT_THAT(bound, HasSubstr("tcp://127.0.0.1:"));
  EXPECT_NE(bound, "tcp://127.0.0.1:0");
  auto client = ConnectDirect(bound, 5);
  ASSERT_TRUE(client.ok());
  int accepted = -1;
  for (int i = 0; i < 100 && accepted < 0; ++i) {
    accepted = AcceptDirect(*fd);
    if (accepted < 0) usleep(10000);
  }
  EXPECT_GE(accepted, 0);
  close(accepted);
  close(*client);
  close(*fd);
}

TEST(DirectEndpointTest, ConnectGivesUpAfterItsTimeoutNamingTheEndpoint) {
  auto fd = ConnectDirect("ipc:///nonexistent/lockstep.sock", 0.1);
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(),
              HasSubstr("ipc:///nonexistent/lockstep.sock"));
}

// A server known to have listened (it registered) that refuses is gone: the
// connect ends at once instead of waiting out its 20 s for a server that may
// still be starting.
TEST(DirectEndpointTest, ARefusalFromAServerKnownToListenIsFinal) {
  std::string bound;
  auto listener = ListenDirect("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(listener.ok());
  close(*listener);  // the server is gone; its port refuses
  const auto start = std::chrono::steady_clock::now();
  auto fd = ConnectDirect(bound, 20, /*listening=*/true);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr("refused"));
  EXPECT_LT(took, 10) << "waited out the timeout";
}

}  // namespace
}  // namespace lockstep
