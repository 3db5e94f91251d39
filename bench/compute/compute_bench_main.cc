// lockstep-bench-compute: one worker's training throughput (samples/s) for
// the MLPs and the 2-conv CNN on a compute backend, beside that backend's
// own SGEMM rate measured in the same run: the ratio is the model's
// achieved GEMM FLOP/s over the device's. "compute" times the layer graph
// on device-resident data; "step" is a worker's whole LossAndGradient as a
// worker runs it (the data set attached, parameters and gradient in the
// model's host buffers: on a GPU the batch is gathered on the device and
// the copies, DMA from page-locked memory, overlap the compute); "staged"
// is the data path before those (the batch gathered on the host, every copy
// from pageable memory before and after the graph), the baseline for the
// step's gain ("step/staged"). Every model is a layer graph on the
// backend, as a worker runs it; on the CPU OpenBLAS uses one thread, as in
// a worker.
// Usage: lockstep-bench-compute [--device cpu|cuda[:N]] [--batch 256[,N...]]
//                               [--seconds 2] [--smoke]
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/compute/counting_backend.h"
#include "common/clock.h"
#include "common/main_guard.h"
#include "common/strings.h"
#include "worker/compute/cpu/blas_kernels.h"
#include "worker/data/rows_dataset.h"
#include "worker/models/layer_graph_model.h"

