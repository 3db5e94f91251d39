// Small string helpers shared by the text parsers (hetero specs and
// profiles, batch and model flags, tool flags).
// Thread-safety: pure functions; safe to call from any thread.
#ifndef LOCKSTEP_COMMON_STRINGS_H_
#define LOCKSTEP_COMMON_STRINGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep {

// `text` without leading and trailing spaces, tabs, CRs and LFs; "" when it
// holds nothing else.
std::string TrimWhitespace(std::string_view text);

// `text` cut at every `separator`. Empty parts are kept ("a,,b" gives three
// parts, "" gives one empty part), so the result always has at least one
// part and joining it with `separator` gives back `text`.
std::vector<std::string> SplitString(std::string_view text, char separator);

// `parts` with `separator` between each two ("" for no parts): how every
// "(known: a, b, c)" list in an error message is written.
std::string JoinStrings(const std::vector<std::string>& parts,
                        std::string_view separator);

// The largest value ParseSizeList accepts (2^24), a sanity cap on batch
// sizes and layer widths.
inline constexpr uint32_t kMaxListedSize = 1u << 24;

// Parses `text` as comma-separated decimal sizes in [1, kMaxListedSize].
// An item that is empty or not such a size fails with InvalidArgument
// `bad_item` + " '<item>'". Items are cut as std::getline cuts them: ""
// gives an empty list and a single trailing comma is dropped, so callers
// that must reject those check for them.
StatusOr<std::vector<uint32_t>> ParseSizeList(const std::string& text,
                                              const std::string& bad_item);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_STRINGS_H_
