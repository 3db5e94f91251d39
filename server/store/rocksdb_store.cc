#include "server/store/rocksdb_store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/mutex.h"
#include "snapshot_format/chunk_codec.h"

namespace lockstep {
namespace {

// Opening and closing a RocksDB instance touch process-wide lists inside
// RocksDB (its thread pools, the registry of open DBs), partly through
// template code compiled into our binary. They are rare (a store opens at a
// shard's start and after an I/O error), so the stores of one process take
// turns: two shards of an in-process job never open or close at once, and
// ThreadSanitizer sees the order (it cannot see RocksDB's own locks).
Mutex& LifecycleMutex() {
  static Mutex mu;
  return mu;
}

namespace fs = std::filesystem;

// Files a round writer builds before ingesting them; Open removes any a
// crashed writer left.
constexpr char kPendingPrefix[] = "lockstep-round-";
constexpr char kPendingSuffix[] = ".sst.pending";
// Chunks a restore asks RocksDB for at once.
constexpr uint32_t kChunksPerRead = 8;

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::Ok();
  const std::string message = what + ": " + s.ToString();
  if (s.IsNotFound()) return NotFound(message);
  if (s.IsCorruption()) return Corruption(message);
  if (s.IsInvalidArgument()) return InvalidArgument(message);
  return IOError(message);
}

rocksdb::Options StoreOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  // Parameters do not compress, and whole rounds are ingested and dropped
  // as files: nothing for compactions to do.
  options.compression = rocksdb::kNoCompression;
  options.disable_auto_compactions = true;
  options.paranoid_checks = true;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.keep_log_file_num = 2;
  return options;
}

void RemovePendingFiles(const std::string& path) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kPendingPrefix) && name.ends_with(kPendingSuffix)) {
      fs::remove(entry.path(), ec);
    }
  }
}

}  // namespace

// Builds the round's SST file beside the database and ingests it whole.
class RocksDbStore::Writer : public RoundWriter {
 public:
  Writer(RocksDbStore* store, uint64_t round)
      : store_(store),
        round_(round),
        file_(store->path_ + "/" + kPendingPrefix + std::to_string(round) +
              kPendingSuffix),
        sst_(rocksdb::EnvOptions(), StoreOptions()) {}

  ~Writer() override {
    if (!spent_) {
      std::error_code ec;
      fs::remove(file_, ec);
    }
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  Status Open() {
    return FromRocks(sst_.Open(file_),
                     "round " + std::to_string(round_) + ": creating " + file_);
  }

  Status AddChunk(std::string_view array, uint32_t index,
                  std::span<const std::byte> data) override {
    if (spent_) return FailedPrecondition("round writer already committed");
    LS_RETURN_IF_ERROR(order_.Next(array, index));
    return FromRocks(
        sst_.Put(ChunkKey(round_, array, index), EncodeChunk(data)),
        ChunkName(round_, array, index) + ": writing " + file_);
  }

  Status Commit(std::span<const std::byte> meta) override {
    if (spent_) return FailedPrecondition("round writer already committed");
    spent_ = true;
    const std::string what = "round " + std::to_string(round_);
    Status s = FromRocks(sst_.Put(MetaKey(round_), EncodeChunk(meta)),
                         what + ": writing " + file_);
    // Finish writes the index and footer and syncs the file.
    if (s.ok()) s = FromRocks(sst_.Finish(), what + ": finishing " + file_);
    if (s.ok()) {
      rocksdb::IngestExternalFileOptions ingest;
      ingest.move_files = true;           // link, not copy
      ingest.write_global_seqno = false;  // never rewrite the synced file
      s = FromRocks(store_->db_->IngestExternalFile({file_}, ingest),
                    what + ": ingesting " + file_);
    }
    std::error_code ec;
    fs::remove(file_, ec);  // ingested (linked) or failed: not needed
    return s;
  }

 private:
  RocksDbStore* const store_;
  const uint64_t round_;
  const std::string file_;
  rocksdb::SstFileWriter sst_;
  ChunkOrder order_;
  bool spent_ = false;
};

RocksDbStore::RocksDbStore(std::string path, std::unique_ptr<rocksdb::DB> db,
                           bool read_only)
    : path_(std::move(path)), db_(std::move(db)), read_only_(read_only) {}

RocksDbStore::~RocksDbStore() {
  MutexLock lock(&LifecycleMutex());
  db_.reset();
}

StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(
    const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return IOError("snapshot store " + path +
                   ": cannot create: " + ec.message());
  }
  RemovePendingFiles(path);
  rocksdb::DB* db = nullptr;
  {
    MutexLock lock(&LifecycleMutex());
    LS_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(StoreOptions(), path, &db),
                                 "snapshot store " + path));
  }
  return std::unique_ptr<RocksDbStore>(
      new RocksDbStore(path, std::unique_ptr<rocksdb::DB>(db), false));
}

StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::OpenReadOnly(
    const std::string& path) {
  rocksdb::Options options = StoreOptions();
  options.create_if_missing = false;
  rocksdb::DB* db = nullptr;
  {
    MutexLock lock(&LifecycleMutex());
    LS_RETURN_IF_ERROR(
        FromRocks(rocksdb::DB::OpenForReadOnly(options, path, &db),
                  "snapshot store " + path));
  }
  return std::unique_ptr<RocksDbStore>(
      new RocksDbStore(path, std::unique_ptr<rocksdb::DB>(db), true));
}

StatusOr<std::unique_ptr<RoundWriter>> RocksDbStore::BeginRound(
    uint64_t round) {
  if (read_only_) {
    return FailedPrecondition("snapshot store " + path_ + " is read-only");
  }
  LS_RETURN_IF_ERROR(ResumeAfterError());
  // A meta record, even a corrupted one, means the round is stored.
  const Status meta = ReadMeta(round).status();
  if (meta.ok() || meta.code() == StatusCode::kCorruption) {
    return FailedPrecondition("round " + std::to_string(round) +
                              " is already stored in " + path_);
  }
  if (meta.code() != StatusCode::kNotFound) return meta;
  auto writer = std::make_unique<Writer>(this, round);
  LS_RETURN_IF_ERROR(writer->Open());
  return std::unique_ptr<RoundWriter>(std::move(writer));
}

StatusOr<std::vector<uint64_t>> RocksDbStore::ListRounds() const {
  // From the files' key ranges, not their data: each round is one ingested
  // SST file (compactions are off) whose last key is the round's meta, so
  // a round whose data blocks are damaged is still listed (and reading it
  // names the bad chunk) instead of hiding every other round.
  LS_RETURN_IF_ERROR(CheckOpen());
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  std::vector<uint64_t> rounds;
  for (const rocksdb::LiveFileMetaData& f : files) {
    const std::optional<uint64_t> round = RoundOfKey(f.smallestkey);
    if (round && f.largestkey == MetaKey(*round)) rounds.push_back(*round);
  }
  std::sort(rounds.begin(), rounds.end());
  rounds.erase(std::unique(rounds.begin(), rounds.end()), rounds.end());
  return rounds;
}

StatusOr<std::string> RocksDbStore::Get(const std::string& key,
                                        const std::string& what) const {
  std::string out;
  LS_RETURN_IF_ERROR(Visit(key, what, [&](std::span<const std::byte> bytes) {
    out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Status::Ok();
  }));
  return out;
}

Status RocksDbStore::Visit(
    const std::string& key, const std::string& what,
    const std::function<Status(std::span<const std::byte>)>& use) const {
  LS_RETURN_IF_ERROR(CheckOpen());
  rocksdb::ReadOptions options;
  options.verify_checksums = true;
  options.fill_cache = false;  // a round is read once: keep no copy
  rocksdb::PinnableSlice value;
  const rocksdb::Status s =
      db_->Get(options, db_->DefaultColumnFamily(), key, &value);
  if (s.IsNotFound()) return NotFound(what + " is not stored in " + path_);
  LS_RETURN_IF_ERROR(FromRocks(s, what + " in " + path_));
  LS_ASSIGN_OR_RETURN(const std::string_view data,
                      VerifyChunk(value.ToStringView(), what + " in " + path_));
  return use(std::as_bytes(std::span(data)));
}

StatusOr<std::string> RocksDbStore::ReadMeta(uint64_t round) const {
  return Get(MetaKey(round), "round " + std::to_string(round) + " meta");
}

StatusOr<std::string> RocksDbStore::ReadChunk(uint64_t round,
                                              std::string_view array,
                                              uint32_t index) const {
  return Get(ChunkKey(round, array, index), ChunkName(round, array, index));
}

Status RocksDbStore::VisitChunk(
    uint64_t round, std::string_view array, uint32_t index,
    const std::function<Status(std::span<const std::byte>)>& use) const {
  return Visit(ChunkKey(round, array, index), ChunkName(round, array, index),
               use);
}

