#include "coordinator/clock_report_reader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/coordinator/recording_outbox.h"

namespace lockstep {
namespace {

TEST(ClockReportReaderTest, ASaneReportIsTakenAsSent) {
  WireTable<wire::ClockDone> done([](flatbuffers::FlatBufferBuilder& f) {
    return wire::CreateClockDone(f, 12, 32, 0.5, 0.01, 0.02, 0.03, 1.7, 0.8,
                                 0.4, 0, 0, 1, 0);
  });
  const ClockReport r = ReadClockReport(3, *done);
  EXPECT_EQ(r.worker, 3u);
  EXPECT_EQ(r.clock, 12);
  EXPECT_EQ(r.batch, 32u);
  EXPECT_EQ(r.compute_s, 0.5);
  EXPECT_EQ(r.push_s, 0.01);
  EXPECT_EQ(r.pull_s, 0.02);
  EXPECT_EQ(r.wait_s, 0.03);
  EXPECT_EQ(r.loss, 1.7);
  EXPECT_EQ(r.cpu_available, 0.8);
  EXPECT_EQ(r.mem_available, 0.4);
}

TEST(ClockReportReaderTest, NoNaNOrNegativeFigureReachesThePolicy) {
  WireTable<wire::ClockDone> done([](flatbuffers::FlatBufferBuilder& f) {
    return wire::CreateClockDone(f, 12, 32, NAN, -1, INFINITY, -INFINITY, NAN,
                                 NAN, 7, 0, 0, 1, 0);
  });
  const ClockReport r = ReadClockReport(0, *done);
  EXPECT_EQ(r.compute_s, 0);
  EXPECT_EQ(r.push_s, 0);
  EXPECT_EQ(r.pull_s, 0);
  EXPECT_EQ(r.wait_s, 0);
  EXPECT_EQ(r.cpu_available, 1) << "NaN: nothing known";
  EXPECT_EQ(r.mem_available, 1) << "clamped to [0, 1]";
  EXPECT_TRUE(std::isnan(r.loss)) << "left for the ledger to leave out";
}

}  // namespace
}  // namespace lockstep
