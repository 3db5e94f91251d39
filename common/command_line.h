// The start every Lockstep binary shares: its flags parsed against its
// options, --help printed, a bad flag said in one line. (main_guard.h is
// the end they share.)
// Thread-safety: call from main().
#ifndef LOCKSTEP_COMMON_COMMAND_LINE_H_
#define LOCKSTEP_COMMON_COMMAND_LINE_H_

#include <boost/program_options.hpp>
#include <optional>
#include <string>

namespace lockstep {

// The exit status of a binary given flags it cannot use.
inline constexpr int kExitBadFlags = 2;

// Parses argc/argv against `options` into `vm`. Returns the exit status
// the binary `program` ends with now: 0 after printing the options for
// --help, kExitBadFlags after saying "<program>: <why>" on stderr for a
// flag it does not know or cannot parse; nullopt to go on.
std::optional<int> ParseCommandLine(
    int argc, char** argv,
    const boost::program_options::options_description& options,
    const std::string& program, boost::program_options::variables_map* vm);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_COMMAND_LINE_H_
