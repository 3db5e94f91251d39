#include "tools/snapshot/snapshot_tool.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include "snapshot_format/chunk_codec.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tools/snapshot/npy_file.h"
#include "tools/snapshot/whole_round.h"

namespace lockstep {
namespace {

std::string Utc(double unix_time) {
  const auto t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

// The manifest of `dir`, or an empty one when it has none.
StatusOr<SnapshotManifest> ManifestOf(const std::string& dir) {
  auto manifest = SnapshotManifest::Load(dir);
  if (manifest.status().code() == StatusCode::kNotFound) {
    return SnapshotManifest();
  }
  return manifest;
}

StatusOr<uint64_t> LatestCompleteRound(const std::string& dir) {
  LS_ASSIGN_OR_RETURN(const SnapshotManifest manifest, ManifestOf(dir));
  if (manifest.LatestComplete() == nullptr) {
    return NotFound(dir + " has no complete round in its manifest");
  }
  return manifest.LatestComplete()->round;
}

// File names for tensor names: anything but [A-Za-z0-9_.-] becomes '_'.
std::string FileName(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' &&
        c != '-') {
      c = '_';
    }
  }
  return name;
}

// The state of a round the stores hold but the manifest does not name:
// older than every recorded round, the manifest pruned it (its files are
// deleted when a server next writes a round; a server that died first
// leaves them); otherwise its writing was cut short.
std::string UnrecordedState(const SnapshotManifest& manifest, uint64_t round,
                            uint32_t holders, size_t shards) {
  const bool pruned =
      !manifest.rounds().empty() && round < manifest.rounds().front().round;
  if (!pruned) return "not recorded (cut short; never restored)";
  if (holders == shards) return "pruned (was complete; files not yet deleted)";
  return "pruned (on " + std::to_string(holders) + " of " +
         std::to_string(shards) + " shards; files not yet deleted)";
}

}  // namespace

Status ListSnapshots(const std::string& dir, std::ostream& out) {
  LS_ASSIGN_OR_RETURN(const SnapshotManifest manifest, ManifestOf(dir));
  LS_ASSIGN_OR_RETURN(auto stores, OpenShardStores(dir));
  std::set<uint64_t> rounds;
  for (const ManifestRound& r : manifest.rounds()) rounds.insert(r.round);
  for (const auto& store : stores) {
    LS_ASSIGN_OR_RETURN(const std::vector<uint64_t> stored,
                        store->ListRounds());
    rounds.insert(stored.begin(), stored.end());
  }
  out << "round  clock  time (UTC)            size       shards  state\n";
  for (uint64_t n : rounds) {
    const ManifestRound* r = manifest.Find(n);
    char line[128];
    if (r != nullptr) {
      std::snprintf(line, sizeof(line), "%5llu  %5lld  %s  %9s  %6u  ",
                    static_cast<unsigned long long>(n),
                    static_cast<long long>(r->clock), Utc(r->unix_time).c_str(),
                    Megabytes(r->bytes).c_str(), r->shards);
      out << line << (r->complete ? "complete" : "failed: " + r->error) << "\n";
      continue;
    }
    uint64_t bytes = 0;
    uint32_t holders = 0;
    for (const auto& store : stores) {
      auto size = store->RoundBytes(n);
      if (size.ok() && *size > 0) {
        bytes += *size;
        ++holders;
      }
    }
    std::snprintf(line, sizeof(line), "%5llu  %5s  %-20s  %9s  %6u  ",
                  static_cast<unsigned long long>(n), "?", "?",
                  Megabytes(bytes).c_str(), holders);
    out << line << UnrecordedState(manifest, n, holders, stores.size()) << "\n";
  }
  return Status::Ok();
}

