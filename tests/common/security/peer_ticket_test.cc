#include "common/security/peer_ticket.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

namespace lockstep {
namespace {

// A fresh job's keys, by role.
std::map<KeyRole, RoleKeys> FreshJobKeys() {
  std::string dir =
      (std::filesystem::temp_directory_path() / "ticket-test-XXXXXX").string();
  EXPECT_NE(mkdtemp(dir.data()), nullptr);
  EXPECT_TRUE(WriteJobKeys(dir + "/keys", DataSecurity::kAuth).ok());
  std::map<KeyRole, RoleKeys> keys;
  for (KeyRole role : {KeyRole::kCoordinator, KeyRole::kServer,
                       KeyRole::kWorker, KeyRole::kAdmin}) {
    auto loaded = LoadRoleKeys(dir + "/keys/" + KeyFileName(role));
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    if (loaded.ok()) keys[role] = *loaded;
  }
  std::filesystem::remove_all(dir);
  return keys;
}

// The coordinator mints, a server checks: both compute one ticket key,
// from their own secret and the other's public key.
TEST(PeerTicketTest, TheCoordinatorAndTheServersShareOneTicketKey) {
  auto keys = FreshJobKeys();
  auto coordinator = TicketKey(keys[KeyRole::kCoordinator]);
  auto server = TicketKey(keys[KeyRole::kServer]);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().message();
  ASSERT_TRUE(server.ok()) << server.status().message();
  EXPECT_EQ(coordinator->size(), 32u);
  EXPECT_EQ(*coordinator, *server);
  // Another job's key is another key.
  auto other = TicketKey(FreshJobKeys()[KeyRole::kServer]);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *server);
}

TEST(PeerTicketTest, AWorkerOrAdminKeyCannotComputeIt) {
  auto keys = FreshJobKeys();
  for (KeyRole role : {KeyRole::kWorker, KeyRole::kAdmin}) {
    auto key = TicketKey(keys[role]);
    ASSERT_FALSE(key.ok());
    EXPECT_NE(key.status().message().find("cannot compute"), std::string::npos)
        << key.status().message();
  }
  // Nor does a worker key pretending to be a server's: it holds the
  // worker's secret, so its agreement is another value.
  RoleKeys posing = keys[KeyRole::kWorker];
  posing.role = KeyRole::kServer;
  auto wrong = TicketKey(posing);
  ASSERT_TRUE(wrong.ok());
  EXPECT_NE(*wrong, *TicketKey(keys[KeyRole::kServer]));
}

TEST(PeerTicketTest, EachTicketHasItsOwnSecretAndRoundTrips) {
  auto mint = TicketMint::Create(FreshJobKeys()[KeyRole::kCoordinator]);
  ASSERT_TRUE(mint.ok()) << mint.status().message();
  const PeerTicket a = mint->Mint(TicketRole::kWorker, 1);
  const PeerTicket again = mint->Mint(TicketRole::kWorker, 1);
  const PeerTicket b = mint->Mint(TicketRole::kWorker, 2);
  const PeerTicket e = mint->Mint(TicketRole::kEvaluator, 1);
  EXPECT_EQ(a.secret.size(), kTicketSecretBytes);
  // A new registration of the same rank is a new ticket.
  EXPECT_LT(a.incarnation, again.incarnation);
  for (const PeerTicket* t : {&again, &b, &e}) EXPECT_NE(t->secret, a.secret);
  auto decoded = PeerTicket::Decode(b.Encode());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->role, TicketRole::kWorker);
  EXPECT_EQ(decoded->rank, 2);
  EXPECT_EQ(decoded->incarnation, b.incarnation);
  EXPECT_TRUE(decoded->secret.empty());  // never sent
}

TEST(PeerTicketTest, MalformedTicketsAreRefused) {
  EXPECT_FALSE(PeerTicket::Decode("short").ok());
  PeerTicket t;
  std::string bytes = t.Encode();
  bytes[0] = 9;  // no such role
  auto bad = PeerTicket::Decode(bytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown role"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
