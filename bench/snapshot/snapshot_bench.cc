#include "bench/snapshot/snapshot_bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/prefaulted.h"
#include "optimizers/optimizer.h"
#include "server/model/dense_store.h"
#include "server/snapshot/shard_restore.h"
#include "server/snapshot/shard_round.h"
#include "server/store/rocksdb_store.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

struct BenchShard {
  std::unique_ptr<DenseStore> dense;
  std::unique_ptr<RocksDbStore> store;
  std::unique_ptr<SnapshotCapture> capture;
  std::unique_ptr<SnapshotCapture> spare;  // its buffers go to the next
  std::vector<float> grad;
  std::thread writer;
  double write_start = 0, write_end = 0;
  Status written;
};

struct SizeResult {
  uint64_t params = 0;
  std::vector<double> pause_ms, apply_ms, apply_during_ms, write_mbps;
  uint64_t round_bytes = 0, copied_on_apply = 0, chunks = 0;
  double raw_write_mbps = 0, restore_mbps = 0, raw_read_mbps = 0;
  // A restore into arrays that exist already (a surviving server's
  // rollback), and the rate at which this machine hands out fresh memory
  // (allocate and write once), the other bound of a restore into new
  // arrays.
  double restore_kept_mbps = 0, fresh_memory_mbps = 0;
  double restore_s = 0;
  bool restored_exactly = false;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto at =
      static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(at, v.size() - 1)];
}

// Drops the page cache of every file under `dir`, so reads hit the disk.
void DropCache(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const int fd = open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

// Runs `body(i)` for i in [0, n) on n threads; returns the wall seconds.
template <typename Body>
double Parallel(uint32_t n, Body body) {
  const double start = NowSeconds();
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < n; ++i) threads.emplace_back([&, i] { body(i); });
  for (auto& t : threads) t.join();
  return NowSeconds() - start;
}

Status RawWrite(const std::string& path, std::span<const std::byte> block,
                uint64_t bytes) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IOError("cannot create " + path);
  for (uint64_t done = 0; done < bytes;) {
    const size_t n = std::min<uint64_t>(block.size(), bytes - done);
    const ssize_t w = write(fd, block.data(), n);
    if (w <= 0) {
      close(fd);
      return IOError("cannot write " + path);
    }
    done += static_cast<uint64_t>(w);
  }
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok ? Status::Ok() : IOError("cannot sync " + path);
}

uint64_t RawRead(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::vector<char> buf(8u << 20);
  uint64_t total = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) total += n;
  close(fd);
  return total;
}

void StartRound(BenchShard& s, uint64_t round, const ShardRoundMeta& base,
                size_t chunk_bytes, SizeResult* result) {
  if (s.writer.joinable()) s.writer.join();
  if (s.capture) {
    result->copied_on_apply += s.capture->chunks_copied_by_mutator();
    s.spare = std::move(s.capture);  // as the shard does once it is written
  }
  // The pause: what a shard's loop does on SnapshotStart.
  const double start = NowSeconds();
  s.capture = std::make_unique<SnapshotCapture>(s.dense->SnapshotArrays(),
                                                chunk_bytes, s.spare.get());
  s.spare.reset();
  s.dense->WatchCapture(s.capture.get(), 0);
  result->pause_ms.push_back((NowSeconds() - start) * 1e3);
  result->chunks += s.capture->chunks();
  ShardRoundMeta meta = base;
  meta.round = round;
  meta.step = s.dense->step();
  s.writer = std::thread([&s, meta] {
    s.write_start = NowSeconds();
    s.capture->Run();
    s.written = WriteShardRound(*s.store, meta, *s.capture);
    if (s.written.ok() && meta.round > 1) {
      s.written = s.store->DeleteRound(meta.round - 1);
    }
    s.write_end = NowSeconds();
  });
}

// One model size: shards set up, trained with rounds, the disk measured,
// the last round restored.
class SizeRun {
 public:
  SizeRun(const SnapshotBenchOptions& o, uint64_t params, std::string dir)
      : o_(o), dir_(std::move(dir)) {
    r_.params = params;
  }

  ~SizeRun() {
    for (BenchShard& s : shards_) {
      if (s.writer.joinable()) s.writer.join();
    }
  }
  SizeRun(const SizeRun&) = delete;
  SizeRun& operator=(const SizeRun&) = delete;

  StatusOr<SizeResult> Run() {
    LS_RETURN_IF_ERROR(SetUp());
    LS_RETURN_IF_ERROR(TrainWithRounds());
    LS_RETURN_IF_ERROR(MeasureDisk());
    LS_RETURN_IF_ERROR(MeasureRestore());
    return r_;
  }

