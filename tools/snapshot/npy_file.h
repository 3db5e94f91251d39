// Writes NumPy .npy files (format 1.0), so exported weights open with
// numpy.load and torch.from_numpy without Lockstep.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_TOOLS_SNAPSHOT_NPY_FILE_H_
#define LOCKSTEP_TOOLS_SNAPSHOT_NPY_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The .npy header for a C-order array of `descr` ("<f4", "<u8") and
// `shape`, padded so the data starts at a multiple of 64 bytes.
std::string NpyHeader(const std::string& descr,
                      const std::vector<uint64_t>& shape);

// Writes `values` (product of shape floats / uint64s) to `path`.
// IOError naming the file when it cannot be written.
Status WriteNpy(const std::string& path, const std::vector<uint64_t>& shape,
                std::span<const float> values);
Status WriteNpy(const std::string& path, const std::vector<uint64_t>& shape,
                std::span<const uint64_t> values);
// Writes the raw little-endian bytes of `values` (no header).
Status WriteRaw(const std::string& path, std::span<const float> values);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_SNAPSHOT_NPY_FILE_H_
