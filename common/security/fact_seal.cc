#include "common/security/fact_seal.h"

#include <openssl/crypto.h>

#include <cstring>

#include "common/security/peer_ticket.h"

namespace lockstep {
namespace {

// A label with its terminating NUL, then each field's bytes
// (little-endian, fixed width): no fact's input is a prefix of another's.
class SealInput {
 public:
  explicit SealInput(const char* label)
      : bytes_(label, std::strlen(label) + 1) {}
  template <typename T>
  SealInput& Put(T value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(value));
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

std::string Truncated(std::string mac) {
  mac.resize(kFactSealBytes);
  return mac;
}

bool Same(const std::string& expected, std::string_view seal) {
  return seal.size() == expected.size() &&
         CRYPTO_memcmp(expected.data(), seal.data(), seal.size()) == 0;
}

}  // namespace

StatusOr<FactSeal> FactSeal::Create(const RoleKeys& keys) {
  LS_ASSIGN_OR_RETURN(std::string key, TicketKey(keys));
  return FactSeal(std::move(key));
}

std::string FactSeal::Seal(const AdmittedQuota& fact) const {
  const SealInput input = SealInput("lockstep admitted quota")
                              .Put(fact.rank)
                              .Put(fact.incarnation)
                              .Put(fact.clock)
                              .Put(fact.quota);
  return Truncated(HmacSha256(key_, input.bytes()));
}

std::string FactSeal::Seal(const PushVerdictFact& fact) const {
  const SealInput input = SealInput("lockstep push verdict")
                              .Put(fact.rank)
                              .Put(fact.incarnation)
                              .Put(fact.clock)
                              .Put(fact.shard)
                              .Put(static_cast<uint8_t>(fact.apply ? 1 : 0))
                              .Put(fact.staleness);
  return Truncated(HmacSha256(key_, input.bytes()));
}

bool FactSeal::Verifies(const AdmittedQuota& fact,
                        std::string_view seal) const {
  return Same(Seal(fact), seal);
}

bool FactSeal::Verifies(const PushVerdictFact& fact,
                        std::string_view seal) const {
  return Same(Seal(fact), seal);
}

}  // namespace lockstep
