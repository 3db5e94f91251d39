// The CUDA backend against the CPU backend: every operation, every layer's
// forward and backward pass, and a whole CNN step, to a relative error of
// 1e-4 in fp32. Labelled gpu; each test skips, saying why, without a
// device.
#include "worker/compute/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/random_floats.h"
#include "worker/compute/cpu/cpu_backend.h"
#include "worker/compute/host_allocator.h"
#include "worker/data/rows_dataset.h"
#include "worker/models/layer_graph_model.h"
#include "worker/models/layers/conv2d_layer.h"
#include "worker/models/layers/dense_layer.h"
#include "worker/models/layers/max_pool_layer.h"
#include "worker/models/layers/relu_layer.h"

namespace lockstep {
namespace {

using Trans = ComputeBackend::Transpose;

// |got - want| <= 1e-4 * max(|want|, the mean |want|), element by element.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double mean = 0;
  for (float w : want) mean += std::abs(w);
  mean /= std::max<size_t>(want.size(), 1);
  for (size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max<double>(std::abs(want[i]), mean);
    ASSERT_LE(std::abs(got[i] - want[i]), 1e-4 * scale + 1e-12)
        << what << " " << i << ": gpu " << got[i] << " cpu " << want[i];
  }
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gpu = CreateComputeBackend("cuda");
    if (!gpu.ok()) GTEST_SKIP() << gpu.status().message();
    gpu_ = std::move(gpu).value();
  }

  // A device copy of `v`, freed with the test.
  template <typename T>
  T* Up(const std::vector<T>& v) {
    arrays_.push_back(std::make_unique<DeviceArray<char>>(gpu_.get()));
    EXPECT_TRUE(arrays_.back()->Reserve(v.size() * sizeof(T) + 1).ok());
    T* d = reinterpret_cast<T*>(arrays_.back()->data());
    EXPECT_TRUE(gpu_->CopyToDevice(v.data(), d, v.size() * sizeof(T)).ok());
    return d;
  }
  template <typename T>
  std::vector<T> Down(const T* d, size_t n) {
    std::vector<T> v(n);
    EXPECT_TRUE(gpu_->CopyToHost(d, v.data(), n * sizeof(T)).ok());
    return v;
  }

  // Runs `layer_on(backend)`'s forward and backward on both backends and
  // compares out, the parameter gradient and the input gradient.
  template <typename MakeLayer>
  void ExpectLayerMatches(MakeLayer make, ActivationShape in, size_t params,
                          uint64_t batch, const char* what) {
    SCOPED_TRACE(what);
    auto cpu_layer = make(&cpu_);
    auto gpu_layer = make(gpu_.get());
    const std::vector<float> p = RandomFloats(params + 1, 1),
                             x = RandomFloats(batch * in.size(), 2);
    const uint64_t out_n = batch * cpu_layer->output().size();
    const std::vector<float> dout = RandomFloats(out_n, 3);
    std::vector<float> out(out_n), grad(params + 1), din(x.size());
    ASSERT_TRUE(cpu_layer->Forward(p.data(), x.data(), out.data(), batch).ok());
    ASSERT_TRUE(cpu_layer
                    ->Backward(p.data(), x.data(), out.data(), dout.data(),
                               grad.data(), din.data(), batch)
                    .ok());
    float* d_p = Up(p);
    float* d_x = Up(x);
    float* d_out = Up(std::vector<float>(out_n));
    float* d_dout = Up(dout);
    float* d_grad = Up(std::vector<float>(params + 1));
    float* d_din = Up(std::vector<float>(x.size()));
    ASSERT_TRUE(gpu_layer->Forward(d_p, d_x, d_out, batch).ok());
    ASSERT_TRUE(
        gpu_layer->Backward(d_p, d_x, d_out, d_dout, d_grad, d_din, batch)
            .ok());
    ExpectClose(Down(d_out, out_n), out, "out");
    ExpectClose(Down(d_grad, params),
                std::vector<float>(grad.begin(), grad.begin() + params),
                "grad");
    ExpectClose(Down(d_din, x.size()), din, "din");
  }

  CpuBackend cpu_;
  std::unique_ptr<ComputeBackend> gpu_;
  std::vector<std::unique_ptr<DeviceArray<char>>> arrays_;
};

