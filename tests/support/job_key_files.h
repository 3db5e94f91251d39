// Test support: a fresh job's key files in a temporary folder, and one
// role's key loaded from such a folder, for tests that play this job's
// roles or another job's.
// Thread-safety: free functions.
#ifndef LOCKSTEP_TESTS_SUPPORT_JOB_KEY_FILES_H_
#define LOCKSTEP_TESTS_SUPPORT_JOB_KEY_FILES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/security/job_keys.h"

namespace lockstep {

// A new folder holding a new job's keys (an `auth` data plane).
inline std::string NewJobKeysDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "job-keys-XXXXXX").string();
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  EXPECT_TRUE(WriteJobKeys(pattern, DataSecurity::kAuth).ok());
  return pattern;
}

// `role`'s key from the job's folder `dir`.
inline RoleKeys LoadJobKey(const std::string& dir, KeyRole role) {
  auto keys = LoadRoleKeys(dir + "/" + KeyFileName(role));
  EXPECT_TRUE(keys.ok()) << keys.status().message();
  return keys.ok() ? *keys : RoleKeys{};
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_JOB_KEY_FILES_H_
