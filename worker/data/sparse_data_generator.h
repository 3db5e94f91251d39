// Writes synthetic, learnable sparse binary-classification data in LIBSVM
// format, shaped like click logs: feature frequencies follow a power law
// (feature 0 is the most frequent) and labels come from a hidden logistic
// model, so a sparse logistic regression has something real to learn.
// Thread-safety: no shared state; concurrent calls on distinct paths are safe.
#ifndef LOCKSTEP_WORKER_DATA_SPARSE_DATA_GENERATOR_H_
#define LOCKSTEP_WORKER_DATA_SPARSE_DATA_GENERATOR_H_

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep {

struct SparseDataSpec {
  uint64_t samples = 0;         // lines to write; >= 1
  uint64_t features = 0;        // feature ids are in [0, features); >= 1
  uint32_t nnz_per_sample = 0;  // distinct ids per line; in [1, features]
  // P(id = k) is proportional to 1 / (k + 1)^zipf_exponent. 1.1 is close to
  // what public click logs show; must be finite and in (0, 10].
  double zipf_exponent = 1.1;
  uint64_t seed = 0;
};

// What WriteSyntheticLibsvm produced.
struct SyntheticLibsvmStats {
  uint64_t positives = 0;  // lines labelled +1
  // Mean over the written lines of max(p, 1 - p), p the hidden model's
  // probability: the expected accuracy of the best possible classifier.
  double bayes_accuracy = 0;
};

// Generates `spec.samples` lines "+1 id:1 id:1 ..." / "-1 ...", ids strictly
// increasing, and writes them atomically to `path` (to path + ".tmp", then
// renamed). The hidden weights are standard normal; their scale and the bias
// are calibrated on a pilot sample so the logit has mean 0 and standard
// deviation 6 (Bayes accuracy around 0.9, classes roughly balanced).
// The output is a pure function of `spec`: std::mt19937_64 plus our own
// distribution code, so it does not change with the standard library's
// distribution implementations (only libm's exp/log/cos are trusted).
// `stats`, if not null, receives the summary on success.
// Errors: InvalidArgument for a spec outside the ranges above; IOError if
// the file cannot be written or renamed (the .tmp file is removed).
Status WriteSyntheticLibsvm(const SparseDataSpec& spec, const std::string& path,
                            SyntheticLibsvmStats* stats = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_SPARSE_DATA_GENERATOR_H_