Status InspectSnapshot(const std::string& dir, uint64_t round,
                       std::ostream& out) {
  if (round == 0) {
    LS_ASSIGN_OR_RETURN(round, LatestCompleteRound(dir));
  }
  LS_ASSIGN_OR_RETURN(auto stores, OpenShardStores(dir));
  LS_ASSIGN_OR_RETURN(const SnapshotManifest manifest, ManifestOf(dir));
  const ManifestRound* entry = manifest.Find(round);
  out << "round " << round << ": "
      << (entry == nullptr  ? "not recorded in the manifest"
          : entry->complete ? "complete"
                            : "failed: " + entry->error)
      << "\n";
  for (uint32_t k = 0; k < stores.size(); ++k) {
    auto shard = ReadShardRound(*stores[k], round);
    if (shard.status().code() == StatusCode::kNotFound) continue;
    LS_RETURN_IF_ERROR(shard.status());
    const ShardRoundMeta& m = shard->meta;
    if (k == 0) {
      out << "clock " << m.clock << ", step " << m.step << ", taken "
          << Utc(m.unix_time) << "\njob: model " << m.job.model << ", data "
          << m.job.data << ", sync " << m.job.sync << ", optimizer "
          << m.optimizer << " (" << m.state_slots << " state slots), lr "
          << m.job.lr << ", " << m.job.workers << " workers, "
          << m.layout.num_shards() << " servers\ntensors:\n";
      for (const TensorInfo& t : m.layout.tensors()) {
        std::string shape;
        for (uint64_t d : t.shape)
          shape += (shape.empty() ? "" : "x") + std::to_string(d);
        out << "  " << t.name << " [" << shape << "] keys [" << t.offset << ", "
            << t.offset + t.size << ")\n";
      }
      if (m.layout.sparse_dim() > 0) {
        out << "  sparse table, " << m.layout.sparse_dim() << " floats a row\n";
      }
    }
    const KeySpan keys = m.layout.shards()[m.shard].dense;
    out << "shard " << m.shard << ": keys [" << keys.begin << ", " << keys.end
        << "), " << m.sparse_rows << " sparse rows"
        << (m.parent == 0 ? std::string(", a full round")
                          : ", stored as the changes since round " +
                                std::to_string(m.parent))
        << "\n";
    for (const ShardRoundMeta::Array& a : m.arrays) {
      const std::string& bytes = shard->arrays.at(a.name);
      char crc[16];
      std::snprintf(crc, sizeof(crc), "%08x",
                    Crc32(std::as_bytes(std::span(bytes))));
      out << "  " << a.name << ": " << a.bytes << " bytes in " << a.chunks
          << " chunks, crc32 " << crc << "\n";
    }
  }
  return Status::Ok();
}

Status VerifySnapshots(const std::string& dir, uint64_t round,
                       std::ostream& out) {
  LS_ASSIGN_OR_RETURN(auto stores, OpenShardStores(dir));
  Status first_bad;
  uint64_t checked = 0;
  for (uint32_t k = 0; k < stores.size(); ++k) {
    std::vector<uint64_t> rounds = {round};
    if (round == 0) {
      LS_ASSIGN_OR_RETURN(rounds, stores[k]->ListRounds());
    }
    for (uint64_t n : rounds) {
      auto shard = ReadShardRound(*stores[k], n);
      if (shard.status().code() == StatusCode::kNotFound && round == 0) {
        continue;
      }
      ++checked;
      if (!shard.ok()) {
        out << "round " << n << " shard " << k
            << ": BAD: " << shard.status().message() << "\n";
        if (first_bad.ok()) first_bad = shard.status();
        continue;
      }
      uint64_t bytes = 0, chunks = 0;
      for (const auto& a : shard->meta.arrays) {
        bytes += a.bytes;
        chunks += a.chunks;
      }
      out << "round " << n << " shard " << k << ": ok (" << chunks
          << " chunks, " << Megabytes(bytes) << ")\n";
    }
  }
  if (!first_bad.ok()) return first_bad;
  if (checked == 0) return NotFound("no round to verify in " + dir);
  return Status::Ok();
}

Status ExportSnapshot(const std::string& dir, uint64_t round,
                      const std::string& out_dir, std::ostream& out) {
  if (round == 0) {
    LS_ASSIGN_OR_RETURN(round, LatestCompleteRound(dir));
  }
  LS_ASSIGN_OR_RETURN(const WholeRound whole, LoadWholeRound(dir, round));
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error)
    return IOError("cannot create " + out_dir + ": " + error.message());
  const auto path = [&](const std::string& file) {
    return (std::filesystem::path(out_dir) / file).string();
  };
  const std::span<const float> weights(whole.weights);
  for (const TensorInfo& t : whole.meta.layout.tensors()) {
    const auto values = weights.subspan(t.offset, t.size);
    LS_RETURN_IF_ERROR(
        WriteNpy(path(FileName(t.name) + ".npy"), t.shape, values));
    LS_RETURN_IF_ERROR(WriteRaw(path(FileName(t.name) + ".f32"), values));
    out << FileName(t.name) << ".npy, .f32: " << t.name << " (" << t.size
        << " floats)\n";
  }
  LS_RETURN_IF_ERROR(WriteRaw(path("model.f32"), weights));
  out << "model.f32: all " << weights.size() << " dense weights in key order\n";
  if (whole.meta.layout.sparse_dim() > 0) {
    const uint64_t dim = whole.meta.layout.sparse_dim();
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    for (const auto& [id, row] : whole.sparse) {
      ids.push_back(id);
      rows.insert(rows.end(), row.begin(),
                  row.begin() + static_cast<std::ptrdiff_t>(dim));
    }
    LS_RETURN_IF_ERROR(WriteNpy(path("sparse_ids.npy"), {ids.size()},
                                std::span<const uint64_t>(ids)));
    LS_RETURN_IF_ERROR(WriteNpy(path("sparse_weights.npy"), {ids.size(), dim},
                                std::span<const float>(rows)));
    out << "sparse_ids.npy, sparse_weights.npy: " << ids.size() << " rows of "
        << dim << "\n";
  }
  out << "exported round " << round << " (clock " << whole.meta.clock << ") to "
      << out_dir << "\n";
  return Status::Ok();
}

}  // namespace lockstep
