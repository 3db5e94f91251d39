// An experiment spec (tools/experiment/spec.h): the TOML reader and every
// check of keys, types, policies and labels, on arbitrary text. Seeds are
// the shipped specs (experiments/*.toml), read at start.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/fuzz/fuzz_target.h"
#include "tools/experiment/spec.h"

namespace lockstep {

std::vector<std::string> FuzzSeeds() {
  std::vector<std::string> seeds;
  const std::filesystem::path dir =
      std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "experiments";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }
  return seeds;
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)lockstep::ParseExperimentSpec(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  return 0;
}