 private:
  Status SetUp() {
    LS_ASSIGN_OR_RETURN(
        layout_, KeyLayout::Build(
                     {{.name = "w", .shape = {r_.params}, .init_scale = 0.05f}},
                     o_.shards, 0));
    OptimizerConfig adam;
    adam.name = "adam";
    LS_ASSIGN_OR_RETURN(adam_, Optimizer::Create(adam));
    shards_ = std::vector<BenchShard>(o_.shards);
    for (uint32_t k = 0; k < o_.shards; ++k) {
      BenchShard& s = shards_[k];
      const KeySpan range = layout_.shards()[k].dense;
      LS_ASSIGN_OR_RETURN(s.dense,
                          DenseStore::Create(range, layout_.tensors(), 7, 2));
      LS_ASSIGN_OR_RETURN(
          s.store, RocksDbStore::Open(dir_ + "/shard-" + std::to_string(k)));
      s.grad.resize(range.size());
      for (size_t i = 0; i < s.grad.size(); ++i) {
        s.grad[i] = 1e-3f * static_cast<float>(i % 101) - 0.05f;
      }
    }
    for (BenchShard& s : shards_) LS_RETURN_IF_ERROR(Apply(s));  // warm-up
    r_.apply_ms.clear();
    return Status::Ok();
  }

  Status Apply(BenchShard& s) {
    const bool during = s.capture != nullptr && !s.capture->Done();
    const double start = NowSeconds();
    const int64_t step = s.dense->step() + 1;
    LS_RETURN_IF_ERROR(s.dense->ApplyGradient(s.dense->range(), s.grad.data(),
                                              *adam_, 1e-3, step));
    s.dense->set_step(step);
    (during ? r_.apply_during_ms : r_.apply_ms)
        .push_back((NowSeconds() - start) * 1e3);
    return Status::Ok();
  }

  Status TrainWithRounds() {
    ShardRoundMeta base;
    base.layout = layout_;
    base.optimizer = "adam";
    base.state_slots = 2;
    for (uint64_t round = 1; round <= o_.rounds; ++round) {
      for (uint32_t k = 0; k < o_.shards; ++k) {
        base.shard = k;
        StartRound(shards_[k], round, base, o_.chunk_bytes, &r_);
      }
      for (uint32_t c = 0; c < o_.clocks_per_round; ++c) {
        for (BenchShard& s : shards_) LS_RETURN_IF_ERROR(Apply(s));
      }
      double first = 1e300, last = 0;
      uint64_t bytes = 0;
      for (BenchShard& s : shards_) {
        s.writer.join();
        LS_RETURN_IF_ERROR(s.written);
        first = std::min(first, s.write_start);
        last = std::max(last, s.write_end);
        LS_ASSIGN_OR_RETURN(const uint64_t b, s.store->RoundBytes(round));
        bytes += b;
      }
      r_.round_bytes = bytes;
      r_.write_mbps.push_back(static_cast<double>(bytes) / 1e6 /
                              (last - first));
    }
    for (BenchShard& s : shards_) {
      r_.copied_on_apply += s.capture->chunks_copied_by_mutator();
    }
    return Status::Ok();
  }

  // The disk's own rates: the same bytes, as many writers and readers.
  Status MeasureDisk() {
    const uint64_t per_shard = r_.round_bytes / o_.shards;
    std::vector<Status> raw(o_.shards);
    const double write_s = Parallel(o_.shards, [&](uint32_t k) {
      const auto weights = shards_[k].dense->weights();
      raw[k] = RawWrite(RawPath(k),
                        std::as_bytes(weights.first(
                            std::min<size_t>(weights.size(), 2u << 20))),
                        per_shard);
    });
    for (const Status& s : raw) LS_RETURN_IF_ERROR(s);
    r_.raw_write_mbps = static_cast<double>(r_.round_bytes) / 1e6 / write_s;
    DropCache(dir_);
    std::vector<uint64_t> read(o_.shards);
    const double read_s =
        Parallel(o_.shards, [&](uint32_t k) { read[k] = RawRead(RawPath(k)); });
    uint64_t total = 0;
    for (uint64_t b : read) total += b;
    r_.raw_read_mbps = static_cast<double>(total) / 1e6 / read_s;
    return Status::Ok();
  }

  // Restores the last round into fresh stores, every shard at once, and
  // checks the weights against the round's image; then again into the
  // same stores. Measures fresh memory first.
  Status MeasureRestore() {
    MeasureFreshMemory();
    std::vector<std::unique_ptr<DenseStore>> fresh(o_.shards);
    double seconds = 0;
    uint64_t bytes = 0;
    LS_RETURN_IF_ERROR(RestoreInto(&fresh, &seconds, &bytes));
    r_.restore_s = seconds;
    r_.restore_mbps = static_cast<double>(bytes) / 1e6 / seconds;
    r_.restored_exactly = SameAsTheRound(fresh);
    LS_RETURN_IF_ERROR(RestoreInto(&fresh, &seconds, &bytes));
    r_.restore_kept_mbps = static_cast<double>(bytes) / 1e6 / seconds;
    r_.restored_exactly &= SameAsTheRound(fresh);
    return Status::Ok();
  }

  // Whether `stores` hold the weights of the round's image, byte for byte.
  bool SameAsTheRound(
      const std::vector<std::unique_ptr<DenseStore>>& stores) const {
    bool same = true;
    for (uint32_t k = 0; k < o_.shards; ++k) {
      const auto image = shards_[k].capture->image(0);
      const auto got = std::as_bytes(stores[k]->weights());
      same &= std::equal(image.begin(), image.end(), got.begin(), got.end());
    }
    return same;
  }