TEST_F(CudaBackendTest, GemmMatchesTheCpuForEveryTranspose) {
  const uint64_t m = 37, n = 53, k = 71;
  const std::vector<float> a = RandomFloats(m * k, 1),
                           b = RandomFloats(k * n, 2);
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      std::vector<float> c = RandomFloats(m * n, 3);
      float* d_c = Up(c);
      cpu_.Gemm(ta, tb, m, n, k, 1.5f, a.data(), b.data(), 0.5f, c.data());
      gpu_->Gemm(ta, tb, m, n, k, 1.5f, Up(a), Up(b), 0.5f, d_c);
      ExpectClose(Down(d_c, m * n), c, "gemm");
    }
  }
}

TEST_F(CudaBackendTest, ElementwiseAndReductionsMatchTheCpu) {
  const uint64_t rows = 1000, cols = 37;
  const std::vector<float> x = RandomFloats(rows * cols, 4),
                           dy = RandomFloats(rows * cols, 5);
  std::vector<float> sums(cols), relu(x.size()), dx(x.size()), bcast(x.size());
  cpu_.ColumnSums(rows, cols, x.data(), sums.data());
  cpu_.Relu(x.size(), x.data(), relu.data());
  cpu_.ReluBackward(x.size(), relu.data(), dy.data(), dx.data());
  cpu_.BroadcastRow(rows, cols, x.data(), bcast.data());
  float* d_x = Up(x);
  float* d_sums = Up(std::vector<float>(cols));
  float* d_relu = Up(std::vector<float>(x.size()));
  float* d_dx = Up(std::vector<float>(x.size()));
  float* d_bcast = Up(std::vector<float>(x.size()));
  gpu_->ColumnSums(rows, cols, d_x, d_sums);
  gpu_->Relu(x.size(), d_x, d_relu);
  gpu_->ReluBackward(x.size(), d_relu, Up(dy), d_dx);
  gpu_->BroadcastRow(rows, cols, d_x, d_bcast);
  ExpectClose(Down(d_sums, cols), sums, "column sums");
  ExpectClose(Down(d_relu, x.size()), relu, "relu");
  ExpectClose(Down(d_dx, x.size()), dx, "relu backward");
  ExpectClose(Down(d_bcast, x.size()), bcast, "broadcast");
}

TEST_F(CudaBackendTest, GatherMatchesTheCpu) {
  const uint64_t rows = 500, dim = 37;
  const std::vector<float> table = RandomFloats(rows * dim, 8);
  std::vector<uint32_t> ids(777);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 131 + 7) % rows;
  std::vector<float> want(ids.size() * dim);
  cpu_.Gather(ids.size(), dim, table.data(), ids.data(), want.data());
  float* d_out = Up(std::vector<float>(want.size(), -9.0f));
  gpu_->Gather(ids.size(), dim, Up(table), Up(ids), d_out);
  EXPECT_EQ(Down(d_out, want.size()), want);
}

// Page-locked buffers through both copy queues around a kernel on the
// compute queue, repeatedly with fresh data: every result is the one its
// own inputs give (a missing wait would read a stale or half-copied input).
TEST_F(CudaBackendTest, CopyQueuesOrderAroundComputeFromPageLockedMemory) {
  const uint64_t n = 1 << 22;  // 16 MiB: copies take longer than a launch
  HostFloats in(n, 0.0f, HostAllocator<float>(gpu_->host_memory()));
  HostFloats out(n, 0.0f, HostAllocator<float>(gpu_->host_memory()));
  DeviceArray<float> d_in(gpu_.get()), d_out(gpu_.get());
  ASSERT_TRUE(d_in.Reserve(n).ok() && d_out.Reserve(n).ok());
  for (uint32_t round = 0; round < 4; ++round) {
    const std::vector<float> x = RandomFloats(n, 20 + round);
    std::copy(x.begin(), x.end(), in.begin());
    auto fence = gpu_->CopyToDeviceAsync(in.data(), d_in.data(), n * 4);
    ASSERT_TRUE(fence.ok()) << fence.status().ToString();
    gpu_->WaitFor(*fence);
    gpu_->Relu(n, d_in.data(), d_out.data());
    ASSERT_TRUE(gpu_->CopyToHostAsync(d_out.data(), out.data(), n * 4).ok());
    ASSERT_TRUE(gpu_->Synchronize().ok());
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], std::max(x[i], 0.0f)) << "round " << round << " " << i;
    }
  }
}

