#include "common/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace lockstep {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return IOError("cannot " + what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Status WriteFileDurably(const std::string& path, const std::string& text,
                        unsigned mode) {
  const std::string temporary = path + ".tmp";
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Errno("create", temporary);
  // A temporary file left by an earlier attempt keeps its own mode.
  if (fchmod(fd, mode) != 0) {
    Status failed = Errno("set the mode of", temporary);
    close(fd);
    return failed;
  }
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status failed = Errno("write", temporary);
      close(fd);
      return failed;
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    Status failed = Errno("sync", temporary);
    close(fd);
    return failed;
  }
  if (close(fd) != 0) return Errno("close", temporary);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    return Errno("rename " + temporary + " to", path);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Errno("open folder", dir);
  const int synced = fsync(dir_fd);
  close(dir_fd);
  if (synced != 0) return Errno("sync folder", dir);
  return Status::Ok();
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return NotFound(path + " not found");
    return IOError("cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IOError("cannot read " + path);
  return text.str();
}

}  // namespace lockstep
