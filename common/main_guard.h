// The binaries' main(): no exception is meant to escape a role (errors are
// Status values), but a bug or an allocation failure must still end the
// process with one line saying what happened and exit status 1, not a bare
// std::terminate.
// Thread-safety: call once, from main().
#ifndef LOCKSTEP_COMMON_MAIN_GUARD_H_
#define LOCKSTEP_COMMON_MAIN_GUARD_H_

#include <cstdio>
#include <exception>

namespace lockstep {

// Runs run(argc, argv) and returns its exit status; an exception that
// escapes it is printed as "<program>: internal error: <what>" and gives 1.
inline int GuardedMain(const char* program, int (*run)(int, char**), int argc,
                       char** argv) noexcept {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: internal error: unknown exception\n", program);
  }
  return 1;
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_MAIN_GUARD_H_
