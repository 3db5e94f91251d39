#include "tools/launch/device_spec.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(DeviceSpecTest, OneDeviceIsEveryWorkers) {
  auto d = ResolveDeviceFlag("cuda:1", 3);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, (WorkerDevices{{0, "cuda:1"}, {1, "cuda:1"}, {2, "cuda:1"}}));
  EXPECT_TRUE(ResolveDeviceFlag("", 3)->empty());
}

TEST(DeviceSpecTest, AWorkersOwnSpecWinsOverTheStar) {
  auto d = ResolveDeviceFlag("*:cpu; w0:cuda:0", 3);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, (WorkerDevices{{0, "cuda:0"}, {1, "cpu"}, {2, "cpu"}}));
  auto only = ResolveDeviceFlag("w2:cuda", 3);
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(*only, (WorkerDevices{{2, "cuda"}}));
}

TEST(DeviceSpecTest, BadFormsAreRefusedWithTheGrammar) {
  for (const char* bad :
       {"gpu", "cuda:x", "w0:tpu", "w9:cpu", "x:cpu", "w0", "cuda:"}) {
    auto d = ResolveDeviceFlag(bad, 3);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().message().rfind("--device: ", 0), 0u) << bad;
    EXPECT_NE(d.status().message().find("DEVICE = cpu | cuda | cuda:N"),
              std::string::npos);
  }
  EXPECT_NE(ResolveDeviceFlag("w9:cpu", 3)
                .status()
                .message()
                .find("the job has 3 workers"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
