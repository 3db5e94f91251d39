// The direct transport's framing (common/transport/stream/stream_format.h)
// as a peer's bytes reach it: arbitrary bytes written into one end of a
// Unix-domain stream pair and read back by FrameReader until it says the
// stream closed, would block or is broken; each message it reassembles is
// verified as a receiver does. An input that starts with the sealed magic
// is read as an aead connection's stream, by a reader holding the key the
// sealed seeds were made with (so mutations reach the record and tag
// paths, not only the first tag check). Frames are reserved through an
// allocator that refuses more than 1 MiB (an honest reader closes the
// connection on a size it cannot reserve; here, so the fuzzer does not spend
// its time reserving gigabytes).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/record_cipher.h"
#include "common/wire/message.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

constexpr size_t kMaxInput = 1 << 16;  // what one write into the pair holds

// A well-formed stream of `frames`.
std::string Framed(const std::vector<std::string>& frames) {
  std::string out;
  auto put = [&](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  const uint32_t magic = kDirectMagic;
  const auto count = static_cast<uint32_t>(frames.size());
  put(&magic, 4);
  put(&count, 4);
  for (const std::string& f : frames) {
    const uint64_t size = f.size();
    put(&size, 8);
  }
  for (const std::string& f : frames) out += f;
  return out;
}

std::string Header() {
  const zmq::message_t h = MakeErrorHeader(wire::ErrorCode::BadRequest, "x", 1,
                                           wire::Role::Server, 0);
  return std::string(static_cast<const char*>(h.data()), h.size());
}

const std::string& FuzzKey() {
  static const std::string kKey(kRecordKeyBytes, 'f');
  return kKey;
}

std::unique_ptr<RecordCipher> FuzzCipher(RecordCipher::Direction d) {
  auto cipher = RecordCipher::Create(FuzzKey(), d);
  if (!cipher.ok()) std::abort();
  return std::move(*cipher);
}

// `frames` as a sealed stream's first message, as FrameWriter seals it.
std::string Sealed(const std::vector<std::string>& frames) {
  auto sealer = FuzzCipher(RecordCipher::Direction::kSeal);
  std::string out(8, '\0');
  const uint32_t word[2] = {kSealedMagic, static_cast<uint32_t>(frames.size())};
  std::memcpy(out.data(), word, sizeof(word));
  std::string sizes;
  for (const std::string& f : frames) {
    const uint64_t size = f.size();
    sizes.append(reinterpret_cast<const char*>(&size), sizeof(size));
  }
  auto seal = [&](std::string_view aad, const std::string& plain) {
    std::string record(plain.size() + kRecordTagBytes, '\0');
    sealer->Seal(aad, plain.data(), plain.size(), record.data(),
                 record.data() + plain.size());
    out += record;
  };
  seal(std::string_view(out.data(), 8), sizes);
  for (const std::string& f : frames) {
    for (size_t at = 0; at < f.size(); at += kSealedRecordBytes) {
      seal({}, f.substr(at, kSealedRecordBytes));
    }
  }
  return out;
}

StatusOr<zmq::message_t> SmallFrames(size_t size) {
  if (size > (1u << 20)) return InvalidArgument("frame over 1 MiB");
  return zmq::message_t(size);
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  const std::string header = Header();
  return {Framed({header}),
          Framed({header, std::string(40, 'p')}),
          Framed({header}) + Framed({header, std::string(3, 'q'), ""}),
          Framed({header, std::string(70000, 'r')}),
          Sealed({header}),
          Sealed({header, std::string(40, 'p'), ""}),
          Sealed({header, std::string(40000, 's')})};
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > lockstep::kMaxInput) return 0;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) std::abort();
  int buffer = 1 << 18;
  setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fds[0], data + written, size - written);
    if (n <= 0) std::abort();
    written += static_cast<size_t>(n);
  }
  close(fds[0]);
  fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  lockstep::FrameReader reader(lockstep::SmallFrames);
  uint32_t magic = 0;
  if (size >= sizeof(magic)) std::memcpy(&magic, data, sizeof(magic));
  if (magic == lockstep::kSealedMagic) {
    reader.Open(lockstep::FuzzCipher(lockstep::RecordCipher::Direction::kOpen));
  }
  while (true) {
    lockstep::Message msg;
    auto got = reader.Read(fds[1], &msg);
    if (!got.ok() || *got != lockstep::FrameReader::Result::kMessage) break;
    (void)lockstep::VerifyHeader(&msg);
  }
  close(fds[1]);
  return 0;
}
