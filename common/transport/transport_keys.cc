#include "common/transport/transport_keys.h"

namespace lockstep {
namespace {

std::optional<RoleKeys>& Installed() {
  static std::optional<RoleKeys> keys;
  return keys;
}

}  // namespace

void InstallTransportKeys(std::optional<RoleKeys> keys) {
  Installed() = std::move(keys);
}

Status KeepTransportKeys(std::optional<RoleKeys> keys) {
  static bool kept = false;
  if (!kept) {
    InstallTransportKeys(std::move(keys));
    kept = true;
    return Status::Ok();
  }
  const RoleKeys* installed = InstalledTransportKeys();
  const bool same =
      keys ? installed != nullptr && installed->secret == keys->secret
           : installed == nullptr;
  if (same) return Status::Ok();
  return FailedPrecondition(
      "a process speaks with one job key: every Worker of it must be given "
      "the same keys (or security 'off')");
}

const RoleKeys* InstalledTransportKeys() {
  const auto& keys = Installed();
  return keys ? &*keys : nullptr;
}

StatusOr<std::shared_ptr<const FactSeal>> InstalledFactSeal() {
  const RoleKeys* keys = InstalledTransportKeys();
  if (keys == nullptr) return std::shared_ptr<const FactSeal>();
  LS_ASSIGN_OR_RETURN(FactSeal seal, FactSeal::Create(*keys));
  return std::make_shared<const FactSeal>(std::move(seal));
}

}  // namespace lockstep
