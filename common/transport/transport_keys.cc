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

const RoleKeys* InstalledTransportKeys() {
  const auto& keys = Installed();
  return keys ? &*keys : nullptr;
}

}  // namespace lockstep
