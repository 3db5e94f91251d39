#include "common/termination.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep
