// A FILE* that collects what is written to it (open_memstream), for tests
// of code that writes to a stream such as a Console's.
// Thread-safety: one thread.
#ifndef LOCKSTEP_TESTS_SUPPORT_MEMORY_FILE_H_
#define LOCKSTEP_TESTS_SUPPORT_MEMORY_FILE_H_

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lockstep {

class MemoryFile {
 public:
  MemoryFile() : file_(open_memstream(&buffer_, &size_)) {}
  ~MemoryFile() {
    std::fclose(file_);
    std::free(buffer_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::FILE* file() { return file_; }
  // Everything written so far.
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_MEMORY_FILE_H_
