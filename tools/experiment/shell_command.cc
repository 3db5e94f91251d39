#include "tools/experiment/shell_command.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace lockstep {
namespace {

bool SafeInAShell(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

// `arg` in single quotes.
std::string Quoted(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    // A single-quoted word cannot hold a quote: close, escape it, reopen.
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

}  // namespace

std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), SafeInAShell)) {
    return arg;
  }
  return Quoted(arg);
}

std::string ShellCommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (size_t i = 0; i < argv.size(); ++i) {
    // An unquoted first word with '=' would be a variable assignment.
    const bool assignment = i == 0 && argv[i].find('=') != std::string::npos;
    line += (i == 0 ? "" : " ") +
            (assignment ? Quoted(argv[i]) : ShellQuote(argv[i]));
  }
  return line;
}

}  // namespace lockstep
