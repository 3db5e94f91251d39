#include "coordinator/enrollment/shape_agreement.h"

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
  ShapeAgreement shapes(1000);
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
  ShapeAgreement shapes(1000);
  ASSERT_TRUE(shapes.Add(0, Shape(10)).ok());
  const Status refused = shapes.Add(2, Shape(12));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("worker 2"));
  EXPECT_THAT(refused.message(), HasSubstr("12 training samples, not 10"));
  EXPECT_FALSE(shapes.Complete({0, 2}));  // the refused one is not recorded
}

TEST(ShapeAgreementTest, AWorkerThatLeftMustDescribeAgain) {
  ShapeAgreement shapes(1000);
  ASSERT_TRUE(shapes.Add(0, Shape(10)).ok());
  ASSERT_TRUE(shapes.Add(1, Shape(10)).ok());
  shapes.Forget(1);
  EXPECT_FALSE(shapes.Complete({0, 1}));
  EXPECT_TRUE(shapes.Complete({0}));
  EXPECT_TRUE(shapes.agreed().has_value());  // the job's shape stays
}

TEST(ShapeAgreementTest, AModelAboveTheCapIsRefusedNotRecorded) {
  ShapeAgreement shapes(1000);
  JobShape huge = Shape(10);
  huge.model.tensors = {TensorInfo{"w", {1001}, 0, 1001, 0}};
  const ShapeAgreement::Verdict verdict = shapes.Judge(0, huge, false);
  EXPECT_EQ(verdict.kind, ShapeAgreement::Verdict::kRefused);
  EXPECT_THAT(verdict.why, HasSubstr("1001 dense parameters"));
  EXPECT_FALSE(shapes.agreed().has_value()) << "the next one sets the job's";
  EXPECT_EQ(shapes.Judge(1, Shape(10), false).kind,
            ShapeAgreement::Verdict::kAgreed);
}

TEST(ShapeAgreementTest, ADifferenceEndsTheJobOnlyUntilTwoAgreed) {
  ShapeAgreement first(1000);
  ASSERT_EQ(first.Judge(0, Shape(10), false).kind,
            ShapeAgreement::Verdict::kAgreed);
  EXPECT_EQ(first.Judge(1, Shape(12), false).kind,
            ShapeAgreement::Verdict::kEndsTheJob);

  ShapeAgreement settled(1000);
  ASSERT_EQ(settled.Judge(0, Shape(10), false).kind,
            ShapeAgreement::Verdict::kAgreed);
  ASSERT_EQ(settled.Judge(1, Shape(10), false).kind,
            ShapeAgreement::Verdict::kAgreed);
  const ShapeAgreement::Verdict odd = settled.Judge(2, Shape(12), false);
  EXPECT_EQ(odd.kind, ShapeAgreement::Verdict::kRefused);
  EXPECT_THAT(odd.why, HasSubstr("describes a different job"));
  // Once training runs: the same, and a matching joiner joins.
  EXPECT_EQ(settled.Judge(3, Shape(12), true).kind,
            ShapeAgreement::Verdict::kRefused);
  EXPECT_EQ(settled.Judge(3, Shape(10), true).kind,
            ShapeAgreement::Verdict::kJoins);
}

}  // namespace
}  // namespace lockstep
