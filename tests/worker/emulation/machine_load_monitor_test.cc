// The emulated machine's load file: what one worker publishes every worker
// of the machine reads, exactly; a missing or damaged file is an error,
// never a made-up reading; each job gets its own folder.
#include "worker/emulation/machine_load_monitor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace lockstep {
namespace {

class MachineLoadMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("machine-load-test-" + std::to_string(getpid())) / "machines")
               .string();
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(dir_).parent_path());
  }
  MachineLoadMonitor Open(const std::string& machine) {
    StatusOr<MachineLoadMonitor> m = MachineLoadMonitor::Open(dir_, machine);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return *m;
  }

  std::string dir_;
};

TEST_F(MachineLoadMonitorTest, EveryWorkerOfAMachineReadsWhatOnePublished) {
  const MachineLoadMonitor w0 = Open("m0");
  const MachineLoadMonitor w1 = Open("m0");
  const MachineLoadMonitor other = Open("m1");
  EXPECT_EQ(w0.path(), dir_ + "/m0.load");
  EXPECT_TRUE(std::filesystem::is_directory(dir_));
  EXPECT_EQ(w1.Read().status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(w0.Publish({41, 0.1 + 0.2}).ok());
  StatusOr<MachineLoadMonitor::Reading> r = w1.Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->clock, 41);
  EXPECT_EQ(r->demand, 0.1 + 0.2) << "exact, not rounded";
  EXPECT_EQ(other.Read().status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(w1.Publish({42, 0}).ok());
  EXPECT_EQ(w0.Read()->clock, 42);
  EXPECT_EQ(w0.Read()->demand, 0);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().extension(), ".load") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(MachineLoadMonitorTest, ADamagedFileIsCorruptionNamingIt) {
  const MachineLoadMonitor m = Open("m0");
  for (const char* bad : {"", "12", "12 0.5 3", "x 0.5", "12 1.5", "12 -0.1"}) {
    std::ofstream(m.path(), std::ios::trunc) << bad << "\n";
    StatusOr<MachineLoadMonitor::Reading> r = m.Read();
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << bad;
    EXPECT_NE(r.status().message().find(m.path()), std::string::npos);
  }
}

TEST_F(MachineLoadMonitorTest, NamesThatAreNotFileNamesAreRefused) {
  EXPECT_FALSE(MachineLoadMonitor::Open(dir_, "").ok());
  EXPECT_FALSE(MachineLoadMonitor::Open(dir_, "a/b").ok());
}

TEST_F(MachineLoadMonitorTest, TheFolderIsTheLaunchersOrOnePerJob) {
  const char* old = std::getenv(MachineLoadMonitor::kDirVariable);
  const std::string saved = old != nullptr ? old : "";
  unsetenv(MachineLoadMonitor::kDirVariable);
  const std::string a = MachineLoadMonitor::DefaultDir("tcp://127.0.0.1:5000");
  const std::string b = MachineLoadMonitor::DefaultDir("tcp://127.0.0.1:5001");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, MachineLoadMonitor::DefaultDir("tcp://127.0.0.1:5000"));
  EXPECT_NE(a.find("lockstep-machines-"), std::string::npos) << a;
  setenv(MachineLoadMonitor::kDirVariable, dir_.c_str(), 1);
  EXPECT_EQ(MachineLoadMonitor::DefaultDir("tcp://127.0.0.1:5000"), dir_);
  if (old != nullptr) {
    setenv(MachineLoadMonitor::kDirVariable, saved.c_str(), 1);
  } else {
    unsetenv(MachineLoadMonitor::kDirVariable);
  }
}

}  // namespace
}  // namespace lockstep