// A push frame may hold the gradient buffer after the worker's model (and
// its backend) is gone, and let go of it on a transport's thread.
TEST_F(CudaBackendTest, PageLockedBuffersOutliveTheirBackend) {
  auto backend = CreateComputeBackend("cuda");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto buffer = std::make_shared<HostFloats>(
      1 << 20, 1.0f, HostAllocator<float>((*backend)->host_memory()));
  backend->reset();
  std::thread([buffer = std::move(buffer)]() mutable {
    EXPECT_EQ((*buffer)[12345], 1.0f);
    buffer.reset();
  }).join();
  // The device still works: no error was left behind.
  EXPECT_EQ(Down(Up(std::vector<float>{3.0f}), 1)[0], 3.0f);
}

TEST_F(CudaBackendTest, SoftmaxCrossEntropyMatchesTheCpu) {
  const uint64_t rows = 300;
  const uint32_t classes = 10;
  std::vector<float> logits = RandomFloats(rows * classes, 6);
  for (float& z : logits) z *= 20;
  std::vector<int32_t> labels(rows);
  for (uint64_t r = 0; r < rows; ++r)
    labels[r] = static_cast<int32_t>(r % classes);
  std::vector<float> d(logits.size());
  float* d_logits = Up(logits);
  float* d_d = Up(d);
  auto want = cpu_.SoftmaxCrossEntropy(rows, classes, logits.data(),
                                       labels.data(), 0.25f, d.data());
  auto got = gpu_->SoftmaxCrossEntropy(rows, classes, d_logits, Up(labels),
                                       0.25f, d_d);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().ToString();
  EXPECT_NEAR(got->loss_sum, want->loss_sum, 1e-4 * want->loss_sum);
  EXPECT_EQ(got->correct, want->correct);
  ExpectClose(Down(d_d, d.size()), d, "dlogits");
}

TEST_F(CudaBackendTest, ConvLayerMatchesTheCpu) {
  for (uint32_t k : {1u, 3u, 5u}) {
    const ActivationShape in{9, 7, 5};
    ExpectLayerMatches(
        [&](ComputeBackend* b) {
          return std::make_unique<Conv2dLayer>(b, in, k, 6, 0.5f);
        },
        in, 6 * k * k * 5 + 6, 3, "conv");
  }
}

TEST_F(CudaBackendTest, DenseLayerMatchesTheCpu) {
  const ActivationShape in{4, 4, 8};
  ExpectLayerMatches(
      [&](ComputeBackend* b) {
        return std::make_unique<DenseLayer>(b, in, 33, 0.5f);
      },
      in, 33 * 128 + 33, 17, "dense");
}

TEST_F(CudaBackendTest, MaxPoolAndReluLayersMatchTheCpu) {
  const ActivationShape in{9, 8, 6};
  for (uint32_t s : {2u, 3u}) {
    ExpectLayerMatches(
        [&](ComputeBackend* b) {
          return std::make_unique<MaxPoolLayer>(b, in, s);
        },
        in, 0, 4, "pool");
  }
  ExpectLayerMatches(
      [&](ComputeBackend* b) { return std::make_unique<ReluLayer>(b, in); }, in,
      0, 4, "relu");
}

