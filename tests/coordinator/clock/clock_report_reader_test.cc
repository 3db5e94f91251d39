#include "coordinator/clock/clock_report_reader.h"

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
  const ClockReport r = ReadClockReport(3, *done, 32);
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
  const ClockReport r = ReadClockReport(0, *done, 32);
  EXPECT_EQ(r.compute_s, 0);
  EXPECT_EQ(r.push_s, 0);
  EXPECT_EQ(r.pull_s, 0);
  EXPECT_EQ(r.wait_s, 0);
  EXPECT_EQ(r.cpu_available, 1) << "NaN: nothing known";
  EXPECT_EQ(r.mem_available, 1) << "clamped to [0, 1]";
  EXPECT_TRUE(std::isnan(r.loss)) << "left for the ledger to leave out";
}

// A worker that states a larger batch than its clock was admitted with
// (2^32-1: it would end an on-arrival job's budget at once) counts as
// admitted; a smaller one (a short last batch) as stated.
TEST(ClockReportReaderTest, ABatchAboveTheAdmittedQuotaCountsAsTheQuota) {
  WireTable<wire::ClockDone> lie([](flatbuffers::FlatBufferBuilder& f) {
    return wire::CreateClockDone(f, 12, 4294967295u, 0.5, 0, 0, 0, 1, 1, 1, 0,
                                 0, 1, 0);
  });
  EXPECT_EQ(ReadClockReport(1, *lie, 48).batch, 48u);
  WireTable<wire::ClockDone> short_batch([](flatbuffers::FlatBufferBuilder& f) {
    return wire::CreateClockDone(f, 12, 20, 0.5, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0);
  });
  EXPECT_EQ(ReadClockReport(1, *short_batch, 48).batch, 20u);
}

}  // namespace
}  // namespace lockstep
