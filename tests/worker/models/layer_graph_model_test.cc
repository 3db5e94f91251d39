// The cnn: model: its mini-syntax (shapes, names, errors), the whole net's
// gradient against central differences, batch-mean semantics, chunked
// evaluation, and SGD learning a spatial task.
#include "worker/models/layer_graph_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "worker/compute/cpu/cpu_backend.h"
#include "worker/data/rows_dataset.h"
#include "worker/models/model_registry.h"

namespace lockstep {
namespace {

DataShape Images(uint64_t dim, uint32_t classes) {
  DataShape s;
  s.input_dim = dim;
  s.classes = classes;
  s.train_samples = 10;
  s.test_samples = 10;
  return s;
}

std::unique_ptr<LayerGraphModel> Cnn(const std::string& args, uint64_t dim,
                                     uint32_t classes) {
  auto model = LayerGraphModel::Create(args, Images(dim, classes), "cpu");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

std::string CnnError(const std::string& args, uint64_t dim = 784) {
  auto model = LayerGraphModel::Create(args, Images(dim, 10), "cpu");
  return model.ok() ? "" : model.status().message();
}

// Class q: a bright 2x2 blob in quadrant q of a 6x6 image, over noise.
DenseRows Quadrants(uint64_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(0.0f, 0.3f);
  DenseRows data;
  data.size = size;
  data.dim = 36;
  data.classes = 4;
  for (uint64_t i = 0; i < size; ++i) {
    const int q = static_cast<int>(rng() % 4);
    std::vector<float> image(36);
    for (float& v : image) v = noise(rng);
    const int y0 = (q / 2) * 3 + static_cast<int>(rng() % 2);
    const int x0 = (q % 2) * 3 + static_cast<int>(rng() % 2);
    for (int y = y0; y < y0 + 2; ++y)
      for (int x = x0; x < x0 + 2; ++x) image[y * 6 + x] += 1.0f;
    data.features.insert(data.features.end(), image.begin(), image.end());
    data.labels.push_back(q);
  }
  return data;
}

std::vector<float> Init(const LayerGraphModel& model, uint64_t seed) {
  std::vector<float> params(model.num_params());
  InitDenseParams(model.shape(), seed, params);
  return params;
}

TEST(LayerGraphModelTest, TheClassicTwoConvNetHasTheDocumentedTensors) {
  auto model = Cnn("c5x32,p2,c5x64,p2,f1024", 784, 10);
  ASSERT_NE(model, nullptr);
  const std::vector<TensorInfo>& t = model->shape().tensors;
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].name, "conv0.weight");
  EXPECT_EQ(t[0].shape, (std::vector<uint64_t>{32, 5, 5, 1}));
  EXPECT_EQ(t[2].name, "conv1.weight");
  EXPECT_EQ(t[2].shape, (std::vector<uint64_t>{64, 5, 5, 32}));
  EXPECT_EQ(t[4].name, "fc0.weight");
  EXPECT_EQ(t[4].shape, (std::vector<uint64_t>{1024, 7 * 7 * 64}));
  EXPECT_EQ(t[6].name, "fc1.weight");
  EXPECT_EQ(t[6].shape, (std::vector<uint64_t>{10, 1024}));
  EXPECT_EQ(t[7].name, "fc1.bias");
  EXPECT_EQ(model->num_params(),
            800u + 32 + 51200 + 64 + 3211264 + 1024 + 10240 + 10);
  // He-uniform for the hidden layers, Glorot-uniform for the output.
  EXPECT_FLOAT_EQ(t[2].init_scale, std::sqrt(6.0f / 800));
  EXPECT_FLOAT_EQ(t[6].init_scale, std::sqrt(6.0f / 1034));
}

TEST(LayerGraphModelTest, BadSpecsAreRefusedWithTheReason) {
  EXPECT_NE(CnnError("c5x32,q2").find("bad item 'q2' (items: i<H>x<W>x<C>"),
            std::string::npos);
  EXPECT_NE(CnnError("c4x8").find("must be odd"), std::string::npos);
  EXPECT_NE(CnnError("c3x8,p30").find("does not fit a 28x28x8 input"),
            std::string::npos);
  EXPECT_NE(CnnError("f10,c3x3").find("after a dense layer"),
            std::string::npos);
  EXPECT_NE(CnnError("c3x4", 30).find("30 features are not a square image"),
            std::string::npos);
  EXPECT_NE(CnnError("i5x3x2,c3x4", 31).find("5x3x2 is 30 floats"),
            std::string::npos);
  EXPECT_NE(CnnError("").find("cnn needs layers"), std::string::npos);
  EXPECT_NE(CnnError("i28x28x1").find("cnn needs layers"), std::string::npos);
  EXPECT_NE(CnnError("c0x3").find("bad item 'c0x3'"), std::string::npos);
  EXPECT_EQ(CnnError("i5x3x2,c3x4,p2,f3", 30), "");
  auto device = LayerGraphModel::Create("c3x4", Images(36, 4), "tpu");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("unknown device"),
            std::string::npos);
}

