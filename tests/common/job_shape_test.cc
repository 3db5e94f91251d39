#include "common/job_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

#include "common/wire/job_shape_codec.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

JobShape Mlp() {
  JobShape shape;
  TensorInfo w{"fc0.weight", {8, 4}, 0, 32, 0.5f};
  TensorInfo b{"fc0.bias", {8}, 0, 8, 0.0f};
  shape.model.tensors = {w, b};
  shape.data = {false, 4, 3, 1000, 100};
  return shape;
}

TEST(JobShapeTest, EqualShapesHaveNoDifference) {
  EXPECT_EQ(ShapeDifference(Mlp(), Mlp()), "");
  EXPECT_EQ(Mlp().model.dense_params(), 40u);
}

TEST(JobShapeTest, DifferenceNamesTheFirstThingThatDiffers) {
  JobShape other = Mlp();
  other.model.tensors[0].shape = {16, 4};
  EXPECT_EQ(ShapeDifference(other, Mlp()),
            "tensor fc0.weight has shape [16, 4], not [8, 4]");
  other = Mlp();
  other.data.train_samples = 900;
  EXPECT_EQ(ShapeDifference(other, Mlp()), "900 training samples, not 1000");
  other = Mlp();
  other.model.tensors.pop_back();
  EXPECT_THAT(ShapeDifference(other, Mlp()), HasSubstr("1 tensors, not 2"));
  other = Mlp();
  other.model.sparse_dim = 1;
  EXPECT_THAT(ShapeDifference(other, Mlp()), HasSubstr("sparse rows of 1"));
  other = Mlp();
  other.data.sparse = true;
  EXPECT_THAT(ShapeDifference(other, Mlp()),
              HasSubstr("sparse rows, not dense"));
}

TEST(JobShapeTest, WireRoundTripKeepsEverything) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(JobShapeToWire(fbb, Mlp()));
  auto back = JobShapeFromWire(
      flatbuffers::GetRoot<wire::Describe>(fbb.GetBufferPointer()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ShapeDifference(*back, Mlp()), "");
  EXPECT_EQ(back->data, Mlp().data);
  EXPECT_EQ(back->model.tensors[0].size, 32u);
}

TEST(JobShapeTest, FromWireRefusesShapesThatCannotBeLaidOut) {
  EXPECT_FALSE(JobShapeFromWire(nullptr).ok());
  auto encode = [](TensorInfo t) {
    JobShape shape = Mlp();
    shape.model.tensors = {std::move(t)};
    auto* fbb = new flatbuffers::FlatBufferBuilder();
    fbb->Finish(JobShapeToWire(*fbb, shape));
    return std::unique_ptr<flatbuffers::FlatBufferBuilder>(fbb);
  };
  for (const TensorInfo& bad :
       {TensorInfo{"", {4}, 0, 4, 0}, TensorInfo{"t", {}, 0, 0, 0},
        TensorInfo{"t", {4, 0}, 0, 0, 0},
        TensorInfo{"t", {1ull << 33, 1ull << 33}, 0, 0, 0}}) {
    auto fbb = encode(bad);
    EXPECT_FALSE(JobShapeFromWire(flatbuffers::GetRoot<wire::Describe>(
                                      fbb->GetBufferPointer()))
                     .ok())
        << bad.name;
  }
}

}  // namespace
}  // namespace lockstep
