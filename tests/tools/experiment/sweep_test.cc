#include "tools/experiment/sweep.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

SpecSweepAxis Axis(const std::string& key, std::vector<std::string> values) {
  return {key, std::move(values), 3};
}

TEST(SweepTest, EveryCombinationTheLastAxisFastest) {
  const std::vector<SweepPoint> points = ExpandSweep(
      {Axis("lr", {"0.05", "0.1"}), Axis("momentum", {"0.5", "0.9"}),
       Axis("optimizer", {"momentum"})});
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].Label(), "lr=0.05,momentum=0.5,optimizer=momentum");
  EXPECT_EQ(points[1].Label(), "lr=0.05,momentum=0.9,optimizer=momentum");
  EXPECT_EQ(points[3].Label(), "lr=0.1,momentum=0.9,optimizer=momentum");
  EXPECT_EQ(points[2].settings[0].value, "0.1");
  EXPECT_EQ(points[2].settings[1].key, "momentum");
  EXPECT_EQ(points[2].settings[1].line, 3);
  EXPECT_EQ(RunGroupLabel("ssp0", points[1]),
            "ssp0@lr=0.05,momentum=0.9,optimizer=momentum");
}

TEST(SweepTest, NoAxesIsOnePointWithoutALabel) {
  const std::vector<SweepPoint> points = ExpandSweep({});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].Label(), "");
  EXPECT_EQ(RunGroupLabel("bsp", points[0]), "bsp");
}

TEST(SweepTest, APolicysOwnSweepReplacesTheSpecsAndItsJobFixesKeys) {
  ExperimentSpec spec;
  spec.sweep = {Axis("lr", {"0.05", "0.1"}),
                Axis("target-accuracy", {"0.8", "0.85"})};
  SpecPolicy plain;
  EXPECT_EQ(SweepAxesOf(spec, plain).size(), 2u);
  SpecPolicy fixed;  // another spelling of the same flag
  fixed.job = {{"target_accuracy", "0.9", 4}};
  const auto axes = SweepAxesOf(spec, fixed);
  ASSERT_EQ(axes.size(), 1u);
  EXPECT_EQ(axes[0].key, "lr");
  SpecPolicy own;
  own.own_sweep = true;
  own.sweep = {Axis("momentum", {"0", "0.5"})};
  ASSERT_EQ(SweepAxesOf(spec, own).size(), 1u);
  EXPECT_EQ(SweepAxesOf(spec, own)[0].key, "momentum");
  SpecPolicy none;
  none.own_sweep = true;
  EXPECT_TRUE(SweepAxesOf(spec, none).empty());
}

}  // namespace
}  // namespace lockstep
