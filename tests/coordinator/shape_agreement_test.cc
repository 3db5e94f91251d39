#include "coordinator/shape_agreement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

JobShape Shape(uint64_t train_samples) {
  JobShape shape;
  shape.model.tensors = {TensorInfo{"bias", {1}, 0, 1, 0}};
  shape.data.train_samples = train_samples;
  return shape;
}

TEST(ShapeAgreementTest, CompleteOnceEveryLiveWorkerDescribedItself) {
  ShapeAgreement shapes;
  EXPECT_FALSE(shapes.Complete({}));
  EXPECT_FALSE(shapes.Complete({0, 1}));
  ASSERT_TRUE(shapes.Add(1, Shape(10)).ok());
  EXPECT_FALSE(shapes.Complete({0, 1}));
  ASSERT_TRUE(shapes.Add(0, Shape(10)).ok());
  EXPECT_TRUE(shapes.Complete({0, 1}));
  ASSERT_TRUE(shapes.agreed().has_value());
  EXPECT_EQ(shapes.agreed()->data.train_samples, 10u);
}

TEST(ShapeAgreementTest, ADifferentDescriptionIsRefusedAndNamed) {
  ShapeAgreement shapes;
  ASSERT_TRUE(shapes.Add(0, Shape(10)).ok());
  const Status refused = shapes.Add(2, Shape(12));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("worker 2"));
  EXPECT_THAT(refused.message(), HasSubstr("12 training samples, not 10"));
  EXPECT_FALSE(shapes.Complete({0, 2}));  // the refused one is not recorded
}

TEST(ShapeAgreementTest, AWorkerThatLeftMustDescribeAgain) {
  ShapeAgreement shapes;
  ASSERT_TRUE(shapes.Add(0, Shape(10)).ok());
  ASSERT_TRUE(shapes.Add(1, Shape(10)).ok());
  shapes.Forget(1);
  EXPECT_FALSE(shapes.Complete({0, 1}));
  EXPECT_TRUE(shapes.Complete({0}));
  EXPECT_TRUE(shapes.agreed().has_value());  // the job's shape stays
}

}  // namespace
}  // namespace lockstep
