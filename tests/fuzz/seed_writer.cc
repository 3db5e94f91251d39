// Linked into every fuzz target: with LOCKSTEP_FUZZ_WRITE_SEEDS=DIR in the
// environment, the target writes its FuzzSeeds() to DIR/seed-N and exits
// (scripts/fuzz.sh starts each libFuzzer corpus so).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("LOCKSTEP_FUZZ_WRITE_SEEDS");
  if (dir == nullptr || dir[0] == '\0') return 0;
  int n = 0;
  for (const std::string& seed : lockstep::FuzzSeeds()) {
    const std::string path = std::string(dir) + "/seed-" + std::to_string(n++);
    std::ofstream out(path, std::ios::binary);
    out.write(seed.data(), static_cast<std::streamsize>(seed.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
  }
  std::printf("wrote %d seeds to %s\n", n, dir);
  std::exit(0);
}
