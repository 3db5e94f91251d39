// A fuzz target: one decoder a peer (or a damaged file) can reach, fed
// arbitrary bytes. Each *_fuzz.cc defines LLVMFuzzerTestOneInput, which
// must never crash, leak or trip a sanitizer whatever the bytes, and
// FuzzSeeds(): valid inputs to start mutating from, built in code so they
// follow the schemas. The same target links libFuzzer's main in the
// fuzzer build (scripts/fuzz.sh) and standalone_driver.cc everywhere else
// (the suite's short run under ASan + UBSan).
#ifndef LOCKSTEP_TESTS_FUZZ_FUZZ_TARGET_H_
#define LOCKSTEP_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace lockstep {

std::vector<std::string> FuzzSeeds();

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_FUZZ_FUZZ_TARGET_H_
