#include "worker/models/model_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

DataShape Dense(uint64_t dim, uint32_t classes) {
  DataShape data;
  data.input_dim = dim;
  data.classes = classes;
  data.train_samples = 100;
  return data;
}

DataShape Sparse() {
  DataShape data;
  data.sparse = true;
  data.classes = 2;
  data.train_samples = 100;
  return data;
}

TEST(ModelRegistryTest, MlpTensorsFollowTheWidthsAndTheData) {
  auto model = CreateModel("mlp:16,8", Dense(20, 5));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelShape& shape = (*model)->shape();
  ASSERT_EQ(shape.tensors.size(), 6u);
  EXPECT_EQ(shape.tensors[0].name, "fc0.weight");
  EXPECT_EQ(shape.tensors[0].shape, (std::vector<uint64_t>{16, 20}));
  EXPECT_EQ(shape.tensors[5].name, "fc2.bias");
  EXPECT_EQ(shape.tensors[5].shape, std::vector<uint64_t>{5});
  EXPECT_EQ(shape.dense_params(), 16u * 20 + 16 + 8 * 16 + 8 + 5 * 8 + 5);
  EXPECT_EQ(shape.sparse_dim, 0u);
}

TEST(ModelRegistryTest, SparseLrHasABiasAndSparseRowsOfOne) {
  auto model = CreateModel("sparse-lr", Sparse());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->shape().dense_params(), 1u);
  EXPECT_EQ((*model)->shape().sparse_dim, 1u);
}

TEST(ModelRegistryTest, ErrorsNameTheSpecAndTheKnownModels) {
  auto unknown = CreateModel("resnet:50", Dense(20, 5));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              AllOf(HasSubstr("resnet:50"), HasSubstr("softmax"),
                    HasSubstr("mlp:W1,W2,..."), HasSubstr("sparse-lr")));
  auto mismatch = CreateModel("sparse-lr", Dense(20, 5));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(),
              AllOf(HasSubstr("model 'sparse-lr'"), HasSubstr("sparse rows")));
  EXPECT_FALSE(CreateModel("mlp:16", Sparse()).ok());
  EXPECT_FALSE(CreateModel("mlp", Dense(20, 5)).ok());
}

TEST(ModelRegistryTest, InitDenseParamsIsTheServersInitialModel) {
  auto model = CreateModel("mlp:4", Dense(3, 2));
  ASSERT_TRUE(model.ok());
  const ModelShape& shape = (*model)->shape();
  std::vector<float> params(shape.dense_params());
  InitDenseParams(shape, 5, params);
  uint64_t key = 0;
  for (const TensorInfo& t : shape.tensors) {
    for (uint64_t i = 0; i < t.size; ++i, ++key) {
      EXPECT_EQ(params[key], InitialValue(5, key, t.init_scale));
    }
  }
}

}  // namespace
}  // namespace lockstep
