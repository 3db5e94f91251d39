// Replacing a small file so that a crash at any instant leaves either the
// old or the new content, never a mix, and the new content survives a
// power loss once the call returns.
// Thread-safety: safe on distinct paths.
#ifndef LOCKSTEP_COMMON_DURABLE_FILE_H_
#define LOCKSTEP_COMMON_DURABLE_FILE_H_

#include <string>

#include "common/status.h"

namespace lockstep {

// Writes `text` to `path` + ".tmp" (with permissions `mode`), fsyncs it,
// renames it over `path` and fsyncs the folder. IOError naming the file
// and the system's reason.
Status WriteFileDurably(const std::string& path, const std::string& text,
                        unsigned mode = 0644);

// The whole content of `path`. NotFound when it does not exist, IOError
// when it cannot be read.
StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_DURABLE_FILE_H_
