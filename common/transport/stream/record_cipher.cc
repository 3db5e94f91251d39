#include "common/transport/stream/record_cipher.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>

namespace lockstep {
namespace {

constexpr int kNonceBytes = 12;

const unsigned char* Bytes(const char* p) {
  return reinterpret_cast<const unsigned char*>(p);
}
unsigned char* Bytes(char* p) { return reinterpret_cast<unsigned char*>(p); }

}  // namespace

StatusOr<std::unique_ptr<RecordCipher>> RecordCipher::Create(
    const std::string& key, Direction direction) {
  if (key.size() != kRecordKeyBytes) {
    return InvalidArgument("a record key has " + std::to_string(key.size()) +
                           " bytes, not " + std::to_string(kRecordKeyBytes));
  }
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return Internal("OpenSSL could not make a cipher");
  std::unique_ptr<RecordCipher> cipher(new RecordCipher(ctx, direction));
  const int ok = direction == Direction::kSeal
                     ? EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr,
                                          Bytes(key.data()), nullptr)
                     : EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr,
                                          Bytes(key.data()), nullptr);
  if (ok != 1) return Internal("OpenSSL refused the AES-256-GCM record key");
  return cipher;
}

RecordCipher::~RecordCipher() { EVP_CIPHER_CTX_free(ctx_); }

void RecordCipher::NextNonce() {
  unsigned char nonce[kNonceBytes] = {};
  std::memcpy(nonce + kNonceBytes - sizeof(counter_), &counter_,
              sizeof(counter_));
  ++counter_;
  const int ok =
      direction_ == Direction::kSeal
          ? EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce)
          : EVP_DecryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce);
  // The cipher and key were accepted at Create: only a broken OpenSSL
  // fails here, and a record must never go out under a stale nonce.
  if (ok != 1) std::abort();
}

void RecordCipher::Seal(std::string_view aad, const char* in, size_t size,
                        char* out, char* tag) {
  NextNonce();
  int len = 0;
  bool ok = true;
  if (!aad.empty()) {
    ok = EVP_EncryptUpdate(ctx_, nullptr, &len, Bytes(aad.data()),
                           static_cast<int>(aad.size())) == 1;
  }
  ok = ok && EVP_EncryptUpdate(ctx_, Bytes(out), &len, Bytes(in),
                               static_cast<int>(size)) == 1;
  ok = ok && EVP_EncryptFinal_ex(ctx_, Bytes(out) + len, &len) == 1;
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG,
                                 static_cast<int>(kRecordTagBytes), tag) == 1;
  if (!ok) std::abort();  // as in NextNonce: never send a record unsealed
}

bool RecordCipher::Open(std::string_view aad, char* data, size_t size,
                        const char* tag) {
  NextNonce();
  int len = 0;
  if (!aad.empty() && EVP_DecryptUpdate(ctx_, nullptr, &len, Bytes(aad.data()),
                                        static_cast<int>(aad.size())) != 1) {
    return false;
  }
  if (EVP_DecryptUpdate(ctx_, Bytes(data), &len, Bytes(data),
                        static_cast<int>(size)) != 1) {
    return false;
  }
  if (EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG,
                          static_cast<int>(kRecordTagBytes),
                          const_cast<char*>(tag)) != 1) {
    return false;
  }
  return EVP_DecryptFinal_ex(ctx_, Bytes(data) + len, &len) == 1;
}

}  // namespace lockstep
