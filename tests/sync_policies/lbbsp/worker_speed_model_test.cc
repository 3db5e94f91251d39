#include "sync_policies/lbbsp/worker_speed_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "sync_policies/lbbsp/predictor_factory.h"

namespace lockstep {
namespace {

ClockReport Report(uint32_t batch, double compute_s, double cpu = 1) {
  ClockReport r;
  r.batch = batch;
  r.compute_s = compute_s;
  r.cpu_available = cpu;
  return r;
}

WorkerSpeedModel LastValueModel() {
  return WorkerSpeedModel(MakeSpeedPredictor(PredictorKind::kLast, 1));
}

TEST(WorkerSpeedModelTest, UnknownUntilTheFirstSpeedIsObserved) {
  WorkerSpeedModel model = LastValueModel();
  EXPECT_EQ(model.PredictFor(0), 0);
  EXPECT_FALSE(model.PredictedFor(0).has_value());
  // A report without compute time carries readings only.
  model.Observe(Report(0, 0));
  EXPECT_EQ(model.PredictFor(0), 0);
  model.Observe(Report(100, 0.5));
  EXPECT_DOUBLE_EQ(model.PredictFor(1), 200);
  EXPECT_EQ(model.PredictedFor(1), 200);
  EXPECT_FALSE(model.PredictedFor(2).has_value());
}

TEST(WorkerSpeedModelTest, ScoresEachPredictionAgainstTheSpeedThatCame) {
  WorkerSpeedModel model = LastValueModel();
  EXPECT_FALSE(model.Rmse().has_value());
  model.Observe(Report(100, 1));  // 100/s, nothing predicted yet
  EXPECT_FALSE(model.Rmse().has_value());
  model.PredictFor(1);            // last value: 100
  model.Observe(Report(100, 2));  // 50/s came: error 50
  ASSERT_TRUE(model.Rmse().has_value());
  EXPECT_DOUBLE_EQ(*model.Rmse(), 50);
  EXPECT_FALSE(model.predicted().has_value());  // scored, gone
  model.PredictFor(2);                          // 50
  model.Observe(Report(100, 1));                // 100/s: error 50 again
  EXPECT_DOUBLE_EQ(*model.Rmse(), 50);
}

TEST(WorkerSpeedModelTest, SavedModelContinuesAtTheResumedClock) {
  WorkerSpeedModel model = LastValueModel();
  model.Observe(Report(100, 1, 0.5));
  model.PredictFor(3);
  model.Observe(Report(300, 1, 0.25));
  model.PredictFor(4);
  std::vector<double> saved;
  StateWriter out(&saved);
  model.Save(&out);

  WorkerSpeedModel back = LastValueModel();
  StateReader in("model", saved);
  ASSERT_TRUE(back.Load(&in, 9).ok());
  EXPECT_TRUE(in.Finish().ok());
  // The outstanding prediction is for the clock the job resumes at.
  EXPECT_EQ(back.PredictedFor(9), 300);
  EXPECT_EQ(back.Rmse(), model.Rmse());
  EXPECT_DOUBLE_EQ(back.PredictFor(9), model.PredictFor(4));

  // A reader holds a view: the truncated state must outlive it.
  const std::vector<double> truncated(saved.begin(), saved.begin() + 3);
  StateReader short_state("model", truncated);
  EXPECT_FALSE(LastValueModel().Load(&short_state, 0).ok());
}

}  // namespace
}  // namespace lockstep