TEST_F(CudaBackendTest, ACnnStepMatchesTheCpu) {
  DataShape shape;
  shape.input_dim = 784;
  shape.classes = 10;
  DenseRows data;
  data.size = 64;
  data.dim = 784;
  data.classes = 10;
  data.features = RandomFloats(64 * 784, 7);
  for (uint64_t i = 0; i < 64; ++i)
    data.labels.push_back(static_cast<int32_t>(i % 10));
  auto cpu = LayerGraphModel::Create("c5x8,p2,c3x16,p2,f64", shape, "cpu");
  auto gpu = LayerGraphModel::Create("c5x8,p2,c3x16,p2,f64", shape, "cuda");
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status().ToString();
  std::vector<float> params((*cpu)->num_params());
  InitDenseParams((*cpu)->shape(), 3, params);
  std::vector<uint64_t> batch(48);
  for (uint64_t i = 0; i < 48; ++i) batch[i] = (i * 7) % 64;
  std::vector<float> want(params.size()), got(params.size());
  auto loss_cpu = (*cpu)->LossAndGradient(params, data, batch, want);
  auto loss_gpu = (*gpu)->LossAndGradient(params, data, batch, got);
  ASSERT_TRUE(loss_cpu.ok() && loss_gpu.ok()) << loss_gpu.status().ToString();
  EXPECT_NEAR(*loss_gpu, *loss_cpu, 1e-4 * *loss_cpu);
  ExpectClose(got, want, "gradient");
  auto eval_cpu = (*cpu)->Evaluate(params, data, 0, 25);
  auto eval_gpu = (*gpu)->Evaluate(params, data, 0, 25);
  ASSERT_TRUE(eval_cpu.ok() && eval_gpu.ok());
  EXPECT_NEAR(eval_gpu->loss, eval_cpu->loss, 1e-4 * eval_cpu->loss);
  EXPECT_EQ(eval_gpu->accuracy, eval_cpu->accuracy);
}

// A worker's step on the GPU: the data set resident (Attach), parameters
// and gradient in page-locked buffers, the copies overlapped with compute.
TEST_F(CudaBackendTest, AWorkersStepOnAResidentDataSetMatchesTheCpu) {
  DenseRows train;
  train.size = 300;
  train.dim = 784;
  train.classes = 10;
  train.features = RandomFloats(300 * 784, 9, 0, 1);
  for (uint64_t i = 0; i < 300; ++i)
    train.labels.push_back(static_cast<int32_t>((i * 3) % 10));
  DenseRows test = train;
  test.size = 200;
  test.features.resize(200 * 784);
  test.labels.resize(200);
  RowsDataset data(std::move(train), std::move(test));
  const std::string net = "c5x8,p2,c3x16,p2,f64";
  auto cpu = LayerGraphModel::Create(net, data.shape(), "cpu");
  auto gpu = LayerGraphModel::Create(net, data.shape(), "cuda");
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->Attach(data).ok());
  ASSERT_TRUE((*gpu)->Resident(*data.dense(Split::kTrain)));
  ASSERT_TRUE((*gpu)->Resident(*data.dense(Split::kTest)));
  std::vector<float> params((*cpu)->num_params());
  InitDenseParams((*cpu)->shape(), 5, params);
  const HostAllocator<float> pinned = (*gpu)->host_allocator();
  ASSERT_NE(pinned.memory(), nullptr);
  HostFloats pulled(params.begin(), params.end(), pinned);
  HostFloats got(params.size(), -1.0f, pinned);
  std::vector<float> want(params.size());
  for (uint64_t step = 0; step < 3; ++step) {
    std::vector<uint64_t> batch(64 + step * 50);
    for (uint64_t i = 0; i < batch.size(); ++i)
      batch[i] = (i * 13 + step) % 300;
    auto loss_cpu =
        (*cpu)->LossAndGradient(data, batch, {params, {}, {}}, {want, {}});
    auto loss_gpu =
        (*gpu)->LossAndGradient(data, batch, {pulled, {}, {}}, {got, {}});
    ASSERT_TRUE(loss_cpu.ok() && loss_gpu.ok()) << loss_gpu.status().ToString();
    EXPECT_NEAR(*loss_gpu, *loss_cpu, 1e-4 * *loss_cpu);
    ExpectClose(std::vector<float>(got.begin(), got.end()), want, "gradient");
  }
  auto eval_cpu = (*cpu)->Evaluate(data, {params, {}, {}});
  auto eval_gpu = (*gpu)->Evaluate(data, {pulled, {}, {}});
  ASSERT_TRUE(eval_cpu.ok() && eval_gpu.ok());
  EXPECT_NEAR(eval_gpu->loss, eval_cpu->loss, 1e-4 * eval_cpu->loss);
  EXPECT_EQ(eval_gpu->samples, 200u);
  EXPECT_EQ(eval_gpu->accuracy, eval_cpu->accuracy);
}

}  // namespace
}  // namespace lockstep
