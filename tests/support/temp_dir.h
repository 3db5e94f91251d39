// A folder under $TMPDIR (or /tmp) for one test, removed with everything
// in it when the object goes out of scope.
// Thread-safety: one owner.
#ifndef LOCKSTEP_TESTS_SUPPORT_TEMP_DIR_H_
#define LOCKSTEP_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace lockstep {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "lockstep-test") {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                          "/" + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The folder; empty if it could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_TEMP_DIR_H_
