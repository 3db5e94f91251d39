#include "server/model/snapshot_capture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace lockstep {
namespace {

std::vector<float> Ramp(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

std::vector<float> ImageOf(const SnapshotCapture& capture, size_t array) {
  const auto bytes = capture.image(array);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(SnapshotCaptureTest, RunCopiesEveryArrayAsItIs) {
  std::vector<float> w = Ramp(1000, 1);
  std::vector<float> m = Ramp(1000, -5);
  SnapshotCapture capture(
      {{"w", std::as_bytes(std::span(w))}, {"m", std::as_bytes(std::span(m))}},
      /*chunk_bytes=*/256);
  EXPECT_EQ(capture.chunks(), 2u * 16);  // 4000 bytes in 256-byte chunks
  EXPECT_FALSE(capture.Done());
  capture.Run();
  ASSERT_TRUE(capture.Done());
  EXPECT_EQ(ImageOf(capture, 0), w);
  EXPECT_EQ(ImageOf(capture, 1), m);
  EXPECT_EQ(capture.name(1), "m");
  EXPECT_EQ(capture.chunks_copied_by_mutator(), 0u);
}

TEST(SnapshotCaptureTest, BeforeWriteCopiesOnlyTheChunksItTouches) {
  std::vector<float> w = Ramp(100, 0);  // 400 bytes: chunks of 64 bytes
  const std::vector<float> frozen = w;
  SnapshotCapture capture({{"w", std::as_bytes(std::span(w))}}, 64);
  // Floats 14..17 are bytes 56..72: chunks 0 and 1.
  capture.BeforeWrite(0, 14 * sizeof(float), 4 * sizeof(float));
  for (size_t i = 14; i < 18; ++i) w[i] = -1;
  EXPECT_EQ(capture.chunks_copied_by_mutator(), 2u);
  EXPECT_FALSE(capture.Done());
  capture.Run();
  EXPECT_EQ(ImageOf(capture, 0), frozen);
  EXPECT_EQ(capture.chunks_copied_by_mutator(), 2u);
}

// Which units changed since the recycled capture: what an incremental
// round stores.
std::vector<size_t> ChangedUnits(const SnapshotCapture& capture, size_t a) {
  std::vector<size_t> changed;
  for (size_t u = 0; u < capture.units(a); ++u) {
    if (capture.changed(a, u)) changed.push_back(u);
  }
  return changed;
}

TEST(SnapshotCaptureTest, ARecycledCaptureRecordsWhatChangedSinceIt) {
  std::vector<float> w = Ramp(100, 0);  // chunks of 64 bytes: 16 floats
  std::vector<uint64_t> ids = {5, 6, 7, 8};
  const auto arrays = [&] {
    return std::vector<CaptureArray>{
        {"w", std::as_bytes(std::span(w))},
        {"ids", std::as_bytes(std::span(ids)), sizeof(uint64_t)}};
  };
  SnapshotCapture first(arrays(), 64);
  first.Run();
  EXPECT_FALSE(first.compared(0));
  EXPECT_EQ(ChangedUnits(first, 0).size(), 7u);  // no basis: all changed
  w[20] = -1;                                    // chunk 1
  w[99] = -2;                                    // chunk 6 (the short last one)
  ids[2] = 70;                                   // row 2
  SnapshotCapture second(arrays(), 64, &first);
  // A write the mutator announces before the background copy: compared
  // and copied there.
  second.BeforeWrite(0, 0, sizeof(float));
  w[0] = 42;
  second.Run();
  EXPECT_TRUE(second.compared(0));
  EXPECT_EQ(ChangedUnits(second, 0), (std::vector<size_t>{1, 6}));
  EXPECT_EQ(ChangedUnits(second, 1), (std::vector<size_t>{2}));
  std::vector<float> frozen = w;
  frozen[0] = 0;
  EXPECT_EQ(ImageOf(second, 0), frozen);
  // The array grows past the recycled buffer: the old image is kept aside
  // as the basis, the new rows are changed, the old ones compared.
  ids.insert(ids.end(), {9, 10, 11, 12, 13, 14});
  ids[0] = 50;
  SnapshotCapture third(arrays(), 64, &second);
  third.Run();
  EXPECT_EQ(ChangedUnits(third, 0), (std::vector<size_t>{0}));
  EXPECT_EQ(ChangedUnits(third, 1), (std::vector<size_t>{0, 4, 5, 6, 7, 8, 9}));
  std::vector<uint64_t> image(ids.size());
  std::memcpy(image.data(), third.image(1).data(), third.image(1).size());
  EXPECT_EQ(image, ids);
}

TEST(SnapshotCaptureTest, AnUnfinishedRecycledCaptureIsNoBasis) {
  std::vector<float> w = Ramp(100, 0);
  SnapshotCapture first({{"w", std::as_bytes(std::span(w))}}, 64);
  SnapshotCapture second({{"w", std::as_bytes(std::span(w))}}, 64, &first);
  second.Run();
  EXPECT_FALSE(second.compared(0));
  EXPECT_EQ(ChangedUnits(second, 0).size(), 7u);
  EXPECT_EQ(ImageOf(second, 0), w);
}

TEST(SnapshotCaptureTest, CaptureAllAloneTakesTheWholeImage) {
  std::vector<float> w = Ramp(77, 3);  // not a multiple of the chunk
  const std::vector<float> frozen = w;
  SnapshotCapture capture({{"w", std::as_bytes(std::span(w))}}, 40);
  capture.CaptureAll();
  ASSERT_TRUE(capture.Done());
  w.assign(w.size(), 0);
  EXPECT_EQ(ImageOf(capture, 0), frozen);
  EXPECT_EQ(capture.chunks_copied_by_mutator(), capture.chunks());
}

TEST(SnapshotCaptureTest, EmptyArraysAreDoneAtOnce) {
  std::vector<float> none;
  SnapshotCapture capture({{"none", std::as_bytes(std::span(none))}}, 64);
  EXPECT_TRUE(capture.Done());
  capture.Wait();
  capture.Run();
  EXPECT_TRUE(capture.image(0).empty());
}

// The training thread rewrites random ranges as fast as it can while the
// background thread copies: the image is still the content at the freeze.
TEST(SnapshotCaptureTest, ImageIsTheFrozenStateWhileAnotherThreadWrites) {
  for (size_t chunk_bytes : {4u, 100u, 4096u, 1u << 20}) {
    std::vector<float> w = Ramp(300000, 0);
    std::vector<float> m = Ramp(300000, 0.5f);
    const std::vector<float> w0 = w;
    const std::vector<float> m0 = m;
    SnapshotCapture capture({{"w", std::as_bytes(std::span(w))},
                             {"m", std::as_bytes(std::span(m))}},
                            chunk_bytes);
    std::thread background([&] { capture.Run(); });
    std::mt19937_64 rng(chunk_bytes);
    for (int step = 0; step < 2000 && !capture.Done(); ++step) {
      const size_t begin = rng() % w.size();
      const size_t count = std::min<size_t>(1 + rng() % 5000, w.size() - begin);
      std::vector<float>& target = (step % 2 == 0) ? w : m;
      capture.BeforeWrite(step % 2, begin * sizeof(float),
                          count * sizeof(float));
      for (size_t i = begin; i < begin + count; ++i) target[i] += 1;
    }
    background.join();
    capture.Wait();
    EXPECT_EQ(ImageOf(capture, 0), w0) << "chunk " << chunk_bytes;
    EXPECT_EQ(ImageOf(capture, 1), m0) << "chunk " << chunk_bytes;
  }
}

TEST(SnapshotCaptureTest, WaitReturnsOnceAnotherThreadFinished) {
  std::vector<float> w = Ramp(1 << 16, 0);
  SnapshotCapture capture({{"w", std::as_bytes(std::span(w))}}, 1024);
  std::thread background([&] { capture.Run(); });
  capture.Wait();
  EXPECT_TRUE(capture.Done());
  EXPECT_EQ(ImageOf(capture, 0), w);
  background.join();
}

}  // namespace
}  // namespace lockstep
