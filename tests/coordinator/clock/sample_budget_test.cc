#include "coordinator/clock/sample_budget.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(SampleBudgetTest, ClocksInFlightCountUntilTheirWorkerLeaves) {
  SampleBudget budget(100);
  budget.Admitted(0, 40);
  budget.Admitted(1, 40);
  EXPECT_EQ(budget.Remaining(), 20u);
  budget.Reported(0, 40);
  EXPECT_EQ(budget.processed(), 40u);
  EXPECT_EQ(budget.Remaining(), 20u);
  // Worker 1 dies mid-clock: its 40 samples were never processed.
  budget.Left(1);
  EXPECT_EQ(budget.Remaining(), 60u);
  EXPECT_FALSE(budget.Spent());
}

TEST(SampleBudgetTest, IsSpentOnceProcessedAndInFlightReachTheTotal) {
  SampleBudget budget(50);
  budget.Reported(0, 30);
  budget.Admitted(1, 20);
  EXPECT_TRUE(budget.Spent());
  EXPECT_EQ(budget.Remaining(), 0u);
  // An abandoned clock is replaced by the worker's next admission.
  budget.Admitted(1, 10);
  EXPECT_FALSE(budget.Spent());
}

TEST(SampleBudgetTest, RestoreForgetsTheClocksInFlight) {
  SampleBudget budget(100);
  budget.Reported(0, 70);
  budget.Admitted(1, 30);
  budget.Restore(50);
  EXPECT_EQ(budget.processed(), 50u);
  EXPECT_EQ(budget.Remaining(), 50u);
}

}  // namespace
}  // namespace lockstep
