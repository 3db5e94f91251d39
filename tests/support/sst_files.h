// Test support: how much of a RocksDB store's folder its table files take,
// to check that deleted data leaves the disk.
// Thread-safety: free function.
#ifndef LOCKSTEP_TESTS_SUPPORT_SST_FILES_H_
#define LOCKSTEP_TESTS_SUPPORT_SST_FILES_H_

#include <cstdint>
#include <filesystem>
#include <string>

namespace lockstep {

struct SstFiles {
  int files = 0;
  uint64_t bytes = 0;
};

// The .sst files directly in the store folder `dir`, and their bytes.
inline SstFiles CountSstFiles(const std::string& dir) {
  SstFiles count;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    ++count.files;
    count.bytes += entry.file_size();
  }
  return count;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_SST_FILES_H_
