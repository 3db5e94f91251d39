#include "common/security/fact_seal.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace lockstep {
namespace {

// One fresh job's keys of `role`.
RoleKeys FreshKeys(KeyRole role) {
  std::string dir =
      (std::filesystem::temp_directory_path() / "seal-test-XXXXXX").string();
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  EXPECT_TRUE(WriteJobKeys(dir + "/keys", DataSecurity::kAuth).ok());
  auto loaded = LoadRoleKeys(dir + "/keys/" + KeyFileName(role));
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  std::filesystem::remove_all(dir);
  return loaded.ok() ? *loaded : RoleKeys{};
}

TEST(FactSealTest, OnlyTheCoordinatorAndServersSeal) {
  EXPECT_FALSE(FactSeal::Create(FreshKeys(KeyRole::kWorker)).ok());
  EXPECT_FALSE(FactSeal::Create(FreshKeys(KeyRole::kAdmin)).ok());
  EXPECT_TRUE(FactSeal::Create(FreshKeys(KeyRole::kServer)).ok());
}

// A quota sealed for one worker's push of one clock verifies for that one
// only: another rank, registration, clock or quota does not.
TEST(FactSealTest, AQuotaSealNamesItsWorkerClockAndQuota) {
  const FactSeal seal(std::string(32, 'k'));
  const AdmittedQuota fact{3, 77, 120, 64};
  const std::string sealed = seal.Seal(fact);
  EXPECT_EQ(sealed.size(), kFactSealBytes);
  EXPECT_TRUE(seal.Verifies(fact, sealed));
  for (AdmittedQuota other :
       {AdmittedQuota{2, 77, 120, 64}, AdmittedQuota{3, 78, 120, 64},
        AdmittedQuota{3, 77, 121, 64}, AdmittedQuota{3, 77, 120, 65}}) {
    EXPECT_FALSE(seal.Verifies(other, sealed));
  }
  std::string flipped = sealed;
  flipped[5] ^= 1;
  EXPECT_FALSE(seal.Verifies(fact, flipped));
  EXPECT_FALSE(seal.Verifies(fact, sealed.substr(0, 15)));
  EXPECT_FALSE(seal.Verifies(fact, ""));
  // Another job's key seals differently.
  EXPECT_FALSE(FactSeal(std::string(32, 'j')).Verifies(fact, sealed));
}

TEST(FactSealTest, AVerdictSealNamesItsShardVerdictAndStaleness) {
  const FactSeal seal(std::string(32, 'k'));
  const PushVerdictFact fact{1, 9, 40, 0, true, 2};
  const std::string sealed = seal.Seal(fact);
  EXPECT_TRUE(seal.Verifies(fact, sealed));
  PushVerdictFact dropped = fact;
  dropped.apply = false;
  PushVerdictFact fresher = fact;
  fresher.staleness = 0;
  PushVerdictFact shard1 = fact;
  shard1.shard = 1;
  for (const PushVerdictFact& other : {dropped, fresher, shard1}) {
    EXPECT_FALSE(seal.Verifies(other, sealed));
  }
  // A quota's seal is no verdict's, even over the same numbers.
  EXPECT_NE(seal.Seal(AdmittedQuota{1, 9, 40, 0}), sealed);
}

}  // namespace
}  // namespace lockstep