TEST(LayerGraphModelTest, IsRegisteredAsCnn) {
  auto model = CreateModel("cnn:c3x4,p2,f8", Images(36, 4));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->shape().tensors.size(), 6u);
  auto bad = CreateModel("cnn:z", Images(36, 4));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("model 'cnn:z': bad item 'z'"),
            std::string::npos);
}

TEST(LayerGraphModelTest, GradientOfTheWholeNetMatchesFiniteDifferences) {
  auto model = Cnn("i6x6x1,c3x3,p2,c3x2,f5", 36, 4);
  ASSERT_NE(model, nullptr);
  const DenseRows data = Quadrants(6, 5);
  std::vector<uint64_t> batch(data.size);
  std::iota(batch.begin(), batch.end(), 0);
  std::vector<float> params = Init(*model, 3);
  for (float& p : params) p += 0.05f;  // biases off zero: no dead units
  std::vector<float> grad(params.size()), scratch(params.size());
  ASSERT_TRUE(model->LossAndGradient(params, data, batch, grad).ok());
  const float h = 1e-3f;
  for (size_t i = 0; i < params.size(); ++i) {
    const float keep = params[i];
    params[i] = keep + h;
    const double up = *model->LossAndGradient(params, data, batch, scratch);
    params[i] = keep - h;
    const double down = *model->LossAndGradient(params, data, batch, scratch);
    params[i] = keep;
    const double fd = (up - down) / (2.0 * h);
    ASSERT_NEAR(grad[i], fd, 1e-3 + 1e-2 * std::abs(fd)) << "parameter " << i;
  }
}

TEST(LayerGraphModelTest, GradientIsTheMeanOverTheBatch) {
  auto model = Cnn("i6x6x1,c3x2,p2,f4", 36, 4);
  const DenseRows data = Quadrants(4, 6);
  const std::vector<float> params = Init(*model, 4);
  std::vector<float> both(params.size()), a(params.size()), b(params.size());
  const std::vector<uint64_t> ab = {1, 3}, one = {1}, three = {3};
  const double loss_ab = *model->LossAndGradient(params, data, ab, both);
  const double loss_a = *model->LossAndGradient(params, data, one, a);
  const double loss_b = *model->LossAndGradient(params, data, three, b);
  EXPECT_NEAR(loss_ab, (loss_a + loss_b) / 2, 1e-6);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_NEAR(both[i], (a[i] + b[i]) / 2, 1e-6) << i;
  }
  std::vector<float> empty(params.size(), 7.0f);
  EXPECT_EQ(*model->LossAndGradient(params, data, {}, empty), 0.0);
  EXPECT_EQ(empty, std::vector<float>(params.size(), 0.0f));
}

TEST(LayerGraphModelTest, EvaluateChunkingDoesNotChangeTheResult) {
  auto model = Cnn("i6x6x1,c3x2,p2,f4", 36, 4);
  const DenseRows data = Quadrants(50, 7);
  const std::vector<float> params = Init(*model, 5);
  const EvalResult whole = *model->Evaluate(params, data, 0, 1000);
  const EvalResult chunked = *model->Evaluate(params, data, 0, 7);
  EXPECT_EQ(whole.samples, 50u);
  EXPECT_NEAR(whole.loss, chunked.loss, 1e-6);
  EXPECT_EQ(whole.accuracy, chunked.accuracy);
  EXPECT_EQ(model->Evaluate(params, data, 20, 7)->samples, 20u);
  EXPECT_TRUE(std::isnan(whole.auc));
}

TEST(LayerGraphModelTest, SgdLearnsWhereTheBlobIs) {
  auto model = Cnn("i6x6x1,c3x4,p2,f16", 36, 4);
  const DenseRows train = Quadrants(200, 8), test = Quadrants(100, 9);
  std::vector<float> params = Init(*model, 6);
  std::vector<float> grad(params.size());
  std::vector<uint64_t> all(train.size);
  std::iota(all.begin(), all.end(), 0);
  const double initial = model->Evaluate(params, test, 0)->loss;
  for (int step = 0; step < 400; ++step) {
    const std::span<const uint64_t> batch(all.data() + (step % 10) * 20, 20);
    ASSERT_TRUE(model->LossAndGradient(params, train, batch, grad).ok());
    for (size_t i = 0; i < params.size(); ++i) params[i] -= 0.1f * grad[i];
  }
  const EvalResult result = *model->Evaluate(params, test, 0);
  EXPECT_GE(result.accuracy, 0.97);
  EXPECT_LT(result.loss, initial / 4);
}

