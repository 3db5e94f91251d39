#include "tools/snapshot/whole_round.h"

#include <filesystem>

#include "server/model/dense_store.h"
#include "server/model/sparse_table.h"
#include "server/snapshot/shard_restore.h"

namespace lockstep {

std::string ShardStoreDir(const std::string& dir, uint32_t shard) {
  return (std::filesystem::path(dir) / ("shard-" + std::to_string(shard)))
      .string();
}

StatusOr<std::vector<std::unique_ptr<RocksDbStore>>> OpenShardStores(
    const std::string& dir) {
  std::vector<std::unique_ptr<RocksDbStore>> stores;
  for (uint32_t k = 0; std::filesystem::is_directory(ShardStoreDir(dir, k));
       ++k) {
    LS_ASSIGN_OR_RETURN(auto store,
                        RocksDbStore::OpenReadOnly(ShardStoreDir(dir, k)));
    stores.push_back(std::move(store));
  }
  if (stores.empty()) {
    return NotFound(dir + " holds no shard store (shard-0/)");
  }
  return stores;
}

StatusOr<WholeRound> LoadWholeRound(const std::string& dir, uint64_t round) {
  LS_ASSIGN_OR_RETURN(auto stores, OpenShardStores(dir));
  WholeRound whole;
  {
    LS_ASSIGN_OR_RETURN(const std::string bytes, stores[0]->ReadMeta(round));
    LS_ASSIGN_OR_RETURN(whole.meta, DecodeShardRoundMeta(bytes));
  }
  const KeyLayout& layout = whole.meta.layout;
  if (stores.size() < layout.num_shards()) {
    return NotFound("round " + std::to_string(round) + " was written by " +
                    std::to_string(layout.num_shards()) + " shards; " + dir +
                    " holds " + std::to_string(stores.size()) + " stores");
  }
  std::vector<const SnapshotStore*> sources;
  for (uint32_t k = 0; k < layout.num_shards(); ++k) {
    sources.push_back(stores[k].get());
  }
  LS_ASSIGN_OR_RETURN(
      const KeyLayout one,
      KeyLayout::Build(layout.tensors(), 1, layout.sparse_dim()));
  LS_ASSIGN_OR_RETURN(
      auto dense, DenseStore::Create(one.shards()[0].dense, one.tensors(), 1,
                                     whole.meta.state_slots,
                                     /*initialize=*/false));
  std::unique_ptr<SparseTable> sparse;
  if (one.sparse_dim() > 0) {
    sparse =
        std::make_unique<SparseTable>(one.sparse_dim(), whole.meta.state_slots);
  }
  LS_ASSIGN_OR_RETURN(const RestoredShard restored,
                      RestoreShard(sources, round, one, 0, whole.meta.optimizer,
                                   dense.get(), sparse.get()));
  whole.step = restored.step;
  whole.weights.assign(dense->weights().begin(), dense->weights().end());
  whole.state.assign(dense->state().begin(), dense->state().end());
  if (sparse != nullptr) {
    const size_t dim = sparse->dim();
    for (size_t r = 0; r < sparse->rows(); ++r) {
      std::vector<float>& row = whole.sparse[sparse->ids()[r]];
      const auto w = sparse->weights().subspan(r * dim, dim);
      row.assign(w.begin(), w.end());
      for (int s = 0; s < sparse->state_slots(); ++s) {
        const auto slot = sparse->state(s).subspan(r * dim, dim);
        row.insert(row.end(), slot.begin(), slot.end());
      }
    }
  }
  return whole;
}

}  // namespace lockstep
