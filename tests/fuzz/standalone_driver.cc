// The fuzz targets' main outside the fuzzer build: runs the target's seeds
// and any corpus files given, then --runs N inputs mutated from them by a
// seeded generator (bit flips, interesting bytes and integers, inserted,
// erased and repeated ranges, splices, truncation), up to --max-len bytes.
// Deterministic for a --seed, so a failure in the suite reproduces; a
// crash or sanitizer report ends the process, as under libFuzzer.
//   NAME_fuzz [--runs N] [--seed S] [--max-len L] [FILE|DIR ...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace {

struct Options {
  uint64_t runs = 10000;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<std::string> paths;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--runs" && has_value) {
      o.runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && has_value) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-len" && has_value) {
      o.max_len = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      std::exit(2);
    } else {
      o.paths.push_back(arg);
    }
  }
  return o;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void AddCorpus(const std::string& path, std::vector<std::string>* corpus) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) {
    corpus->push_back(ReadAll(path));
    return;
  }
  for (const auto& entry : fs::directory_iterator(path)) {
    if (entry.is_regular_file()) corpus->push_back(ReadAll(entry.path()));
  }
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string Mutate(const std::vector<std::string>& corpus, size_t max_len) {
    std::string s = corpus[Below(corpus.size())];
    const size_t steps = 1 + Below(4);
    for (size_t k = 0; k < steps; ++k) Step(corpus, &s);
    if (s.size() > max_len) s.resize(max_len);
    return s;
  }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : rng_() % n; }

  void Step(const std::vector<std::string>& corpus, std::string* s) {
    static const uint64_t kInteresting[] = {0,
                                            1,
                                            0x7f,
                                            0x80,
                                            0xff,
                                            0x7fff,
                                            0xffff,
                                            0x7fffffff,
                                            0xffffffff,
                                            0x100000000ull,
                                            0x7fffffffffffffffull,
                                            0xffffffffffffffffull};
    const size_t at = Below(s->size() + 1);
    switch (Below(8)) {
      case 0:  // flip a bit
        if (!s->empty()) (*s)[Below(s->size())] ^= char(1 << Below(8));
        break;
      case 1:  // an interesting or random byte
        if (!s->empty()) {
          (*s)[Below(s->size())] =
              static_cast<char>(Below(2) ? kInteresting[Below(5)] : rng_());
        }
        break;
      case 2: {  // an interesting integer, 1/2/4/8 bytes little-endian
        const uint64_t v = kInteresting[Below(std::size(kInteresting))];
        const size_t width = size_t{1} << Below(4);
        if (s->size() >= width) {
          std::memcpy(s->data() + Below(s->size() - width + 1), &v, width);
        }
        break;
      }
      case 3:  // insert random bytes
        s->insert(at, std::string(1 + Below(8), static_cast<char>(rng_())));
        break;
      case 4:  // erase a range
        if (at < s->size()) s->erase(at, 1 + Below(s->size() - at));
        break;
      case 5:  // repeat a range
        if (at < s->size()) {
          const std::string piece = s->substr(at, 1 + Below(16));
          s->insert(Below(s->size() + 1), piece);
        }
        break;
      case 6: {  // splice another input's tail
        const std::string& other = corpus[Below(corpus.size())];
        const size_t from = Below(other.size() + 1);
        *s = s->substr(0, at) + other.substr(from);
        break;
      }
      default:  // truncate
        s->resize(at);
        break;
    }
  }

  std::mt19937_64 rng_;
};

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                         input.size());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::vector<std::string> corpus = lockstep::FuzzSeeds();
  for (const std::string& p : o.paths) AddCorpus(p, &corpus);
  if (corpus.empty()) corpus.emplace_back();
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& input : corpus) Run(input);
  Mutator mutator(o.seed);
  for (uint64_t i = 0; i < o.runs; ++i) {
    Run(mutator.Mutate(corpus, o.max_len));
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%zu corpus inputs and %llu mutated ones in %.2f s, 0 crashes\n",
              corpus.size(), static_cast<unsigned long long>(o.runs), s);
  return 0;
}
