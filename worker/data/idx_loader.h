// Loads gzip-compressed IDX files (the MNIST / Fashion-MNIST format) into a
// DenseRows. The files are read directly with zlib; nothing is unpacked
// to disk. Every error names the file and the byte offset, counted in the
// decompressed stream, where the problem was found.
// Thread-safety: the functions share no state; concurrent calls are safe.
#ifndef LOCKSTEP_WORKER_DATA_IDX_LOADER_H_
#define LOCKSTEP_WORKER_DATA_IDX_LOADER_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

// Reads an IDX3 image file (magic 0x00000803; dims n, rows, cols; uint8
// pixels) and an IDX1 label file (magic 0x00000801; dim n; uint8 labels),
// both gzip-compressed, big-endian headers.
// Returns a dataset with dim = rows * cols, pixels scaled to [0, 1] (p/255),
// and classes = `classes`.
// `limit`: 0 loads all samples, otherwise the first min(limit, n) samples.
// Errors:
//   NotFound     a file does not exist.
//   IOError      a file cannot be opened or read.
//   Corruption   not gzip, a broken gzip stream, bad magic, insane dims
//                (zero, or rows * cols > 2^20), image/label count mismatch,
//                a label >= classes, truncated data, or (when everything is
//                loaded) trailing bytes after the last sample.
//   InvalidArgument  classes is 0 or > 256.
StatusOr<DenseRows> LoadIdxGz(const std::string& images_path,
                              const std::string& labels_path, uint64_t limit,
                              uint32_t classes);

// Sample count and pixels per image of an IDX image/label file pair, from
// their headers alone (checked as LoadIdxGz checks them).
struct IdxShape {
  uint64_t count = 0;
  uint64_t dim = 0;
};
StatusOr<IdxShape> ProbeIdxGz(const std::string& images_path,
                              const std::string& labels_path);

inline constexpr uint32_t kFashionMnistClasses = 10;

// The Fashion-MNIST files of one split in `dir`.
struct FashionMnistFiles {
  std::string images;
  std::string labels;
};
FashionMnistFiles FashionMnistPaths(const std::string& dir, bool train);

// Loads Fashion-MNIST from `dir` (the real set is installed under
// /usr/share/datasets/fashion-mnist/): train-{images-idx3,labels-idx1}-
// ubyte.gz when `train`, else t10k-*. classes = 10; `limit` as in LoadIdxGz.
StatusOr<DenseRows> LoadFashionMnist(const std::string& dir, bool train,
                                     uint64_t limit);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_IDX_LOADER_H_
