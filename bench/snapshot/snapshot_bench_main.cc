// lockstep-bench-snapshot [--smoke] [--params N[,N...]] [--shards S]
//                          [--rounds R] [--dir DIR]
// The snapshot benchmark (see snapshot_bench.h). --smoke: tiny sizes, for
// the test suite.
#include <charconv>
#include <iostream>
#include <string>

#include "bench/snapshot/snapshot_bench.h"
#include "common/main_guard.h"
#include "common/prefaulted.h"

namespace {

template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out > 0;
}

int Main(int argc, char** argv) {
  lockstep::RetainFreedHeapMemory();  // as lockstep-server does
  lockstep::SnapshotBenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const std::string value = i + 1 < argc ? argv[i + 1] : "";
    bool ok = true;
    if (flag == "--smoke") {
      o.params = {20'000, 200'000};
      o.rounds = 2;
      o.chunk_bytes = 16u << 10;
      continue;
    } else if (flag == "--params") {
      o.params.clear();
      for (size_t at = 0; ok && at <= value.size();) {
        const size_t comma = std::min(value.find(',', at), value.size());
        uint64_t n = 0;
        ok = ParseNumber(value.substr(at, comma - at), &n);
        o.params.push_back(n);
        at = comma + 1;
      }
    } else if (flag == "--shards") {
      ok = ParseNumber(value, &o.shards);
    } else if (flag == "--rounds") {
      ok = ParseNumber(value, &o.rounds);
    } else if (flag == "--dir") {
      o.dir = value;
      ok = !value.empty();
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "lockstep-bench-snapshot: bad flag " << flag << " " << value
                << "\n";
      return 2;
    }
    ++i;
  }
  const lockstep::Status done = lockstep::RunSnapshotBench(o, std::cout);
  if (!done.ok()) {
    std::cerr << "lockstep-bench-snapshot: " << done.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-bench-snapshot", Main, argc, argv);
}
