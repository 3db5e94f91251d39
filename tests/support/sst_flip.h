// Test support: a real on-disk fault in a RocksDB store — one byte of a
// stored value inverted inside the SST file that holds it.
// Thread-safety: free function; the store must not be open for writing.
#ifndef LOCKSTEP_TESTS_SUPPORT_SST_FLIP_H_
#define LOCKSTEP_TESTS_SUPPORT_SST_FLIP_H_

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace lockstep {

// In every .sst file of the store folder `dir` that contains `needle`,
// inverts the byte `offset` bytes after its first occurrence. Returns how
// many files it changed.
inline int FlipByteInSst(const std::string& dir, const std::string& needle,
                         size_t offset) {
  int flipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream file(entry.path(),
                      std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), {});
    const size_t at = bytes.find(needle);
    if (at == std::string::npos || at + offset >= bytes.size()) continue;
    file.seekp(static_cast<std::streamoff>(at + offset));
    file.put(static_cast<char>(~bytes[at + offset]));
    ++flipped;
  }
  return flipped;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_SST_FLIP_H_
