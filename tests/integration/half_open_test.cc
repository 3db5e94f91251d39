// A peer without any key holds 2,000 half-open connections to a server's
// data port and 1,000 to the coordinator, at the distribution's default
// descriptor limit (soft 1,024): every role raises its own limit at start,
// a server keeps at most a few handshakes pending (the oldest closed
// first) and never spins on a full descriptor table, so the workers keep
// training, a new honest worker joins meanwhile, and the job ends well.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/data_plane_probe.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

constexpr int kDataHandshakes = 2000;
constexpr int kControlHandshakes = 1000;
// A server's data port keeps at most this many handshakes pending
// (common/transport/stream/data_port.cc).
constexpr int kMaxPendingHandshakes = 64;

// The port of "tcp://127.0.0.1:PORT" (0 when it is not one).
int PortOf(const std::string& endpoint) {
  std::smatch m;
  if (!std::regex_match(endpoint, m,
                        std::regex("^tcp://127\\.0\\.0\\.1:([0-9]+)$"))) {
    return 0;
  }
  return std::stoi(m[1]);
}

// Opens `count` connections to 127.0.0.1:`port` and sends nothing.
int HoldConnections(int port, int count) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int held = 0;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    const int r =
        connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
    if (r == 0 || errno == EINPROGRESS) ++held;
  }
  return held;
}

// A child process that holds the connections until killed; its pid, once
// it said (on a pipe) how many it opened (*held).
pid_t StartHolder(int data_port, int control_port, int* held) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;  // the attacker's own limit
    setrlimit(RLIMIT_NOFILE, &files);
    int count = HoldConnections(data_port, kDataHandshakes);
    count += HoldConnections(control_port, kControlHandshakes);
    (void)!write(ready[1], &count, sizeof(count));
    while (true) pause();
  }
  close(ready[1]);
  pollfd item{ready[0], POLLIN, 0};
  *held = 0;
  if (poll(&item, 1, 30000) == 1) (void)!read(ready[0], held, sizeof(*held));
  close(ready[0]);
  return child;
}

TEST(HalfOpenTest, HonestWorkersJoinWhileAPeerHoldsThousandsOfHandshakes) {
  // Every process started below begins at the usual default soft limit.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GE(files.rlim_max, rlim_t{kDataHandshakes + kControlHandshakes + 200});
  const rlimit saved = files;
  files.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);

  const std::string run_dir = MakeTempDir("lockstep-half-open");
  JobConfig job;
  job.servers = 1;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  job.max_workers = 3;
  job.data_order = "global";
  // Runs until its time budget: through the attack and the join.
  job.max_clocks = 1000000;
  job.budget_s = 15;
  job.eval_every = 0;
  TestCluster cluster;
  const Status started = cluster.StartCoordinator(job, {"--run-dir", run_dir});
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(cluster.StartServer(0).ok());
  // A floor under each clock keeps the job running through the attack.
  const std::vector<std::string> slow = {"--hetero", "linear=0.01+0.0001"};
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(cluster.StartWorker(w, slow).ok());
  const std::string data = AwaitServerEndpoint(cluster);
  ASSERT_GT(PortOf(data), 0) << data << cluster.Output("server 0");
  ASSERT_GT(PortOf(cluster.endpoint()), 0) << cluster.endpoint();
  // The third worker must join a running job: on a loaded machine the
  // first two may not have started it by the time the handshakes are held.
  ASSERT_TRUE(cluster.AwaitPrinted("coordinator", "workers ready; training",
                                   std::chrono::seconds(60)))
      << cluster.Output("coordinator");

  int held = 0;
  const pid_t holder =
      StartHolder(PortOf(data), PortOf(cluster.endpoint()), &held);
  ASSERT_GT(holder, 0);
  EXPECT_EQ(held, kDataHandshakes + kControlHandshakes);
  ASSERT_TRUE(cluster.StartWorker(2, slow).ok());

  auto exit = cluster.WaitFor("coordinator", std::chrono::seconds(120));
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_TRUE(exit.ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(exit->ok()) << cluster.Output("coordinator");
  ASSERT_TRUE(cluster.WaitAll(std::chrono::seconds(20)));
  for (const char* role : {"server 0", "worker 0", "worker 1", "worker 2"}) {
    EXPECT_TRUE(cluster.ExitOf(role).ok()) << role << cluster.Output(role);
  }
  // The new worker joined the running job while the handshakes were held.
  EXPECT_TRUE(cluster.Printed("worker 2", "to the current clock"))
      << cluster.Output("worker 2");
  const std::string summary = ReadFile(run_dir + "/summary.json");
  EXPECT_GT(JsonNumber(summary, "clocks"), 0) << summary;
  EXPECT_EQ(JsonNumber(summary, "dead_workers"), 0) << summary;
  for (const char* role : {"coordinator", "server 0", "worker 0"}) {
    EXPECT_TRUE(cluster.Printed(role, "raised the open-file limit from 1024"))
        << role << cluster.Output(role);
  }
  // The server closed held handshakes beyond its table of 64 pending ones
  // (how many it took in before the job's end depends on how fast the
  // kernel replays the held peers' SYNs: 502 to over 1,000 seen).
  std::smatch m;
  const std::string out = cluster.Output("server 0");
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex("closed ([0-9]+) that did not authenticate")))
      << out;
  EXPECT_GT(std::stoi(m[1]), kMaxPendingHandshakes) << out;
  std::cout << "half-open: " << held << " connections held; the server closed "
            << m[1] << " unauthenticated; " << JsonNumber(summary, "clocks")
            << " clocks trained\n";
}

}  // namespace
}  // namespace lockstep
