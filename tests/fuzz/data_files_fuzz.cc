// The training data readers a worker points at a file (worker/data/): a
// LIBSVM file, and an IDX image/label pair (read through zlib, which takes
// an uncompressed file as is). The input's first byte picks the reader;
// for IDX the next two say where the image file ends and the label file
// begins. The bytes go to files in a folder of this process's own.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_target.h"
#include "worker/data/idx_loader.h"
#include "worker/data/libsvm_loader.h"

namespace lockstep {
namespace {

const std::string& Folder() {
  static const std::string* dir = [] {
    std::string t = "/tmp/lockstep-fuzz-data.XXXXXX";
    if (mkdtemp(t.data()) == nullptr) std::abort();
    return new std::string(t);
  }();
  return *dir;
}

void Write(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}

std::string Idx(uint8_t type, const std::vector<uint32_t>& dims,
                const std::string& body) {
  std::string out = {0, 0, static_cast<char>(type),
                     static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int b = 3; b >= 0; --b)
      out += static_cast<char>((d >> (8 * b)) & 0xff);
  }
  return out + body;
}

std::string IdxSeed(const std::string& images, const std::string& labels) {
  const auto split = static_cast<uint16_t>(images.size());
  std::string out = {1, static_cast<char>(split & 0xff),
                     static_cast<char>(split >> 8)};
  return out + images + labels;
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  const std::string images = Idx(8, {2, 2, 2},
                                 std::string("\x00\x10\x80\xff"
                                             "\x01\x02\x03\x04",
                                             8));
  const std::string labels = Idx(8, {2}, std::string("\x03\x09", 2));
  return {std::string(1, '\0') + "1 1:0.5 3:1.25\n-1 2:1e-3\n0 7:4\n",
          std::string(1, '\0') + "+1 1:1\n# comment\n1.0 10:-2.5 11:3\n",
          IdxSeed(images, labels)};
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto* bytes = reinterpret_cast<const char*>(data);
  const std::string& dir = lockstep::Folder();
  if (data[0] % 2 == 0) {
    const std::string path = dir + "/data.svm";
    lockstep::Write(path, bytes + 1, size - 1);
    (void)lockstep::LoadLibsvm(path, 0, 0);
    (void)lockstep::LoadLibsvm(path, 1, 2);
    return 0;
  }
  if (size < 3) return 0;
  const size_t split = std::min<size_t>(
      size - 3, static_cast<size_t>(data[1]) | (size_t{data[2]} << 8));
  const std::string images = dir + "/images", labels = dir + "/labels";
  lockstep::Write(images, bytes + 3, split);
  lockstep::Write(labels, bytes + 3 + split, size - 3 - split);
  (void)lockstep::ProbeIdxGz(images, labels);
  (void)lockstep::LoadIdxGz(images, labels, 0, 10);
  (void)lockstep::LoadIdxGz(images, labels, 1, 4);
  return 0;
}
