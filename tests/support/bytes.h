// The bytes of a string, for APIs that take std::span<const std::byte>.
#ifndef LOCKSTEP_TESTS_SUPPORT_BYTES_H_
#define LOCKSTEP_TESTS_SUPPORT_BYTES_H_

#include <cstddef>
#include <span>
#include <string>

namespace lockstep {

inline std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text));
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_BYTES_H_