  // Restores the last round into `stores` (created where null), the page
  // cache dropped first.
  Status RestoreInto(std::vector<std::unique_ptr<DenseStore>>* stores,
                     double* seconds, uint64_t* bytes) {
    DropCache(dir_);
    std::vector<const SnapshotStore*> sources;
    sources.reserve(shards_.size());
    for (BenchShard& s : shards_) sources.push_back(s.store.get());
    std::vector<StatusOr<RestoredShard>> restored(o_.shards,
                                                  Status(Internal("not run")));
    *seconds = Parallel(o_.shards, [&](uint32_t k) {
      std::unique_ptr<DenseStore>& store = (*stores)[k];
      if (store == nullptr) {
        auto created =
            DenseStore::Create(layout_.shards()[k].dense, layout_.tensors(), 7,
                               2, /*initialize=*/false);
        if (!created.ok()) {
          restored[k] = created.status();
          return;
        }
        store = std::move(created).value();
      }
      restored[k] = RestoreShard(sources, o_.rounds, layout_, k, "adam",
                                 store.get(), nullptr);
    });
    *bytes = 0;
    for (const auto& r : restored) {
      LS_RETURN_IF_ERROR(r.status());
      *bytes += r->bytes_read;
    }
    return Status::Ok();
  }

  // Fresh arrays of a round's size, allocated and written once per shard.
  void MeasureFreshMemory() {
    const size_t floats = r_.round_bytes / o_.shards / sizeof(float);
    const double seconds = Parallel(o_.shards, [&](uint32_t /*k*/) {
      PrefaultedVector<float> fresh(floats);
      std::fill(fresh.begin(), fresh.end(), 1.0f);
    });
    r_.fresh_memory_mbps = static_cast<double>(r_.round_bytes) / 1e6 / seconds;
  }

  std::string RawPath(uint32_t k) const {
    return dir_ + "/raw-" + std::to_string(k);
  }

  const SnapshotBenchOptions& o_;
  const std::string dir_;
  SizeResult r_;
  KeyLayout layout_;
  std::unique_ptr<Optimizer> adam_;
  std::vector<BenchShard> shards_;
};

}  // namespace

Status RunSnapshotBench(const SnapshotBenchOptions& o, std::ostream& out) {
  std::string root = o.dir;
  if (root.empty()) {
    root = (fs::temp_directory_path() /
            ("lockstep-snapshot-bench-" + std::to_string(getpid())))
               .string();
  }
  std::vector<SizeResult> results;
  for (uint64_t params : o.params) {
    const std::string dir = root + "/p" + std::to_string(params);
    fs::remove_all(dir);
    auto r = SizeRun(o, params, dir).Run();
    fs::remove_all(dir);
    LS_RETURN_IF_ERROR(r.status());
    results.push_back(std::move(r).value());
  }
  if (o.dir.empty()) fs::remove_all(root);
  char line[640];
  out << "# snapshot bench: dense model with Adam (weights + 2 state slots), "
      << o.shards << " shards in one process, " << o.rounds
      << " rounds, a round every " << o.clocks_per_round << " clocks, "
      << (o.chunk_bytes >> 10) << " KiB chunks; "
      << std::thread::hardware_concurrency() << " cores\n";
  out << "# params    | pause p50/p99 ms | clock apply p50 ms | pause p99 "
         "share | apply in round p50 ms | write MB/s | raw fsync MB/s | "
         "ratio | restore MB/s | raw read MB/s | ratio | fresh memory MB/s | "
         "restore s | into kept arrays MB/s | ratio | exact\n";
  for (const SizeResult& r : results) {
    const double apply = Percentile(r.apply_ms, 0.5);
    std::snprintf(
        line, sizeof(line),
        "%11llu | %7.3f / %6.3f | %18.1f | %15.5f | %21.1f | %10.0f | %14.0f "
        "| %5.2f | %12.0f | %13.0f | %5.2f | %17.0f | %9.2f | %21.0f | %5.2f "
        "| %s\n",
        static_cast<unsigned long long>(r.params), Percentile(r.pause_ms, 0.5),
        Percentile(r.pause_ms, 0.99), apply,
        Percentile(r.pause_ms, 0.99) / std::max(apply, 1e-9),
        Percentile(r.apply_during_ms, 0.5), Percentile(r.write_mbps, 0.5),
        r.raw_write_mbps, Percentile(r.write_mbps, 0.5) / r.raw_write_mbps,
        r.restore_mbps, r.raw_read_mbps, r.restore_mbps / r.raw_read_mbps,
        r.fresh_memory_mbps, r.restore_s, r.restore_kept_mbps,
        r.restore_kept_mbps / r.raw_read_mbps,
        r.restored_exactly ? "yes" : "NO");
    out << line;
  }
  for (const SizeResult& r : results) {
    out << "# " << r.params << " params: round " << r.round_bytes / 1e6
        << " MB; " << r.copied_on_apply << " of " << r.chunks
        << " chunks copied by the apply path (copy on write), the rest by "
           "the background thread\n";
  }
  return Status::Ok();
}

}  // namespace lockstep
