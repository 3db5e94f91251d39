// lockstep-gen-sparse: writes a synthetic LIBSVM data set (see
// worker/sparse_data_generator.h). Exit codes: 0 success, 1 write failure,
// 2 bad command line.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>

#include "common/main_guard.h"
#include "common/status.h"
#include "worker/data/sparse_data_generator.h"

namespace po = boost::program_options;

namespace lockstep {
namespace {

constexpr int kExitWriteFailed = 1;
constexpr int kExitBadFlags = 2;

// Flags are read as signed so "--samples -5" is rejected instead of
// silently wrapping to a huge unsigned value.
struct Flags {
  std::string out;
  int64_t samples = 100000;
  int64_t features = 100000;
  int64_t nnz = 20;
  double zipf = 1.1;
  int64_t seed = 1;
};

po::options_description Describe(Flags* flags) {
  po::options_description desc(
      "Usage: lockstep-gen-sparse --out PATH [options]\n"
      "Writes a learnable synthetic binary-classification set in LIBSVM "
      "format");
  desc.add_options()("help", "print this help and exit")(
      "out", po::value(&flags->out), "output file (required)")(
      "samples", po::value(&flags->samples)->default_value(flags->samples),
      "number of lines")(
      "features", po::value(&flags->features)->default_value(flags->features),
      "feature ids are drawn from [0, features)")(
      "nnz", po::value(&flags->nnz)->default_value(flags->nnz),
      "distinct features per sample, in [1, features]")(
      "zipf", po::value(&flags->zipf)->default_value(flags->zipf),
      "power-law exponent of feature frequencies, in (0, 10]")(
      "seed", po::value(&flags->seed)->default_value(flags->seed),
      "random seed (>= 0)");
  return desc;
}

// Checks the flags and fills *spec; returns the reason they are bad.
Status ToSpec(const Flags& flags, SparseDataSpec* spec) {
  if (flags.out.empty()) return InvalidArgument("--out is required");
  if (flags.samples < 1) return InvalidArgument("--samples must be >= 1");
  if (flags.features < 1) return InvalidArgument("--features must be >= 1");
  if (flags.nnz < 1 || flags.nnz > flags.features ||
      flags.nnz > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("--nnz must be in [1, features]");
  }
  if (!std::isfinite(flags.zipf) || flags.zipf <= 0 || flags.zipf > 10) {
    return InvalidArgument("--zipf must be in (0, 10]");
  }
  if (flags.seed < 0) return InvalidArgument("--seed must be >= 0");
  spec->samples = static_cast<uint64_t>(flags.samples);
  spec->features = static_cast<uint64_t>(flags.features);
  spec->nnz_per_sample = static_cast<uint32_t>(flags.nnz);
  spec->zipf_exponent = flags.zipf;
  spec->seed = static_cast<uint64_t>(flags.seed);
  return Status::Ok();
}

int Run(int argc, char** argv) {
  Flags flags;
  const po::options_description desc = Describe(&flags);
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep-gen-sparse: " << e.what() << " (see --help)\n";
    return kExitBadFlags;
  }
  if (vm.count("help") != 0) {
    std::cout << desc << "\n";
    return 0;
  }
  SparseDataSpec spec;
  if (Status s = ToSpec(flags, &spec); !s.ok()) {
    std::cerr << "lockstep-gen-sparse: " << s.message() << " (see --help)\n";
    return kExitBadFlags;
  }
  SyntheticLibsvmStats stats;
  if (Status s = WriteSyntheticLibsvm(spec, flags.out, &stats); !s.ok()) {
    std::cerr << "lockstep-gen-sparse: " << s.ToString() << "\n";
    return kExitWriteFailed;
  }
  std::cout << "wrote " << spec.samples << " samples to " << flags.out
            << ": features=" << spec.features << " nnz=" << spec.nnz_per_sample
            << " zipf=" << spec.zipf_exponent << " seed=" << spec.seed
            << " positives=" << stats.positives
            << " bayes_accuracy=" << stats.bayes_accuracy << "\n";
  return 0;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-gen-sparse", lockstep::Run, argc,
                               argv);
}
