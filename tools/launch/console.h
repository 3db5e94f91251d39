// Console: what the launcher shows on the terminal. Quiet by default: one
// progress line plus the roles' WARN/ERROR lines (and their unstructured
// stderr lines, which are usually crashes); with -v every role line. Each
// role line is prefixed with its role: "[worker 2] ...".
//
// On a TTY the progress line is redrawn in place with '\r' and cleared
// before any other line is printed; elsewhere (a file, a pipe, CI) it is
// printed as a plain line at most every `non_tty_period_s`.
// Thread-safety: not thread-safe; use from the launcher's thread.
#ifndef LOCKSTEP_TOOLS_LAUNCH_CONSOLE_H_
#define LOCKSTEP_TOOLS_LAUNCH_CONSOLE_H_

#include <cstdio>
#include <string>

#include "tools/launch/progress.h"

namespace lockstep {

class Console {
 public:
  // `out` gets the progress, the role lines and the summary; `err` gets the
  // launcher's own "lockstep-launch: ..." messages. Neither is owned.
  Console(std::FILE* out, std::FILE* err, bool tty, bool verbose,
          double non_tty_period_s = 5.0);

  // One line of the role labelled `label` ("worker 2"), shown if verbose
  // or if it is worth a quiet user's attention (see above).
  void RoleLine(const std::string& label, const std::string& text,
                bool from_stderr);
  // New progress at time `now_s` (any monotonic clock in seconds).
  void ShowProgress(const Progress& progress, double now_s);
  // "lockstep-launch: `text`" on err.
  void Message(const std::string& text);
  // `text` as a line on err, without the prefix.
  void ErrorLine(const std::string& text);
  // `text` as a line on out.
  void Print(const std::string& text);
  // Ends the progress display before the summary: on a TTY moves below the
  // progress line; elsewhere prints the last progress if it was held back.
  void FinishProgress();

  bool verbose() const { return verbose_; }

 private:
  // On a TTY: erases the progress line so another line can take its place.
  void ClearProgress();
  void DrawProgress();

  std::FILE* out_;
  std::FILE* err_;
  bool tty_;
  bool verbose_;
  double non_tty_period_s_;
  std::string progress_line_;
  bool progress_drawn_ = false;    // on a TTY: the line is on screen now
  bool progress_pending_ = false;  // elsewhere: newest line not yet printed
  double last_print_s_ = -1e300;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_CONSOLE_H_
