#include "common/transport/stream/record_cipher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

std::unique_ptr<RecordCipher> Cipher(char fill, RecordCipher::Direction d) {
  auto cipher = RecordCipher::Create(std::string(kRecordKeyBytes, fill), d);
  EXPECT_TRUE(cipher.ok()) << cipher.status().message();
  return cipher.ok() ? std::move(*cipher) : nullptr;
}

struct Sealed {
  std::string bytes;
  std::string tag = std::string(kRecordTagBytes, '\0');
};

Sealed SealNext(RecordCipher& sealer, const std::string& plain,
                std::string_view aad = {}) {
  Sealed out;
  out.bytes.resize(plain.size());
  sealer.Seal(aad, plain.data(), plain.size(), out.bytes.data(),
              out.tag.data());
  return out;
}

bool OpenNext(RecordCipher& opener, Sealed record, std::string* plain,
              std::string_view aad = {}) {
  const bool ok = opener.Open(aad, record.bytes.data(), record.bytes.size(),
                              record.tag.data());
  *plain = record.bytes;
  return ok;
}

TEST(RecordCipherTest, OpensWhatItSealedInOrderAndHidesIt) {
  auto sealer = Cipher('k', RecordCipher::Direction::kSeal);
  auto opener = Cipher('k', RecordCipher::Direction::kOpen);
  const std::vector<std::string> plains = {"", "x", std::string(70000, 'p'),
                                           "the model's weights"};
  for (const std::string& plain : plains) {
    Sealed record = SealNext(*sealer, plain, "aad");
    if (plain.size() > 4) {
      EXPECT_EQ(record.bytes.find(plain.substr(0, 5)), std::string::npos);
    }
    std::string opened;
    ASSERT_TRUE(OpenNext(*opener, record, &opened, "aad"));
    EXPECT_EQ(opened, plain);
  }
  EXPECT_EQ(sealer->records(), plains.size());
  EXPECT_EQ(opener->records(), plains.size());
}

// The same bytes sealed twice differ: each record has its own nonce.
TEST(RecordCipherTest, TheSameBytesSealTwoDifferentRecords) {
  auto sealer = Cipher('k', RecordCipher::Direction::kSeal);
  const std::string plain(64, 'w');
  EXPECT_NE(SealNext(*sealer, plain).bytes, SealNext(*sealer, plain).bytes);
}

TEST(RecordCipherTest, ATamperedRecordFailsItsTag) {
  const std::string plain(1000, 'g');
  for (const char* part : {"bytes", "tag", "aad"}) {
    auto sealer = Cipher('k', RecordCipher::Direction::kSeal);
    auto opener = Cipher('k', RecordCipher::Direction::kOpen);
    Sealed record = SealNext(*sealer, plain, "aad1");
    std::string aad = "aad1";
    if (std::string(part) == "bytes") record.bytes[500] ^= 1;
    if (std::string(part) == "tag") record.tag[3] ^= 0x80;
    if (std::string(part) == "aad") aad = "aad2";
    std::string opened;
    EXPECT_FALSE(OpenNext(*opener, record, &opened, aad)) << part;
  }
}

// The receiver's counter is the nonce: a record opened a second time, or
// one that overtook another, is opened under the wrong nonce.
TEST(RecordCipherTest, ReplayedAndReorderedRecordsFail) {
  auto sealer = Cipher('k', RecordCipher::Direction::kSeal);
  Sealed first = SealNext(*sealer, "first");
  Sealed second = SealNext(*sealer, "second");
  std::string opened;
  {
    auto opener = Cipher('k', RecordCipher::Direction::kOpen);
    ASSERT_TRUE(OpenNext(*opener, first, &opened));
    EXPECT_FALSE(OpenNext(*opener, first, &opened));  // replayed
  }
  {
    auto opener = Cipher('k', RecordCipher::Direction::kOpen);
    EXPECT_FALSE(OpenNext(*opener, second, &opened));  // reordered
  }
}

TEST(RecordCipherTest, AnotherKeyOpensNothing) {
  auto sealer = Cipher('k', RecordCipher::Direction::kSeal);
  auto opener = Cipher('o', RecordCipher::Direction::kOpen);
  std::string opened;
  EXPECT_FALSE(OpenNext(*opener, SealNext(*sealer, "weights"), &opened));
}

TEST(RecordCipherTest, RefusesAKeyOfTheWrongLength) {
  auto cipher = RecordCipher::Create("short", RecordCipher::Direction::kSeal);
  ASSERT_FALSE(cipher.ok());
  EXPECT_NE(cipher.status().message().find("5 bytes, not 32"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
