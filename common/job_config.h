// The job configuration: every flag that defines a training job. The
// coordinator parses it from flags and sends it to every process in its
// Welcome, so servers and workers never disagree about the job.
// Thread-safety: value type.
#ifndef LOCKSTEP_COMMON_JOB_CONFIG_H_
#define LOCKSTEP_COMMON_JOB_CONFIG_H_

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "schemas/lockstep_generated.h"

namespace lockstep {

// Share of a LIBSVM file held out as the test set when --test-data is unset
// (its last lines).
inline constexpr double kLibsvmHoldoutFraction = 0.1;

struct JobConfig {
  std::string model = "mlp:256,128";
  std::string data = "fashion-mnist";
  // Folder with the Fashion-MNIST IDX .gz files.
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  // LIBSVM test file; empty = hold out the last 10% of --data.
  std::string test_data;
  std::string sync = "bsp";
  uint32_t servers = 2;
  uint32_t workers = 4;
  // Per-worker batch; a single entry applies to every worker.
  std::vector<uint32_t> batches = {32};
  std::string optimizer = "momentum";
  double lr = 0.05;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0;
  std::string lr_schedule = "const";
  uint64_t seed = 1;
  double epochs = 5;
  // Total clocks; 0 in flags means "derive from epochs".
  int64_t max_clocks = 0;
  uint64_t train_samples = 0;
  uint64_t train_limit = 0;
  uint64_t test_limit = 0;
  int64_t eval_every = 100;
  double target_accuracy = 0;
  uint64_t input_dim = 0;
  uint32_t classes = 0;
  uint32_t heartbeat_ms = 1000;
  // How workers draw samples: "partition" (each worker walks its own
  // strided slice of a seeded permutation) or "global" (clock c's global
  // batch is the next X samples of one permutation; a worker takes its
  // quota at its batch offset, so uneven and changing quotas stay
  // unbiased). The flag also takes "auto": global for lbbsp, else
  // partition.
  std::string data_order = "partition";

  // Batch of worker `rank` (the configured split, before any policy quota).
  uint32_t BatchOf(uint32_t rank) const;
  // Sum of the per-worker batches: the global batch X.
  uint64_t GlobalBatch() const;
  bool IsFashionMnist() const { return data == "fashion-mnist"; }

  flatbuffers::Offset<wire::JobConfig> ToWire(
      flatbuffers::FlatBufferBuilder& fbb) const;
  static StatusOr<JobConfig> FromWire(const wire::JobConfig* wire_config);
  // All fields as one JSON object.
  std::string ToJson() const;
};

// Adds the job flags (--servers, --workers, --sync, --model, --data, ...) to
// `options`. Used by the coordinator and the launcher, so the flags have the
// same names everywhere.
void AddJobFlags(boost::program_options::options_description* options);

// Reads the job flags from `vm`, validates them, resolves the data set's
// shape (input_dim, classes, train_samples) and the total clock count.
StatusOr<JobConfig> JobConfigFromFlags(
    const boost::program_options::variables_map& vm);

// The flags that reproduce `config` on another process's command line
// (the inverse of JobConfigFromFlags), e.g. {"--servers", "2", ...}.
std::vector<std::string> JobConfigToFlags(const JobConfig& config);

// Checks value ranges and cross-field consistency.
Status ValidateJobConfig(const JobConfig& config);

// Fills input_dim, classes and train_samples from the data set and derives
// max_clocks from epochs when it is 0.
Status ResolveDataShape(JobConfig* config);

// Parses "32" or "16,16,32,64" into per-worker batches.
StatusOr<std::vector<uint32_t>> ParseBatchList(const std::string& text);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JOB_CONFIG_H_
