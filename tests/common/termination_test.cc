#include "common/termination.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace lockstep {
namespace {

// One test: the signal flag is process-wide and cannot be cleared.
TEST(TerminationTest, AWaitTellsOnceAfterTheSignalAndExpiresAfterTheGrace) {
  TerminationWait wait;
  ASSERT_FALSE(TerminationSignal::Requested());
  EXPECT_FALSE(wait.TellNow()) << "no signal yet";
  EXPECT_TRUE(wait.CheckExpired("the job").ok());
  TerminationSignal::Request();
  EXPECT_TRUE(TerminationSignal::Requested());
  EXPECT_TRUE(wait.TellNow());
  EXPECT_FALSE(wait.TellNow()) << "the coordinator is told once";
  EXPECT_TRUE(wait.CheckExpired("the job").ok()) << "the grace just began";
  TerminationWait other;  // a second wait tells on its own
  EXPECT_TRUE(other.TellNow());
}

// A TFJob retries only 128-255: the code is the environment's to name, and
// a value that is no failing exit status is refused, not used.
TEST(TerminationTest, ThePreemptedExitCodeComesFromTheEnvironment) {
  unsetenv(kPreemptedExitCodeEnv);
  EXPECT_EQ(PreemptedExitCode().value(), kExitPreempted);
  setenv(kPreemptedExitCodeEnv, "143", 1);
  EXPECT_EQ(PreemptedExitCode().value(), 143);
  for (const char* bad : {"0", "256", "-1", "75x", "term"}) {
    setenv(kPreemptedExitCodeEnv, bad, 1);
    const auto code = PreemptedExitCode();
    ASSERT_FALSE(code.ok()) << bad;
    EXPECT_NE(code.status().message().find(kPreemptedExitCodeEnv),
              std::string::npos);
  }
  unsetenv(kPreemptedExitCodeEnv);
}

}  // namespace
}  // namespace lockstep
