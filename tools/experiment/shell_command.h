// An argv as one line a POSIX shell reads back as the same argv, so a
// printed command can be pasted as is: each argument that is not made of
// safe characters alone is single-quoted (an empty one as ''; a single
// quote inside as '\'').
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SHELL_COMMAND_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SHELL_COMMAND_H_

#include <string>
#include <vector>

namespace lockstep {

// `arg` as one shell word: unchanged when it is only letters, digits and
// characters no shell treats specially (@%+=:,./_-), else quoted.
std::string ShellQuote(const std::string& arg);

// The words of `argv`, each ShellQuote'd, joined by single spaces; the
// first is quoted also when it holds '=' (unquoted, an assignment).
std::string ShellCommandLine(const std::vector<std::string>& argv);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SHELL_COMMAND_H_
