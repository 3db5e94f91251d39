#include "tools/snapshot/npy_file.h"

#include <fstream>

namespace lockstep {
namespace {

Status WriteBytes(const std::string& path, const std::string& header,
                  std::span<const std::byte> data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return IOError("cannot write " + path);
  return Status::Ok();
}

}  // namespace

std::string NpyHeader(const std::string& descr,
                      const std::vector<uint64_t>& shape) {
  std::string dims;
  for (uint64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(2, 5)"; "(6,)"
  if (shape.size() == 1) dims.resize(dims.size() - 1);
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n'.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

Status WriteNpy(const std::string& path, const std::vector<uint64_t>& shape,
                std::span<const float> values) {
  return WriteBytes(path, NpyHeader("<f4", shape), std::as_bytes(values));
}

Status WriteNpy(const std::string& path, const std::vector<uint64_t>& shape,
                std::span<const uint64_t> values) {
  return WriteBytes(path, NpyHeader("<u8", shape), std::as_bytes(values));
}

Status WriteRaw(const std::string& path, std::span<const float> values) {
  return WriteBytes(path, "", std::as_bytes(values));
}

}  // namespace lockstep