TEST(LayerGraphModelTest, AnMlpIsTheDocumentedDenseNetOnEveryDevice) {
  // "mlp:8,4" on 36 inputs and 4 classes: fc<i>.weight [out, in] then
  // fc<i>.bias, hidden layers He-uniform, the output layer Glorot-uniform.
  const DataShape shape = Images(36, 4);
  auto mlp = CreateModel("mlp:8,4", shape, "cpu");
  ASSERT_TRUE(mlp.ok()) << mlp.status().ToString();
  const std::vector<TensorInfo>& t = (*mlp)->shape().tensors;
  ASSERT_EQ(t.size(), 6u);
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> want = {
      {"fc0.weight", {8, 36}}, {"fc0.bias", {8}},      {"fc1.weight", {4, 8}},
      {"fc1.bias", {4}},       {"fc2.weight", {4, 4}}, {"fc2.bias", {4}}};
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].name, want[i].first);
    EXPECT_EQ(t[i].shape, want[i].second);
  }
  EXPECT_FLOAT_EQ(t[0].init_scale, std::sqrt(6.0f / 36));
  EXPECT_FLOAT_EQ(t[2].init_scale, std::sqrt(6.0f / 8));
  EXPECT_FLOAT_EQ(t[4].init_scale, std::sqrt(6.0f / (4 + 4)));
  EXPECT_EQ(t[1].init_scale, 0.0f);
  auto softmax = CreateModel("softmax", shape, "cpu");
  ASSERT_TRUE(softmax.ok());
  auto sparse = CreateModel("sparse-lr", DataShape{.sparse = true}, "cuda");
  ASSERT_FALSE(sparse.ok());
  EXPECT_NE(sparse.status().message().find("runs on the cpu only"),
            std::string::npos);
}

// The CPU backend posing as a device: not host-visible (so the model
// stages parameters and rows and copies the gradient back, as on a GPU)
// with `free` bytes of memory.
class PretendDevice : public CpuBackend {
 public:
  explicit PretendDevice(uint64_t free) : free_(free) {}
  bool host_visible() const override { return false; }
  uint64_t memory_available() const override { return free_; }

 private:
  uint64_t free_;
};

TEST(LayerGraphModelTest,
     OnADeviceTheStagedStepMatchesTheHostOneAndTheCapFits) {
  const std::string net = "i6x6x1,c3x2,p2,f4";
  const DenseRows data = Quadrants(20, 11);
  auto host = Cnn(net, 36, 4);
  const uint64_t free = 1 << 20;
  auto device = LayerGraphModel::CreateOn(
      net, Images(36, 4), std::make_unique<PretendDevice>(free));
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  const std::vector<float> params = Init(*host, 12);
  std::vector<float> want(params.size()), got(params.size());
  const std::vector<uint64_t> batch = {1, 4, 9, 16, 19};
  const double loss_host = *host->LossAndGradient(params, data, batch, want);
  const double loss_device =
      *(*device)->LossAndGradient(params, data, batch, got);
  EXPECT_EQ(loss_device, loss_host);
  EXPECT_EQ(got, want);
  EXPECT_EQ((*device)->Evaluate(params, data, 0, 3)->accuracy,
            host->Evaluate(params, data, 0, 3)->accuracy);
  // Per sample: row 36 + label 1, outputs 72 + 72 + 18 + 4 + 4 + 4, scratch
  // 324 (patches) + 18 (argmax), two gradient buffers of the widest, 72.
  EXPECT_EQ(host->graph().BytesPerSample(),
            (37 + 174 + 342 + 144) * sizeof(float));
  const double usable = 0.9 * free - 2.0 * 4 * params.size();
  const uint32_t cap = (*device)->MaxBatch();
  EXPECT_EQ(cap,
            static_cast<uint32_t>(
                usable / static_cast<double>(host->graph().BytesPerSample())));
  EXPECT_GT(cap, 100u);
  EXPECT_EQ(host->MaxBatch(), 0u);  // host memory: no cap
}

// Heap memory that counts its live blocks.
class CountingHostMemory : public HostMemory {
 public:
  void* Allocate(size_t bytes) override {
    ++live;
    return std::malloc(bytes);
  }
  void Free(void* memory) override {
    if (memory != nullptr) --live;
    std::free(memory);
  }
  int live = 0;
};

// PretendDevice counting what goes through the copy queues, the gather and
// the compute queue's copies, with host memory of its own.
class QueueCountingDevice : public PretendDevice {
 public:
  QueueCountingDevice() : PretendDevice(64 << 20) {}
  std::shared_ptr<HostMemory> host_memory() override { return memory; }
  Status CopyToDevice(const void* host, void* device, size_t bytes) override {
    ++copies;
    return PretendDevice::CopyToDevice(host, device, bytes);
  }
  StatusOr<Fence> CopyToDeviceAsync(const void* host, void* device,
                                    size_t bytes) override {
    ++copies_in;
    return PretendDevice::CopyToDeviceAsync(host, device, bytes);
  }
  void WaitFor(Fence fence) override {
    ++waits;
    PretendDevice::WaitFor(fence);
  }
  Status CopyToHostAsync(const void* device, void* host,
                         size_t bytes) override {
    ++copies_out;
    return PretendDevice::CopyToHostAsync(device, host, bytes);
  }
  void Gather(uint64_t count, uint64_t row_words, const void* table,
              const uint32_t* indices, void* out) override {
    ++gathers;
    PretendDevice::Gather(count, row_words, table, indices, out);
  }
  int copies = 0, copies_in = 0, waits = 0, copies_out = 0, gathers = 0;
  std::shared_ptr<CountingHostMemory> memory =
      std::make_shared<CountingHostMemory>();
};

TEST(LayerGraphModelTest,
     OnADeviceAnAttachedDataSetIsGatheredThereWithOverlappedCopies) {
  const std::string net = "i6x6x1,c3x2,p2,f4";
  RowsDataset data(Quadrants(20, 11), Quadrants(9, 12));
  auto host = Cnn(net, 36, 4);
  auto owned = std::make_unique<QueueCountingDevice>();
  QueueCountingDevice* device_backend = owned.get();
  auto device = LayerGraphModel::CreateOn(net, Images(36, 4), std::move(owned));
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  ASSERT_TRUE((*device)->Attach(data).ok());
  EXPECT_TRUE((*device)->Resident(*data.dense(Split::kTrain)));
  EXPECT_TRUE((*device)->Resident(*data.dense(Split::kTest)));
  EXPECT_FALSE(host->Resident(*data.dense(Split::kTrain)));
  EXPECT_EQ(host->host_allocator().memory(), nullptr);
  const std::shared_ptr<CountingHostMemory> memory = device_backend->memory;
  const std::vector<float> params = Init(*host, 13);
  HostFloats staged(params.begin(), params.end(), (*device)->host_allocator());
  HostFloats got(params.size(), -1.0f, (*device)->host_allocator());
  EXPECT_EQ(memory->live, 2);  // the model's buffers come from its device
  std::vector<float> want(params.size());
  const std::vector<uint64_t> batch = {19, 0, 7, 7, 12};
  const ModelState host_state{params, {}, {}};
  const double loss_host =
      *host->LossAndGradient(data, batch, host_state, {want, {}});
  const double loss_device =
      *(*device)->LossAndGradient(data, batch, {staged, {}, {}}, {got, {}});
  EXPECT_EQ(loss_device, loss_host);
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), want);
  // The ids, then the conv and the two dense layers' parameters; the ids'
  // fence and three layers' waited for; three gradients copied out; rows
  // and labels gathered.
  EXPECT_EQ(device_backend->copies_in, 4);
  EXPECT_EQ(device_backend->waits, 4);
  EXPECT_EQ(device_backend->copies_out, 3);
  EXPECT_EQ(device_backend->gathers, 2);
  // The test split is resident too: the parameters are its one copy in.
  const int copies_before = device_backend->copies;
  const auto eval_host = host->Evaluate(data, host_state);
  const auto eval_device = (*device)->Evaluate(data, {staged, {}, {}});
  ASSERT_TRUE(eval_host.ok() && eval_device.ok());
  EXPECT_EQ(eval_device->accuracy, eval_host->accuracy);
  EXPECT_EQ(eval_device->loss, eval_host->loss);
  EXPECT_EQ(device_backend->copies - copies_before, 1);
  // Buffers may outlive the model (a push frame still held): their memory
  // stays valid and is freed with them.
  device->reset();
  HostFloats().swap(staged);
  HostFloats().swap(got);
  EXPECT_EQ(memory->live, 0);
}

}  // namespace
}  // namespace lockstep
