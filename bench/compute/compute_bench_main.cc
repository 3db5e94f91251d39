// lockstep-bench-compute: one worker's training throughput (samples/s) for
// the MLPs and the 2-conv CNN on a compute backend, beside that backend's
// own SGEMM rate measured in the same run: the ratio is the model's
// achieved GEMM FLOP/s over the device's. "compute" times the layer graph
// on device-resident data; "step" is a worker's whole LossAndGradient
// (the gather, the copies to and from the device, the graph). On the CPU
// the MLPs run as MlpModel (what a CPU worker runs) and OpenBLAS uses one
// thread, as in a worker.
// Usage: lockstep-bench-compute [--device cpu|cuda[:N]] [--batch 256]
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
#include "worker/models/cnn_model.h"
#include "worker/models/mlp_model.h"

namespace lockstep {
namespace {

struct BenchOptions {
  std::string device = "cpu";
  uint64_t batch = 256;
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
  double step_per_s = 0;     // steps/s of LossAndGradient
};

StatusOr<Measured> MeasureModel(const std::string& spec, const BenchOptions& o,
                                const DenseRows& data) {
  DataShape shape{false, 784, 10, data.size, 0};
  LS_ASSIGN_OR_RETURN(auto inner, CreateComputeBackend(o.device));
  auto counting = std::make_unique<CountingBackend>(std::move(inner));
  CountingBackend* counter = counting.get();
  LS_ASSIGN_OR_RETURN(auto model, CnnModel::CreateOn(GraphArgs(spec), shape,
                                                     std::move(counting)));
  Measured m;
  m.params = model->num_params();
  std::vector<float> params(m.params), grad(m.params);
  InitDenseParams(model->shape(), 1, params);
  std::vector<uint64_t> batch(o.batch);
  for (uint64_t i = 0; i < o.batch; ++i) batch[i] = i % data.size;
  LS_RETURN_IF_ERROR(
      model->LossAndGradient(params, data, batch, grad).status());
  m.flops_per_step = counter->gemm_flops();
  // The graph alone, on device-resident parameters, rows and labels.
  ComputeBackend& b = model->backend();
  DeviceArray<float> d_params(&b), d_rows(&b), d_grad(&b);
  DeviceArray<int32_t> d_labels(&b);
  LS_RETURN_IF_ERROR(d_params.Reserve(m.params));
  LS_RETURN_IF_ERROR(d_grad.Reserve(m.params));
  LS_RETURN_IF_ERROR(d_rows.Reserve(o.batch * 784));
  LS_RETURN_IF_ERROR(d_labels.Reserve(o.batch));
  LS_RETURN_IF_ERROR(
      b.CopyToDevice(params.data(), d_params.data(), m.params * sizeof(float)));
  LS_RETURN_IF_ERROR(b.CopyToDevice(data.features.data(), d_rows.data(),
                                    o.batch * 784 * sizeof(float)));
  LS_RETURN_IF_ERROR(b.CopyToDevice(data.labels.data(), d_labels.data(),
                                    o.batch * sizeof(int32_t)));
  LS_ASSIGN_OR_RETURN(m.compute_per_s, Rate(o.seconds, [&]() -> Status {
                        return model->graph()
                            .Run(d_params.data(), d_rows.data(),
                                 d_labels.data(), o.batch,
                                 d_grad.data())
                            .status();  // the loss is copied back: waits
                      }));
  // The whole step; on the CPU an MLP is MlpModel.
  if (o.device == "cpu" && spec.rfind("mlp:", 0) == 0) {
    LS_ASSIGN_OR_RETURN(auto hidden, ParseSizeList(spec.substr(4), "width"));
    LS_ASSIGN_OR_RETURN(auto mlp, MlpModel::Create(hidden, 784, 10));
    LS_ASSIGN_OR_RETURN(m.step_per_s, Rate(o.seconds, [&]() -> Status {
                          mlp->LossAndGradient(params, data, batch, grad);
                          return Status::Ok();
                        }));
  } else {
    LS_ASSIGN_OR_RETURN(
        m.step_per_s, Rate(o.seconds, [&]() -> Status {
          return model->LossAndGradient(params, data, batch, grad).status();
        }));
  }
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
      "| model GFLOP/s (compute) | / SGEMM |\n|---|---|---|---|---|---|"
      "---|\n");
  const std::vector<std::string> models =
      o.smoke ? std::vector<std::string>{"mlp:16", "cnn:c3x4,p2,f8"}
              : std::vector<std::string>{"mlp:256,128", "mlp:2048,2048,2048",
                                         "cnn:c5x32,p2,c5x64,p2,f1024"};
  const DenseRows data = RandomImages(o.batch);
  for (const std::string& spec : models) {
    auto m = MeasureModel(spec, o, data);
    if (!m.ok()) {
      std::fprintf(stderr, "%s: %s\n", spec.c_str(),
                   m.status().message().c_str());
      return 1;
    }
    const double gflops = m->flops_per_step * m->compute_per_s / 1e9;
    std::printf("| %s | %llu | %llu | %.0f | %.0f | %.1f | %.2fx |\n",
                spec.c_str(), static_cast<unsigned long long>(m->params),
                static_cast<unsigned long long>(o.batch),
                m->compute_per_s * o.batch, m->step_per_s * o.batch, gflops,
                gflops / *sgemm);
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
      o.batch = std::stoull(argv[++i]);
    } else if (arg == "--seconds" && has_value) {
      o.seconds = std::stod(argv[++i]);
    } else if (arg == "--smoke") {
      o.smoke = true;
      o.batch = 8;
      o.seconds = 0;
    } else {
      std::fprintf(stderr,
                   "usage: lockstep-bench-compute [--device cpu|cuda[:N]] "
                   "[--batch N] [--seconds S] [--smoke]\n");
      return 2;
    }
  }
  return lockstep::Run(o);
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-bench-compute", Main, argc, argv);
}