namespace lockstep {
namespace {

struct BenchOptions {
  std::string device = "cpu";
  std::vector<uint32_t> batches = {256};
  double seconds = 2;
  bool smoke = false;
};

// Runs `step` until `seconds` passed (at least 3 times, after one warm-up);
// returns steps per second.
template <typename Step>
StatusOr<double> Rate(double seconds, Step step) {
  LS_RETURN_IF_ERROR(step());
  int steps = 0;
  const double start = NowSeconds();
  while (steps < 3 || NowSeconds() - start < seconds) {
    LS_RETURN_IF_ERROR(step());
    ++steps;
  }
  return steps / (NowSeconds() - start);
}

StatusOr<double> SgemmGflops(ComputeBackend& b, uint64_t n, double seconds) {
  DeviceArray<float> a(&b), x(&b), c(&b);
  for (DeviceArray<float>* m : {&a, &x, &c}) {
    LS_RETURN_IF_ERROR(m->Reserve(n * n));
    std::vector<float> host(n * n, 0.5f);
    LS_RETURN_IF_ERROR(
        b.CopyToDevice(host.data(), m->data(), host.size() * sizeof(float)));
  }
  float sink = 0;
  LS_ASSIGN_OR_RETURN(
      const double rate, Rate(seconds, [&]() -> Status {
        b.Gemm(ComputeBackend::Transpose::kNo, ComputeBackend::Transpose::kNo,
               n, n, n, 1.0f, a.data(), x.data(), 0.0f, c.data());
        return b.CopyToHost(c.data(), &sink, sizeof(float));  // waits
      }));
  return rate * 2.0 * n * n * n / 1e9;
}

DenseRows RandomImages(uint64_t size) {
  DenseRows data;
  data.size = size;
  data.dim = 784;
  data.classes = 10;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> unit(0, 1);
  data.features.resize(size * 784);
  for (float& v : data.features) v = unit(rng);
  for (uint64_t i = 0; i < size; ++i) {
    data.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return data;
}

// "mlp:2048,2048" -> "i784x1x1,f2048,f2048"; "cnn:ARGS" -> ARGS.
std::string GraphArgs(const std::string& spec) {
  std::string args = spec.substr(spec.find(':') + 1);
  if (spec.rfind("cnn:", 0) == 0) return args;
  std::string out = "i784x1x1";
  for (const std::string& w : SplitString(args, ',')) out += ",f" + w;
  return out;
}

struct Measured {
  uint64_t params = 0;
  double flops_per_step = 0;
  double compute_per_s = 0;  // steps/s of the graph alone
  double step_per_s = 0;     // steps/s of a worker's LossAndGradient
  double staged_per_s = 0;   // ... from pageable buffers, rows from the host
};

// Steps/s of the layer graph alone on device-resident parameters, rows and
// labels (the first `batch` rows of `data`).
StatusOr<double> GraphRate(LayerGraphModel& model,
                           std::span<const float> params, const DenseRows& data,
                           uint64_t batch, double seconds) {
  ComputeBackend& b = model.backend();
  DeviceArray<float> d_params(&b), d_rows(&b), d_grad(&b);
  DeviceArray<int32_t> d_labels(&b);
  LS_RETURN_IF_ERROR(d_params.Reserve(params.size()));
  LS_RETURN_IF_ERROR(d_grad.Reserve(params.size()));
  LS_RETURN_IF_ERROR(d_rows.Reserve(batch * data.dim));
  LS_RETURN_IF_ERROR(d_labels.Reserve(batch));
  LS_RETURN_IF_ERROR(
      b.CopyToDevice(params.data(), d_params.data(), params.size_bytes()));
  LS_RETURN_IF_ERROR(b.CopyToDevice(data.features.data(), d_rows.data(),
                                    batch * data.dim * sizeof(float)));
  LS_RETURN_IF_ERROR(b.CopyToDevice(data.labels.data(), d_labels.data(),
                                    batch * sizeof(int32_t)));
  return Rate(seconds, [&]() -> Status {
    return model.graph()
        .Run(d_params.data(), d_rows.data(), d_labels.data(), batch,
             d_grad.data())
        .status();  // the loss is copied back: waits
  });
}

// Steps/s of the data path before the data set was kept on the device and
// copies ran beside the compute: the batch gathered on the host, then every
// copy from pageable memory on the compute queue, the graph, the gradient
// copied back. On the host it is the model's own step.
StatusOr<double> StagedRate(LayerGraphModel& model,
                            std::span<const float> params,
                            const DenseRows& data,
                            std::span<const uint64_t> batch,
                            std::span<float> grad, double seconds) {
  ComputeBackend& b = model.backend();
  if (b.host_visible()) {
    return Rate(seconds, [&]() -> Status {
      return model.LossAndGradient(params, data, batch, grad).status();
    });
  }
  DeviceArray<float> d_params(&b), d_rows(&b), d_grad(&b);
  DeviceArray<int32_t> d_labels(&b);
  LS_RETURN_IF_ERROR(d_params.Reserve(params.size()));
  LS_RETURN_IF_ERROR(d_grad.Reserve(params.size()));
  LS_RETURN_IF_ERROR(d_rows.Reserve(batch.size() * data.dim));
  LS_RETURN_IF_ERROR(d_labels.Reserve(batch.size()));
  std::vector<float> rows;
  std::vector<int32_t> labels;
  return Rate(seconds, [&]() -> Status {
    GatherRows(data, batch, &rows, &labels);
    LS_RETURN_IF_ERROR(
        b.CopyToDevice(params.data(), d_params.data(), params.size_bytes()));
    LS_RETURN_IF_ERROR(b.CopyToDevice(rows.data(), d_rows.data(),
                                      rows.size() * sizeof(float)));
    LS_RETURN_IF_ERROR(b.CopyToDevice(labels.data(), d_labels.data(),
                                      labels.size() * sizeof(int32_t)));
    LS_RETURN_IF_ERROR(model.graph()
                           .Run(d_params.data(), d_rows.data(), d_labels.data(),
                                batch.size(), d_grad.data())
                           .status());
    return b.CopyToHost(d_grad.data(), grad.data(), grad.size_bytes());
  });
}

StatusOr<Measured> MeasureModel(const std::string& spec, const BenchOptions& o,
                                uint64_t batch_size, const RowsDataset& data) {
  const DenseRows& train = *data.dense(Split::kTrain);
  LS_ASSIGN_OR_RETURN(auto inner, CreateComputeBackend(o.device));
  auto counting = std::make_unique<CountingBackend>(std::move(inner));
  CountingBackend* counter = counting.get();
  LS_ASSIGN_OR_RETURN(auto model,
                      LayerGraphModel::CreateOn(GraphArgs(spec), data.shape(),
                                                std::move(counting)));
  LS_RETURN_IF_ERROR(model->Attach(data));
  Measured m;
  m.params = model->num_params();
  std::vector<float> params(m.params), grad(m.params);
  InitDenseParams(model->shape(), 1, params);
  // A batch of scattered rows, as a worker's slice of a shuffled epoch.
  std::vector<uint64_t> batch(batch_size);
  for (uint64_t i = 0; i < batch_size; ++i) {
    batch[i] = (i * 7919) % train.size;
  }
  LS_RETURN_IF_ERROR(
      model->LossAndGradient(params, train, batch, grad).status());
  m.flops_per_step = counter->gemm_flops();
  LS_ASSIGN_OR_RETURN(m.compute_per_s,
                      GraphRate(*model, params, train, batch_size, o.seconds));
  LS_ASSIGN_OR_RETURN(m.staged_per_s, StagedRate(*model, params, train, batch,
                                                 grad, o.seconds));
  HostFloats pulled(params.begin(), params.end(), model->host_allocator());
  HostFloats pushed(params.size(), 0.0f, model->host_allocator());
  LS_ASSIGN_OR_RETURN(m.step_per_s, Rate(o.seconds, [&]() -> Status {
                        return model
                            ->LossAndGradient(data, batch, {pulled, {}, {}},
                                              {pushed, {}})
                            .status();
                      }));
  return m;
}

int Run(const BenchOptions& o) {
  openblas_set_num_threads(1);
  auto backend = CreateComputeBackend(o.device);
  if (!backend.ok()) {
    std::fprintf(stderr, "lockstep-bench-compute: %s\n",
                 backend.status().message().c_str());
    return 2;
  }
  if (o.device == "cpu") {
    const std::string blas = BlasKernelWarning();
    if (!blas.empty()) std::fprintf(stderr, "warning: %s\n", blas.c_str());
  }
  const uint64_t n = o.smoke ? 64 : (o.device == "cpu" ? 1024 : 8192);
  auto sgemm = SgemmGflops(**backend, n, o.seconds);
  if (!sgemm.ok()) {
    std::fprintf(stderr, "sgemm: %s\n", sgemm.status().message().c_str());
    return 1;
  }
  std::printf("device %s: SGEMM %llux%llu %.1f GFLOP/s (measured now)\n",
              (*backend)->name().c_str(), static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(n), *sgemm);
  std::printf(
      "| model | params | batch | compute samples/s | step samples/s "
      "| staged step samples/s | step / staged | model GFLOP/s (compute) "
      "| / SGEMM |\n|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<std::string> models =
      o.smoke ? std::vector<std::string>{"mlp:16", "cnn:c3x4,p2,f8"}
              : std::vector<std::string>{"mlp:256,128", "mlp:2048,2048,2048",
                                         "cnn:c5x32,p2,c5x64,p2,f1024"};
  const uint32_t largest =
      *std::max_element(o.batches.begin(), o.batches.end());
  const RowsDataset data(RandomImages(4 * uint64_t{largest}),
                         RandomImages(largest));
  for (const std::string& spec : models) {
    for (const uint32_t batch : o.batches) {
      auto m = MeasureModel(spec, o, batch, data);
      if (!m.ok()) {
        std::fprintf(stderr, "%s: %s\n", spec.c_str(),
                     m.status().message().c_str());
        return 1;
      }
      const double gflops = m->flops_per_step * m->compute_per_s / 1e9;
      std::printf(
          "| %s | %llu | %u | %.0f | %.0f | %.0f | %.2fx | %.1f | %.2fx |\n",
          spec.c_str(), static_cast<unsigned long long>(m->params), batch,
          m->compute_per_s * batch, m->step_per_s * batch,
          m->staged_per_s * batch, m->step_per_s / m->staged_per_s, gflops,
          gflops / *sgemm);
    }
  }
  return 0;
}

}  // namespace
}  // namespace lockstep

namespace {

int Main(int argc, char** argv) {
  lockstep::BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--device" && has_value) {
      o.device = argv[++i];
    } else if (arg == "--batch" && has_value) {
      auto batches = lockstep::ParseSizeList(argv[++i], "batch");
      if (!batches.ok() || batches->empty()) {
        std::fprintf(
            stderr, "--batch: %s\n",
            batches.ok() ? "empty" : batches.status().message().c_str());
        return 2;
      }
      o.batches = *batches;
    } else if (arg == "--seconds" && has_value) {
      o.seconds = std::stod(argv[++i]);
    } else if (arg == "--smoke") {
      o.smoke = true;
      o.batches = {8};
      o.seconds = 0;
    } else {
      std::fprintf(stderr,
                   "usage: lockstep-bench-compute [--device cpu|cuda[:N]] "
                   "[--batch N[,N...]] [--seconds S] [--smoke]\n");
      return 2;
    }
  }
  return lockstep::Run(o);
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-bench-compute", Main, argc, argv);
}
