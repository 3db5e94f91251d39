#include "tools/launch/console.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tests/support/memory_file.h"

namespace lockstep {
namespace {

Progress AtClock(int64_t clock) {
  Progress p;
  p.clock = clock;
  p.max_clocks = 100;
  return p;
}

class ConsoleTest : public ::testing::Test {
 protected:
  MemoryFile out_;
  MemoryFile err_;
};

TEST_F(ConsoleTest, QuietShowsOnlyWarningsErrorsAndUnstructuredStderr) {
  Console console(out_.file(), err_.file(), /*tty=*/false, /*verbose=*/false);
  console.RoleLine("worker 2", "T INFO role=worker rank=2 hello", true);
  console.RoleLine("worker 2", "T DEBUG role=worker rank=2 detail", true);
  console.RoleLine("worker 2", "T WARN role=worker rank=2 slow", true);
  console.RoleLine("server 1", "T ERROR role=server rank=1 bad", true);
  console.RoleLine("server 1", "terminate called after throwing", true);
  console.RoleLine("coordinator", "some stdout text", false);
  EXPECT_EQ(out_.text(),
            "[worker 2] T WARN role=worker rank=2 slow\n"
            "[server 1] T ERROR role=server rank=1 bad\n"
            "[server 1] terminate called after throwing\n");
  EXPECT_EQ(err_.text(), "");
}

TEST_F(ConsoleTest, VerboseShowsEveryLineWithItsRole) {
  Console console(out_.file(), err_.file(), /*tty=*/false, /*verbose=*/true);
  console.RoleLine("coordinator", "T INFO role=coordinator rank=0 up", true);
  console.RoleLine("worker 0", "plain", false);
  EXPECT_EQ(out_.text(),
            "[coordinator] T INFO role=coordinator rank=0 up\n"
            "[worker 0] plain\n");
}

TEST_F(ConsoleTest, OffATerminalProgressIsThrottled) {
  Console console(out_.file(), err_.file(), /*tty=*/false, /*verbose=*/false,
                  /*non_tty_period_s=*/5.0);
  console.ShowProgress(AtClock(1), 0.0);
  console.ShowProgress(AtClock(2), 1.0);
  console.ShowProgress(AtClock(3), 4.9);
  console.ShowProgress(AtClock(4), 5.5);
  console.ShowProgress(AtClock(5), 6.0);
  console.FinishProgress();
  EXPECT_EQ(out_.text(),
            "clock 1/100  test acc -\n"
            "clock 4/100  test acc -\n"
            "clock 5/100  test acc -\n");
}

TEST_F(ConsoleTest, OnATerminalProgressIsRedrawnInPlace) {
  Console console(out_.file(), err_.file(), /*tty=*/true, /*verbose=*/false);
  console.ShowProgress(AtClock(1), 0.0);
  console.ShowProgress(AtClock(2), 0.1);
  console.RoleLine("worker 1", "T WARN role=worker rank=1 slow", true);
  console.FinishProgress();
  EXPECT_EQ(out_.text(),
            "\rclock 1/100  test acc -\033[K"
            "\rclock 2/100  test acc -\033[K"
            "\r\033[K[worker 1] T WARN role=worker rank=1 slow\n"
            "\rclock 2/100  test acc -\033[K"
            "\n");
}

TEST_F(ConsoleTest, MessagesGoToErrWithThePrefix) {
  Console console(out_.file(), err_.file(), /*tty=*/false, /*verbose=*/false);
  console.Message("worker 1 (pid 7) exited with status 1");
  console.ErrorLine("  raw");
  console.Print("done");
  EXPECT_EQ(err_.text(),
            "lockstep-launch: worker 1 (pid 7) exited with status 1\n  raw\n");
  EXPECT_EQ(out_.text(), "done\n");
}

}  // namespace
}  // namespace lockstep