Status RocksDbStore::VisitChunks(
    uint64_t round, std::string_view array, uint32_t first, uint32_t last,
    const std::function<Status(uint32_t, std::span<const std::byte>)>& use)
    const {
  LS_RETURN_IF_ERROR(CheckOpen());
  rocksdb::ReadOptions options;
  options.verify_checksums = true;
  options.fill_cache = false;
  // A batch of neighbouring chunks in one MultiGet: RocksDB reads their
  // blocks of the round's SST file together instead of one request per
  // chunk. (An iterator would read ahead too, but its seek opens every
  // round's file, so one damaged round would fail the restore of another.)
  std::vector<std::string> keys;
  std::vector<rocksdb::Slice> slices;
  std::vector<rocksdb::PinnableSlice> values(kChunksPerRead);
  std::vector<rocksdb::Status> statuses(kChunksPerRead);
  for (uint64_t at = first; at <= last; at += kChunksPerRead) {
    const auto n = static_cast<uint32_t>(
        std::min<uint64_t>(kChunksPerRead, uint64_t{last} - at + 1));
    keys.clear();
    slices.clear();
    for (uint32_t k = 0; k < n; ++k) {
      keys.push_back(ChunkKey(round, array, static_cast<uint32_t>(at + k)));
    }
    for (const std::string& key : keys) slices.emplace_back(key);
    db_->MultiGet(options, db_->DefaultColumnFamily(), n, slices.data(),
                  values.data(), statuses.data(), /*sorted_input=*/true);
    for (uint32_t k = 0; k < n; ++k) {
      const auto index = static_cast<uint32_t>(at + k);
      const std::string what = ChunkName(round, array, index) + " in " + path_;
      if (statuses[k].IsNotFound()) return NotFound(what + " is not stored");
      LS_RETURN_IF_ERROR(FromRocks(statuses[k], what));
      LS_ASSIGN_OR_RETURN(const std::string_view data,
                          VerifyChunk(values[k].ToStringView(), what));
      LS_RETURN_IF_ERROR(use(index, std::as_bytes(std::span(data))));
      values[k].Reset();
    }
  }
  return Status::Ok();
}

StatusOr<uint64_t> RocksDbStore::RoundBytes(uint64_t round) const {
  const std::string begin = RoundPrefix(round);
  const std::string end = RoundPrefix(round + 1);
  LS_RETURN_IF_ERROR(CheckOpen());
  const rocksdb::Range range(begin, end);
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.include_files = true;
  uint64_t bytes = 0;
  LS_RETURN_IF_ERROR(
      FromRocks(db_->GetApproximateSizes(options, db_->DefaultColumnFamily(),
                                         &range, 1, &bytes),
                "sizing round " + std::to_string(round) + " in " + path_));
  return bytes;
}

Status RocksDbStore::ResumeAfterError() {
  // A failed write (a full disk under the WAL) stops every later write
  // until the error is cleared. Resume is OK at once when there was none;
  // otherwise RocksDB's own recovery polls the disk for seconds (Resume
  // says Busy meanwhile), so the store is reopened, which replays the WAL
  // and clears the error now, or fails while the disk is still full.
  if (db_ != nullptr && db_->Resume().ok()) return Status::Ok();
  MutexLock lock(&LifecycleMutex());
  db_.reset();
  rocksdb::DB* db = nullptr;
  LS_RETURN_IF_ERROR(
      FromRocks(rocksdb::DB::Open(StoreOptions(), path_, &db),
                "reopening snapshot store " + path_ + " after an I/O error"));
  db_.reset(db);
  return Status::Ok();
}

Status RocksDbStore::CheckOpen() const {
  if (db_ != nullptr) return Status::Ok();
  return IOError("snapshot store " + path_ +
                 " is closed: it could not be reopened after an I/O error");
}

bool RocksDbStore::FilesOverlap(const std::string& begin,
                                const std::string& end) const {
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  return std::any_of(files.begin(), files.end(), [&](const auto& f) {
    return f.smallestkey < end && f.largestkey >= begin;
  });
}

Status RocksDbStore::DeleteRound(uint64_t round) {
  if (read_only_) {
    return FailedPrecondition("snapshot store " + path_ + " is read-only");
  }
  const std::string begin = RoundPrefix(round);
  const std::string end = RoundPrefix(round + 1);
  const std::string what =
      "deleting round " + std::to_string(round) + " in " + path_;
  const rocksdb::Slice b(begin);
  const rocksdb::Slice e(end);
  LS_RETURN_IF_ERROR(ResumeAfterError());
  // Nothing stored: no tombstone either. A shard clears each new round's
  // number before writing it, and a tombstone there would make RocksDB
  // ingest the round's file into level 0 above it, where
  // DeleteFilesInRange never drops it: pruned rounds stayed on disk.
  if (!FilesOverlap(begin, end)) return Status::Ok();
  // A round is one ingested file: dropped outright when it lies below
  // level 0, its usual place.
  LS_RETURN_IF_ERROR(
      FromRocks(rocksdb::DeleteFilesInRange(db_.get(),
                                            db_->DefaultColumnFamily(), &b, &e),
                what));
  if (!FilesOverlap(begin, end)) return Status::Ok();
  // Otherwise (a level-0 file, a flushed tombstone) the range is deleted
  // and compacted away, which leaves no file behind.
  rocksdb::WriteOptions sync;
  sync.sync = true;
  LS_RETURN_IF_ERROR(FromRocks(
      db_->DeleteRange(sync, db_->DefaultColumnFamily(), begin, end), what));
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  return FromRocks(db_->CompactRange(compact, &b, &e), what);
}

}  // namespace lockstep
