#include "common/coordinator_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(CoordinatorWatchTest, WithoutAWindowSilenceEndsTheRole) {
  CoordinatorWatch watch("tcp://c:1", 0);
  watch.set_heartbeat_ms(100);  // silent for 10 x 100 ms is gone
  watch.Welcomed(1000);
  EXPECT_TRUE(watch.Check(2000).ok());
  const Status gone = watch.Check(2001);
  EXPECT_EQ(gone.code(), StatusCode::kUnavailable);
  EXPECT_THAT(
      gone.message(),
      HasSubstr("coordinator at tcp://c:1 has been silent for 1001 ms"));
  // Told it is not a member: no window, so nothing to wait for, and the
  // answer does not count as the coordinator being alive.
  CoordinatorWatch told("tcp://c:1", 0);
  told.set_heartbeat_ms(100);
  told.Welcomed(1000);
  EXPECT_FALSE(told.Forgotten(1900));
  EXPECT_FALSE(told.reattaching());
  EXPECT_FALSE(told.Check(2001).ok());
}

TEST(CoordinatorWatchTest, ACoordinatorThatWasOnlySilentClosesTheWindow) {
  CoordinatorWatch watch("tcp://c:1", 5);
  watch.set_heartbeat_ms(100);
  watch.Welcomed(1000);
  EXPECT_TRUE(watch.Check(2001).ok());
  ASSERT_TRUE(watch.reattaching());
  watch.StillKnown(3000);  // e.g. an admission: it knows this role
  EXPECT_FALSE(watch.reattaching());
  EXPECT_TRUE(watch.Check(3500).ok());
  EXPECT_TRUE(watch.Check(9000).ok());  // silent again: a new window
  EXPECT_TRUE(watch.reattaching());
}

TEST(CoordinatorWatchTest, AWindowRegistersAgainEverySecondUntilWelcomed) {
  CoordinatorWatch watch("tcp://c:1", 5);
  watch.set_heartbeat_ms(100);
  watch.Welcomed(1000);
  EXPECT_TRUE(watch.Check(2001).ok());  // silent: the window opens
  EXPECT_TRUE(watch.reattaching());
  EXPECT_TRUE(watch.RegisterDue(2001));  // at once
  EXPECT_FALSE(watch.RegisterDue(2500));
  EXPECT_TRUE(watch.RegisterDue(3001));  // a second later
  EXPECT_TRUE(watch.Check(7001).ok());
  watch.Welcomed(7001);
  EXPECT_FALSE(watch.reattaching());
  EXPECT_FALSE(watch.RegisterDue(8000));
  EXPECT_TRUE(watch.Check(8000).ok());
}

TEST(CoordinatorWatchTest, TheWindowPassingWithoutAWelcomeEndsTheRole) {
  CoordinatorWatch watch("tcp://c:1", 5);
  watch.Welcomed(0);
  EXPECT_TRUE(watch.Forgotten(100));  // NotMember: opens at once
  EXPECT_TRUE(watch.reattaching());
  EXPECT_TRUE(watch.Check(5100).ok());
  const Status gone = watch.Check(5101);
  EXPECT_EQ(gone.code(), StatusCode::kUnavailable);
  EXPECT_THAT(gone.message(), HasSubstr("did not take this role back "
                                        "within 5 s"));
}

TEST(CoordinatorWatchTest, TheWindowComesFromTheEnvironmentUnlessGiven) {
  setenv(kReattachEnv, "12.5", 1);
  EXPECT_EQ(CoordinatorWatch("e", -1).reattach_s(), 12.5);
  EXPECT_EQ(CoordinatorWatch("e", 3).reattach_s(), 3);
  setenv(kReattachEnv, "soon", 1);
  EXPECT_EQ(CoordinatorWatch("e", -1).reattach_s(), 0);
  setenv(kReattachEnv, "-4", 1);
  EXPECT_EQ(CoordinatorWatch("e", -1).reattach_s(), 0);
  unsetenv(kReattachEnv);
  EXPECT_EQ(CoordinatorWatch("e", -1).reattach_s(), 0);
}

}  // namespace
}  // namespace lockstep
