// Loads binary-classification data in LIBSVM text format into a
// SparseRows. Each non-blank line is "label idx:val idx:val ...",
// separated by spaces or tabs (a trailing '\r' is ignored).
// Thread-safety: no shared state; concurrent calls are safe.
#ifndef LOCKSTEP_WORKER_DATA_LIBSVM_LOADER_H_
#define LOCKSTEP_WORKER_DATA_LIBSVM_LOADER_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

// Parses the window of data lines [first_line, first_line + max_lines) of
// `path`, counting only non-blank lines (0-based); max_lines 0 means all
// remaining lines. Lines before the window are skipped unparsed and reading
// stops after the window, so each worker can load its own slice cheaply.
// Labels: -1, 0, +1 and 1 (also written as e.g. "1.0") are accepted; a label
// <= 0 maps to 0 and > 0 to 1; any other value is an error.
// Indices: non-negative decimal integers, strictly increasing within a line,
// stored raw (a 1-based file stays 1-based). Values: finite floats.
// max_feature is the largest index seen (0 if none).
// Errors:
//   NotFound    the file does not exist.
//   IOError     it cannot be opened or read.
//   Corruption  a malformed line; the message names the file, the 1-based
//               physical line number and the byte offset (from the start of
//               the file) of the bad token.
StatusOr<SparseRows> LoadLibsvm(const std::string& path, uint64_t first_line,
                                uint64_t max_lines);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_LIBSVM_LOADER_H_
